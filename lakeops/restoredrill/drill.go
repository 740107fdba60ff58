package restoredrill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// Verdicts of a drill.
const (
	Passed = "PASSED"
	Failed = "FAILED"
)

// Snapshot summary keys of the restored copy: where it was restored from.
const (
	SummarySourceTable    = "connectd.restore.source-table"
	SummarySourceSnapshot = "connectd.restore.source-snapshot-id"
	SummarySourceMetadata = "connectd.restore.source-metadata"
)

// Options of one drill run.
type Options struct {
	// CheckOnly checks the copy an earlier restore left in the spare namespace (by a drill, or by a backup
	// tool that registered it there with the summary keys above) instead of restoring it again.
	CheckOnly bool
}

// Record is the evidence of one drill.
type Record struct {
	Verdict   string    `json:"verdict"`
	Reasons   []string  `json:"reasons"`
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
	Source    Place     `json:"source"`
	Restored  Place     `json:"restored"`
	Steps     []Step    `json:"steps"`
	// Contents compares the source snapshot's live rows with the restored copy's.
	Contents Contents `json:"contents"`
	// RebuiltRows are the rows the ClickHouse rebuild loaded from the restored copy.
	RebuiltRows int64             `json:"rebuilt_rows"`
	Reconcile   []ReconcileResult `json:"reconcile"`
	Queries     []QueryResult     `json:"queries"`
	// JSONPath and MarkdownPath are where the record was written.
	JSONPath     string `json:"-"`
	MarkdownPath string `json:"-"`
}

// Place is one side of the drill.
type Place struct {
	IcebergTable     string    `json:"iceberg_table"`
	MetadataLocation string    `json:"metadata_location"`
	SnapshotID       int64     `json:"snapshot_id"`
	SnapshotTime     time.Time `json:"snapshot_time,omitzero"`
	ClickHouseTable  string    `json:"clickhouse_table"`
	DataFiles        int       `json:"data_files"`
	DeleteFiles      int       `json:"delete_files"`
}

// Step is one timed step of the drill.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// Digest is a table's live rows in numbers: count and order-independent checksums (sum of FNV-1a 64
// hashes) of the keys and of the whole rows.
type Digest struct {
	Rows        int64  `json:"rows"`
	KeyChecksum string `json:"key_checksum"`
	RowChecksum string `json:"row_checksum"`
}

// Contents compares the two Iceberg copies.
type Contents struct {
	Source   Digest `json:"source"`
	Restored Digest `json:"restored"`
	Match    bool   `json:"match"`
	// MissingFiles are files the restored snapshot references that storage does not have.
	MissingFiles []string `json:"missing_files,omitempty"`
}

// ReconcileResult is one reconcile of the drill.
type ReconcileResult struct {
	Iceberg        string `json:"iceberg"`
	ClickHouse     string `json:"clickhouse"`
	Status         string `json:"status"`
	CutSnapshotID  int64  `json:"cut_snapshot_id"`
	Consistent     bool   `json:"consistent"`
	IcebergRows    int64  `json:"iceberg_rows"`
	ClickHouseRows int64  `json:"clickhouse_rows"`
	Mismatched     int    `json:"mismatched_rows"`
	Error          string `json:"error,omitempty"`
}

// QueryResult is a key query on both ClickHouse tables.
type QueryResult struct {
	Name             string   `json:"name"`
	SQL              string   `json:"sql"`
	SourceRows       int      `json:"source_rows"`
	RestoredRows     int      `json:"restored_rows"`
	SourceChecksum   string   `json:"source_checksum"`
	RestoredChecksum string   `json:"restored_checksum"`
	Match            bool     `json:"match"`
	Sample           []string `json:"sample"` // the source's first rows, as JSON
	Error            string   `json:"error,omitempty"`
}

// drill is one run in progress.
type drill struct {
	cfg  *Config
	opt  Options
	rec  *Record
	cat  catalog.Catalog
	src  *table.Table // the source as restored: the catalog's table, or the metadata file's
	snap *table.Snapshot
	rt   *table.Table // the restored copy
	keys []string
}

// Run runs a drill and writes its evidence record (JSON and Markdown) into the record directory. A
// failing step does not end the drill early where later steps can still say something: every failure is
// a reason of the FAILED verdict. The error is for a record that could not be written.
func Run(ctx context.Context, cfg *Config, opt Options) (*Record, error) {
	start := time.Now()
	d := &drill{cfg: cfg, opt: opt, rec: &Record{StartedAt: start.UTC(), Reasons: []string{}, Steps: []Step{}, Reconcile: []ReconcileResult{}, Queries: []QueryResult{}}}
	d.rec.Source.IcebergTable = cfg.Source.IcebergTable
	d.rec.Source.ClickHouseTable = cfg.Source.CH.Database + "." + cfg.Source.CHTable
	d.rec.Restored.IcebergTable = cfg.RestoredTable()
	d.rec.Restored.ClickHouseTable = cfg.CHDatabase + "." + cfg.Source.CHTable
	d.run(ctx)
	d.rec.Verdict = Passed
	if len(d.rec.Reasons) > 0 {
		d.rec.Verdict = Failed
	}
	d.rec.Seconds = time.Since(start).Seconds()
	return d.rec, d.rec.write(cfg.RecordDir)
}

func (d *drill) fail(format string, args ...any) {
	d.rec.Reasons = append(d.rec.Reasons, fmt.Sprintf(format, args...))
}

// step times fn; its error becomes a reason.
func (d *drill) step(name string, fn func() error) bool {
	start := time.Now()
	err := fn()
	s := Step{Name: name, Seconds: time.Since(start).Seconds()}
	if err != nil {
		s.Error = err.Error()
		d.fail("%s: %v", name, err)
	}
	d.rec.Steps = append(d.rec.Steps, s)
	return err == nil
}

func (d *drill) run(ctx context.Context) {
	cfg := d.cfg
	if !d.step("open source", func() error { return d.openSource(ctx) }) {
		return
	}
	if d.opt.CheckOnly {
		if !d.step("load restored copy", func() error { return d.loadRestored(ctx) }) {
			return
		}
	} else if !d.step("restore iceberg", func() error { return d.restore(ctx) }) {
		return
	}
	d.rec.Restored.MetadataLocation = d.rt.MetadataLocation()
	if s := d.rt.CurrentSnapshot(); s != nil {
		d.rec.Restored.SnapshotID = s.SnapshotID
	}
	d.step("check restored files", func() error { return d.checkFiles(ctx) })
	d.step("compare contents", func() error { return d.compareContents(ctx) })
	if !d.step("rebuild clickhouse", func() error { return d.withClickHouse(ctx, d.rebuild) }) {
		return
	}
	restored := d.restoredConfig()
	d.step("reconcile restored copies", func() error { return d.reconcile(ctx, restored) })
	vsSource := *restored
	vsSource.IcebergTable = cfg.Source.IcebergTable
	d.step("reconcile source iceberg with restored clickhouse", func() error { return d.reconcile(ctx, &vsSource) })
	if len(cfg.Queries) > 0 {
		d.step("key queries", func() error { return d.withClickHouse(ctx, d.queries) })
	}
}

func (d *drill) openSource(ctx context.Context) error {
	cfg := d.cfg
	cat, err := catalogx.Open(ctx, cfg.Source.CatalogName, cfg.Source.CatalogProps)
	if err != nil {
		return fmt.Errorf("iceberg catalog: %w", err)
	}
	d.cat = cat
	if d.src, err = cat.LoadTable(ctx, catalog.ToIdentifier(cfg.Source.IcebergTable)); err != nil {
		return fmt.Errorf("loading %s: %w", cfg.Source.IcebergTable, err)
	}
	if cfg.MetadataFile != "" {
		if d.src, err = table.NewFromLocation(ctx, d.src.Identifier(), cfg.MetadataFile, d.src.FS, nil); err != nil {
			return fmt.Errorf("reading metadata file %s: %w", cfg.MetadataFile, err)
		}
	}
	d.keys = cfg.Source.KeyColumns
	if len(d.keys) == 0 {
		sc := d.src.Schema()
		for _, id := range sc.IdentifierFieldIDs {
			if f, ok := sc.FindFieldByID(id); ok {
				d.keys = append(d.keys, f.Name)
			}
		}
	}
	d.rec.Source.MetadataLocation = d.src.MetadataLocation()
	return nil
}

// pickSnapshot sets the source snapshot: id, else the current one.
func (d *drill) pickSnapshot(id int64) error {
	d.snap = d.src.CurrentSnapshot()
	if id != 0 {
		d.snap = d.src.SnapshotByID(id)
	}
	if d.snap == nil {
		if id != 0 {
			return fmt.Errorf("%s has no snapshot %d (expired?)", d.cfg.Source.IcebergTable, id)
		}
		return fmt.Errorf("%s has no snapshot", d.cfg.Source.IcebergTable)
	}
	d.rec.Source.SnapshotID = d.snap.SnapshotID
	d.rec.Source.SnapshotTime = time.UnixMilli(d.snap.TimestampMs).UTC()
	var err error
	d.rec.Source.DataFiles, d.rec.Source.DeleteFiles, _, err = files(d.src, d.snap)
	return err
}

// restore creates the restored copy in the spare namespace (dropping the previous drill's copy and its
// files) and writes into it the live rows of the source snapshot, every delete applied, as new files.
func (d *drill) restore(ctx context.Context) error {
	if err := d.pickSnapshot(d.cfg.SnapshotID); err != nil {
		return err
	}
	ident := catalog.ToIdentifier(d.cfg.RestoredTable())
	ns := catalog.ToIdentifier(d.cfg.Namespace)
	if ok, err := d.cat.CheckNamespaceExists(ctx, ns); err != nil {
		return err
	} else if !ok {
		if err := d.cat.CreateNamespace(ctx, ns, nil); err != nil {
			return fmt.Errorf("creating namespace %s: %w", d.cfg.Namespace, err)
		}
	}
	if old, err := d.cat.LoadTable(ctx, ident); err == nil {
		if h := old.CurrentSnapshot(); h != nil && (h.Summary == nil || h.Summary.Properties[SummarySourceTable] == "") {
			return fmt.Errorf("%s exists and is not a restored copy (its head names no %s): give a spare namespace", d.cfg.RestoredTable(), SummarySourceTable)
		}
		if err := d.cat.DropTable(ctx, ident); err != nil {
			return fmt.Errorf("dropping the previous restored copy %s: %w", d.cfg.RestoredTable(), err)
		}
		if err := removeLocation(ctx, old); err != nil {
			return fmt.Errorf("removing the files of the previous restored copy: %w", err)
		}
	}
	sc := d.src.Schema()
	if d.snap.SchemaID != nil {
		if s, ok := d.src.Schemas()[*d.snap.SchemaID]; ok {
			sc = s
		}
	}
	spec := d.src.Spec()
	rt, err := d.cat.CreateTable(ctx, ident, sc, catalog.WithPartitionSpec(&spec), catalog.WithProperties(maps.Clone(d.src.Properties())))
	if err != nil {
		return fmt.Errorf("creating %s: %w", d.cfg.RestoredTable(), err)
	}
	asc, it, err := d.src.Scan(table.WithSnapshotID(d.snap.SnapshotID)).ToArrowRecords(ctx)
	if err != nil {
		return fmt.Errorf("scanning %s at snapshot %d: %w", d.cfg.Source.IcebergTable, d.snap.SnapshotID, err)
	}
	// the restored copy says which Kafka offsets it holds
	props := icetable.OffsetsSummary(d.src, d.snap)
	props[SummarySourceTable] = d.cfg.Source.IcebergTable
	props[SummarySourceSnapshot] = fmt.Sprint(d.snap.SnapshotID)
	props[SummarySourceMetadata] = d.src.MetadataLocation()
	rdr := array.ReaderFromIter(asc, it)
	defer rdr.Release()
	if d.rt, err = rt.Append(ctx, rdr, props); err != nil {
		return fmt.Errorf("writing %s: %w", d.cfg.RestoredTable(), err)
	}
	return nil
}

// loadRestored takes the copy already in the spare namespace and the source snapshot its summary names.
func (d *drill) loadRestored(ctx context.Context) error {
	var err error
	if d.rt, err = d.cat.LoadTable(ctx, catalog.ToIdentifier(d.cfg.RestoredTable())); err != nil {
		return fmt.Errorf("loading %s: %w", d.cfg.RestoredTable(), err)
	}
	head := d.rt.CurrentSnapshot()
	var id int64
	if head != nil && head.Summary != nil {
		fmt.Sscan(head.Summary.Properties[SummarySourceSnapshot], &id)
	}
	if id == 0 {
		return fmt.Errorf("%s does not say which source snapshot it restores (%s)", d.cfg.RestoredTable(), SummarySourceSnapshot)
	}
	return d.pickSnapshot(id)
}

// checkFiles opens every data and delete file the restored snapshot references.
func (d *drill) checkFiles(ctx context.Context) error {
	s := d.rt.CurrentSnapshot()
	if s == nil {
		return fmt.Errorf("%s has no snapshot", d.cfg.RestoredTable())
	}
	var paths []string
	var err error
	d.rec.Restored.DataFiles, d.rec.Restored.DeleteFiles, paths, err = files(d.rt, s)
	if err != nil {
		return err
	}
	fsys, err := d.rt.FS(ctx)
	if err != nil {
		return err
	}
	for _, p := range paths {
		f, err := fsys.Open(p)
		if err != nil {
			d.rec.Contents.MissingFiles = append(d.rec.Contents.MissingFiles, p)
			d.fail("restored copy: file %s cannot be read: %v", p, err)
			continue
		}
		_ = f.Close()
	}
	return nil
}

func (d *drill) compareContents(ctx context.Context) error {
	var err error
	if d.rec.Contents.Source, err = digest(ctx, d.src, d.snap.SnapshotID, d.keys); err != nil {
		return fmt.Errorf("reading the source: %w", err)
	}
	if d.rec.Contents.Restored, err = digest(ctx, d.rt, 0, d.keys); err != nil {
		return fmt.Errorf("reading the restored copy: %w", err)
	}
	c := &d.rec.Contents
	c.Match = c.Source == c.Restored
	if !c.Match {
		d.fail("restored copy differs from the source snapshot: rows %d vs %d, row checksum %s vs %s",
			c.Source.Rows, c.Restored.Rows, c.Source.RowChecksum, c.Restored.RowChecksum)
	}
	return nil
}

// restoredConfig is the reconcile/rebuild configuration of the restored copies.
func (d *drill) restoredConfig() *reconcile.Config {
	rc := *d.cfg.Source
	rc.IcebergTable = d.cfg.RestoredTable()
	ch := *rc.CH
	ch.Database = d.cfg.CHDatabase
	rc.CH = &ch
	rc.CHProps = maps.Clone(rc.CHProps)
	rc.CHProps["database"] = d.cfg.CHDatabase
	rc.CHGroup, rc.KafkaBootstrap, rc.LagTolerance = "", "", -1
	return &rc
}

// withClickHouse runs a step on a connection of its own to the source's ClickHouse server, which holds
// the spare database too.
func (d *drill) withClickHouse(ctx context.Context, step func(context.Context, *reconcile.ClickHouse) error) error {
	ch, err := reconcile.DialClickHouse(ctx, d.cfg.Source.CH, "connectd-restore-drill")
	if err != nil {
		return err
	}
	defer ch.Close()
	return step(ctx, ch)
}

// rebuild creates the spare ClickHouse table like the source one (and an empty exactly-once state table,
// when the source has one, for the rebuild to record the restored snapshot's offsets in) and loads it
// from the restored copy with connectd rebuild's library.
func (d *drill) rebuild(ctx context.Context, ch *reconcile.ClickHouse) error {
	src := d.cfg.Source
	q := reconcile.QuoteIdent
	spare := q(d.cfg.CHDatabase)
	stmts := []string{
		"CREATE DATABASE IF NOT EXISTS " + spare,
		"DROP TABLE IF EXISTS " + spare + "." + q(src.CHTable) + " SYNC",
		"CREATE TABLE " + spare + "." + q(src.CHTable) + " AS " + q(src.CH.Database) + "." + q(src.CHTable),
	}
	if src.CH.StateTable != "" {
		rows, err := ch.Rows(ctx, "SELECT CAST(toString(count()) AS Nullable(String)) FROM system.tables WHERE database = "+
			reconcile.QuoteString(src.CH.Database)+" AND name = "+reconcile.QuoteString(src.CH.StateTable), 1)
		if err != nil {
			return err
		}
		if rows[0][0] != "0" {
			stmts = append(stmts, "DROP TABLE IF EXISTS "+spare+"."+q(src.CH.StateTable)+" SYNC",
				"CREATE TABLE "+spare+"."+q(src.CH.StateTable)+" AS "+q(src.CH.Database)+"."+q(src.CH.StateTable))
		}
	}
	for _, s := range stmts {
		if err := ch.Exec(ctx, s); err != nil {
			return err
		}
	}
	opt, err := reconcile.ParseRebuildOptions(map[string]string{})
	if err != nil {
		return err
	}
	res, err := reconcile.Rebuild(ctx, d.restoredConfig(), opt, nil)
	if err != nil {
		return err
	}
	d.rec.RebuiltRows = res.Rows
	if c := d.rec.Contents.Source; c.RowChecksum != "" && res.Rows != c.Rows {
		d.fail("the rebuilt ClickHouse table has %d rows, the source snapshot %d", res.Rows, c.Rows)
	}
	return nil
}

func (d *drill) reconcile(ctx context.Context, rc *reconcile.Config) error {
	res := ReconcileResult{Iceberg: rc.IcebergTable, ClickHouse: rc.CH.Database + "." + rc.CHTable}
	r, err := reconcile.Run(ctx, rc)
	if err != nil {
		res.Error = err.Error()
		d.rec.Reconcile = append(d.rec.Reconcile, res)
		return err
	}
	res.Status, res.CutSnapshotID, res.Consistent = r.Status, r.Cut.SnapshotID, r.Cut.Consistent
	res.IcebergRows, res.ClickHouseRows, res.Mismatched = r.Iceberg.Rows, r.ClickHouse.Rows, r.MismatchedRows
	d.rec.Reconcile = append(d.rec.Reconcile, res)
	if r.Status != reconcile.StatusClean {
		d.fail("reconcile %s vs %s: %s (%d mismatched rows)", res.Iceberg, res.ClickHouse, r.Status, r.MismatchedRows)
	}
	return nil
}

// queries runs each key query on the source and on the restored ClickHouse table and compares the rows.
func (d *drill) queries(ctx context.Context, ch *reconcile.ClickHouse) error {
	src := d.cfg.Source
	q := reconcile.QuoteIdent
	run := func(sql, tbl string) ([]string, error) {
		body := "SELECT CAST(formatRowNoNewline('JSONEachRow', *) AS Nullable(String)) FROM (" + strings.ReplaceAll(sql, "{table}", tbl) + ")"
		rows, err := ch.Rows(ctx, body, 1)
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = r[0]
		}
		return out, err
	}
	for _, qu := range d.cfg.Queries {
		res := QueryResult{Name: qu.Name, SQL: qu.SQL, Sample: []string{}}
		a, err := run(qu.SQL, q(src.CH.Database)+"."+q(src.CHTable))
		if err == nil {
			var b []string
			if b, err = run(qu.SQL, q(d.cfg.CHDatabase)+"."+q(src.CHTable)); err == nil {
				res.SourceRows, res.RestoredRows = len(a), len(b)
				res.SourceChecksum, res.RestoredChecksum = listChecksum(a), listChecksum(b)
				res.Match = strings.Join(a, "\n") == strings.Join(b, "\n")
				res.Sample = a[:min(len(a), 10)]
			}
		}
		if err != nil {
			res.Error = err.Error()
			d.fail("query %s: %v", qu.Name, err)
		} else if !res.Match {
			d.fail("query %s: the restored table answers %d rows (checksum %s), the source %d rows (checksum %s)", qu.Name,
				res.RestoredRows, res.RestoredChecksum, res.SourceRows, res.SourceChecksum)
		}
		d.rec.Queries = append(d.rec.Queries, res)
	}
	return nil
}

// listChecksum is an order-dependent checksum of a query's rows.
func listChecksum(rows []string) string {
	h := fnv.New64a()
	for _, r := range rows {
		h.Write([]byte(r))
		h.Write([]byte{'\n'})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// digest reads a table's live rows (all columns) as of snapshotID (0: current).
func digest(ctx context.Context, tbl *table.Table, snapshotID int64, keys []string) (Digest, error) {
	var n int64
	var kc, rc uint64
	for row, err := range icetable.LiveRows(ctx, tbl, snapshotID, nil) {
		if err != nil {
			return Digest{}, err
		}
		n++
		b, err := json.Marshal(row)
		if err != nil {
			return Digest{}, err
		}
		h := fnv.New64a()
		h.Write(b)
		rc += h.Sum64()
		h.Reset()
		for _, k := range keys {
			kb, _ := json.Marshal(row[k])
			h.Write(kb)
			h.Write([]byte{0})
		}
		kc += h.Sum64()
	}
	return Digest{Rows: n, KeyChecksum: fmt.Sprintf("%016x", kc), RowChecksum: fmt.Sprintf("%016x", rc)}, nil
}

// files counts the data and delete files a snapshot references and lists their paths.
func files(tbl *table.Table, s *table.Snapshot) (data, deletes int, paths []string, err error) {
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		return 0, 0, nil, err
	}
	ms, err := s.Manifests(fsys)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("manifests of snapshot %d: %w", s.SnapshotID, err)
	}
	for _, m := range ms {
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				return 0, 0, nil, fmt.Errorf("manifest %s: %w", m.FilePath(), err)
			}
			if e.DataFile().ContentType() == ice.EntryContentData {
				data++
			} else {
				deletes++
			}
			paths = append(paths, e.DataFile().FilePath())
		}
	}
	return data, deletes, paths, nil
}

// removeLocation deletes the files under a dropped table's location.
func removeLocation(ctx context.Context, tbl *table.Table) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	lfs, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return nil
	}
	var paths []string
	err = lfs.WalkDir(tbl.Location(), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
