package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// pair is everything a run needs of both layers once opened.
type pair struct {
	cfg     *Config
	lake    *lakeTable
	ch      *chConn
	chTable *chTable
	keys    []string
	cols    []mapping // compared, key columns first
	report  *Report
	// atOldSchema: the columns are those of the cut's snapshot, whose schema is not the table's current one
	atOldSchema bool
	iceVer      string
	chVer       string
	chDel       string
}

// open connects to both layers and decides the columns, keys and versions compared.
func open(ctx context.Context, cfg *Config) (*pair, error) {
	lake, err := openLake(ctx, cfg)
	if err != nil {
		return nil, err
	}
	conn, err := dialClickHouse(ctx, cfg.CH, "connectd-reconcile")
	if err != nil {
		return nil, err
	}
	p := &pair{cfg: cfg, lake: lake, ch: conn, report: &Report{IcebergTable: cfg.IcebergTable,
		ClickHouseTable: cfg.CH.Database + "." + cfg.CHTable, MismatchCounts: map[string]int{}}}
	if p.chTable, err = conn.describe(ctx, cfg.CH.Database, cfg.CHTable); err != nil {
		conn.Close()
		return nil, err
	}
	if err := p.decideColumns(); err != nil {
		conn.Close()
		return nil, err
	}
	return p, nil
}

func (p *pair) Close() { _ = p.ch.Close() }

func (p *pair) decideColumns() error {
	cfg, t := p.cfg, p.chTable
	p.keys = cfg.KeyColumns
	if len(p.keys) == 0 {
		p.keys = p.lake.identifierFields()
	}
	if len(p.keys) == 0 {
		return fmt.Errorf("%s is required: the Iceberg table has no identifier fields", KeyKeyColumns)
	}
	p.iceVer = cfg.IcebergVer
	if p.iceVer == "" {
		if _, ok := p.lake.field("_cdc_version"); ok {
			p.iceVer = "_cdc_version"
		}
	}
	p.chVer, p.chDel = cfg.CHVersion, cfg.CHDeleted
	if p.chVer == "" {
		p.chVer = t.version
	}
	if p.chDel == "" {
		p.chDel = t.deleted
	}
	if p.iceVer != "" {
		if _, ok := p.lake.field(p.iceVer); !ok && p.atOldSchema {
			if _, now := p.lake.tbl.Schema().FindFieldByName(p.iceVer); now {
				p.iceVer = "" // added after the cut: the cut's rows carry no version
			}
		}
	}
	if p.iceVer != "" {
		if _, ok := p.lake.field(p.iceVer); !ok {
			return fmt.Errorf("iceberg: %s has no column %q (%s)", p.cfg.IcebergTable, p.iceVer, KeyIcebergVersion)
		}
	}
	if p.chVer != "" {
		if _, ok := t.types[p.chVer]; !ok {
			return fmt.Errorf("clickhouse: %s has no column %q (%s)", p.report.ClickHouseTable, p.chVer, KeyCHVersion)
		}
	}
	p.report.Version = VersionInfo{Iceberg: p.iceVer, ClickHouse: p.chVer, Compared: p.iceVer != "" && p.chVer != ""}
	p.cols, p.report.Columns = nil, nil
	p.report.OnlyIceberg, p.report.OnlyClickHouse = nil, nil
	for _, c := range t.columns {
		if _, ok := p.lake.field(c); !ok && c != p.chVer && c != p.chDel && !slices.Contains(cfg.Exclude, c) {
			p.report.OnlyClickHouse = append(p.report.OnlyClickHouse, c)
		}
	}
	for _, f := range p.lake.schema.Fields() {
		if _, ok := t.types[f.Name]; !ok && f.Name != p.iceVer && !slices.Contains(cfg.Exclude, f.Name) {
			p.report.OnlyIceberg = append(p.report.OnlyIceberg, f.Name)
		}
	}
	names := cfg.Columns
	if len(names) == 0 {
		for _, c := range t.columns {
			if c == p.chVer || c == p.chDel {
				continue
			}
			if _, ok := p.lake.field(c); ok && c != p.iceVer {
				names = append(names, c)
			}
		}
	}
	ordered := slices.Clone(p.keys)
	for _, n := range names {
		if !slices.Contains(ordered, n) && !slices.Contains(cfg.Exclude, n) {
			ordered = append(ordered, n)
		}
	}
	for _, n := range ordered {
		f, ok := p.lake.field(n)
		if !ok && p.atOldSchema && !slices.Contains(p.keys, n) {
			if _, now := p.lake.tbl.Schema().FindFieldByName(n); now {
				continue // a column the table got after the cut: named in OnlyClickHouse
			}
		}
		if !ok {
			return fmt.Errorf("iceberg: %s has no column %q", cfg.IcebergTable, n)
		}
		ct, ok := t.types[n]
		if !ok {
			return fmt.Errorf("clickhouse: %s has no column %q", p.report.ClickHouseTable, n)
		}
		m := newMapping(n, f.Type, ct)
		p.report.Columns = append(p.report.Columns, m)
		if m.Skipped != "" {
			if slices.Contains(p.keys, n) {
				return fmt.Errorf("key column %s: %s", n, m.Skipped)
			}
			continue
		}
		p.cols = append(p.cols, m)
	}
	return nil
}

func (p *pair) bucketer() (bucketer, error) {
	b := bucketer{col: -1, buckets: p.cfg.Buckets, width: p.cfg.BucketWidth}
	if p.cfg.BucketColumn == "" {
		return b, nil
	}
	for i, c := range p.cols {
		if c.Name == p.cfg.BucketColumn {
			b.col, b.kind = i, c.kind
			return b, nil
		}
	}
	return b, fmt.Errorf("%s=%s is not a compared column", KeyBucketColumn, p.cfg.BucketColumn)
}

// keyText is the display form of a row's key: the value of a single key column, else col=value pairs.
func keyText(keys []string, texts []string) string {
	if len(keys) == 1 {
		return texts[0]
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + texts[i]
	}
	return strings.Join(parts, ",")
}

// readLake digests the Iceberg table's live rows as of snapshot.
func (p *pair) readLake(ctx context.Context, snapshotID int64, b bucketer) (*digest, error) {
	d := newDigest(p.cols)
	names := make([]string, 0, len(p.cols)+1)
	for _, c := range p.cols {
		names = append(names, c.Name)
	}
	if p.iceVer != "" {
		names = append(names, p.iceVer)
	}
	texts := make([]string, len(p.cols))
	for row, err := range icetable.LiveRows(ctx, p.lake.tbl, snapshotID, names) {
		if err != nil {
			return nil, err
		}
		for i, c := range p.cols {
			t, err := c.fromIceberg(row[c.Name])
			if err != nil {
				return nil, fmt.Errorf("iceberg: %w", err)
			}
			texts[i] = t
		}
		key := keyText(p.keys, texts[:len(p.keys)])
		ver := ""
		if p.iceVer != "" {
			ver = versionText(row[p.iceVer])
		}
		d.add(key, texts, ver, b.of(key, texts))
	}
	return d, nil
}

// readServe digests the ClickHouse table's current rows (FINAL, deleted rows hidden).
func (p *pair) readServe(ctx context.Context, b bucketer) (*digest, error) {
	d := newDigest(p.cols)
	exprs := make([]string, 0, len(p.cols)+1)
	for i, c := range p.cols {
		exprs = append(exprs, "CAST("+c.expr+" AS Nullable(String)) AS c"+fmt.Sprint(i))
	}
	if p.chVer != "" {
		exprs = append(exprs, "CAST(toString("+quoteIdent(p.chVer)+") AS Nullable(String)) AS c"+fmt.Sprint(len(p.cols)))
	} else {
		exprs = append(exprs, "CAST('' AS Nullable(String)) AS c"+fmt.Sprint(len(p.cols)))
	}
	sql := "SELECT " + strings.Join(exprs, ", ") + " FROM " + p.chTable.quoted()
	if p.chTable.replacing {
		sql += " FINAL"
	}
	if p.chDel != "" {
		sql += " WHERE " + quoteIdent(p.chDel) + " = 0"
	}
	texts := make([]string, len(p.cols))
	err := p.ch.query(ctx, sql, len(exprs), func(vals []string, nulls []bool) error {
		for i, c := range p.cols {
			t, err := c.fromClickHouse(vals[i], nulls[i])
			if err != nil {
				return err
			}
			texts[i] = t
		}
		key := keyText(p.keys, texts[:len(p.keys)])
		d.add(key, texts, vals[len(p.cols)], b.of(key, texts))
		return nil
	})
	return d, err
}

// Run reconciles once.
func Run(ctx context.Context, cfg *Config) (*Report, error) {
	start := time.Now()
	p, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	r := p.report
	r.StartedAt, r.KeyColumns = start.UTC(), p.keys
	chOff, chKnown, err := p.clickHouseOffsets(ctx)
	if err != nil {
		return nil, err
	}
	cut, snap, cutOff, err := chooseCut(p.lake, chOff, chKnown)
	if err != nil {
		return nil, err
	}
	r.Cut = cut
	if p.lake.useSchemaOf(snap) {
		// the snapshot was written with an older schema: compare the columns both layers have at the cut
		p.atOldSchema = true
		if err := p.decideColumns(); err != nil {
			return nil, err
		}
		r.Notes = append(r.Notes, fmt.Sprintf("the cut's snapshot has schema %d, the table's current one is %d: the columns of schema %d are compared", *snap.SchemaID, p.lake.tbl.Schema().ID, *snap.SchemaID))
	}
	b, err := p.bucketer()
	if err != nil {
		return nil, err
	}
	lake := newDigest(p.cols)
	if snap != nil {
		if lake, err = p.readLake(ctx, snap.SnapshotID, b); err != nil {
			return nil, err
		}
	}
	serve, err := p.readServe(ctx, b)
	if err != nil {
		return nil, err
	}
	if lake.duplicates > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("the Iceberg table holds %d keys more than once (not a current-state table for %s)", lake.duplicates, strings.Join(p.keys, ",")))
	}
	if serve.duplicates > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("the ClickHouse table holds %d keys more than once after FINAL (its ORDER BY is not %s)", serve.duplicates, strings.Join(p.keys, ",")))
	}
	if r.Version.Compared && !numericVersions(lake) {
		r.Version.Compared = false
		r.Notes = append(r.Notes, "the Iceberg versions are composite source positions: versions are not compared")
	}
	if !r.Version.Compared {
		blankVersions(lake)
		blankVersions(serve)
	}
	skip := map[string]bool{}
	if !cut.Consistent && chKnown && cfg.KafkaBootstrap != "" {
		ranges := inFlightRanges(cut, chOff, cutOff)
		if skip, err = inFlightKeys(ctx, cfg.KafkaBootstrap, ranges, p.keys); err != nil {
			return nil, err
		}
		r.InFlightKeys = len(skip)
	} else if !cut.Consistent && cut.LagRecords > 0 {
		r.Notes = append(r.Notes, "no consistent cut and no "+KeyKafkaBootstrap+": differences may be lag")
	}
	var list []Mismatch
	r.Iceberg, r.ClickHouse, r.Buckets, list, r.MismatchCounts = compareDigests(lake, serve, cfg.MaxKeys, skip)
	r.Mismatches = list
	for _, n := range r.MismatchCounts {
		r.MismatchedRows += n
	}
	switch {
	case r.MismatchedRows > 0:
		r.Status = StatusDrift
	case cfg.LagTolerance >= 0 && cut.LagRecords > cfg.LagTolerance:
		r.Status = StatusLag
	default:
		r.Status = StatusClean
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

func numericVersions(d *digest) bool {
	for _, r := range d.rows {
		for _, c := range r.version {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

func blankVersions(d *digest) {
	for _, r := range d.rows {
		r.version = ""
	}
}

// clickHouseOffsets is what the ClickHouse table holds: per partition, the next offset of the sink's
// exactly-once state (AFTER) or of its consumer group, whichever is further. The group offset covers
// records that wrote nothing (a tombstone after its delete), which leave the state where it was; the state
// covers blocks written before the group committed.
func (p *pair) clickHouseOffsets(ctx context.Context) (chOffsets, bool, error) {
	st, known, err := p.ch.stateOffsets(ctx, p.cfg.CH.Database, p.cfg.CHTable)
	if err != nil {
		return st, false, err
	}
	if p.cfg.CHGroup == "" {
		return st, known, nil
	}
	g, err := groupOffsets(p.cfg.KafkaBootstrap, p.cfg.CHGroup)
	if err != nil {
		return st, false, err
	}
	// The group may consume other topics into other tables: only the table's topics count (those of its
	// state rows and of the Iceberg table's offsets, or the topics property).
	topics := map[string]bool{}
	for _, t := range p.cfg.Topics {
		topics[t] = true
	}
	if len(topics) == 0 {
		for k := range st.next {
			topics[k.Topic] = true
		}
		head, err := p.lake.offsetsAt(p.lake.tbl.CurrentSnapshot())
		if err != nil {
			return st, false, err
		}
		for k := range head {
			topics[k.Topic] = true
		}
	}
	for k, n := range g {
		if !topics[k.Topic] {
			continue
		}
		if n > st.next[k] && !(st.inFlight[k] && n <= st.end[k]-1) {
			st.next[k] = n
			delete(st.inFlight, k)
		}
	}
	return st, true, nil
}
