package scd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// Snapshot summary properties of the SCD table: the history snapshot (and its sequence number)
// whose rows the SCD table holds, and the history table's UUID.
const (
	SummaryHistorySnapshot = "connectd.scd.history-snapshot-id"
	SummaryHistorySequence = "connectd.scd.history-sequence-number"
	SummaryHistoryUUID     = "connectd.scd.history-uuid"
)

// ErrHistoryReplaced is returned when the SCD table was built from another table of the same
// name: its position means nothing in this one.
var ErrHistoryReplaced = errors.New("scd: the history table was replaced since the SCD table was built")

// Position is how far the SCD table has read the history: every data file of the history with a
// data sequence number at or below Sequence has been materialized.
type Position struct {
	SnapshotID int64 `json:"snapshot_id"`
	Sequence   int64 `json:"sequence_number"`
}

// Report tells what one run did.
type Report struct {
	History     string   `json:"history"`
	Target      string   `json:"target"`
	From        Position `json:"from"` // zero: the first run
	To          Position `json:"to"`
	NewRows     int      `json:"new_history_rows"` // history rows added since From
	Keys        int      `json:"keys"`             // keys whose rows were rewritten
	RowsRead    int      `json:"rows_read"`        // history rows of those keys read
	RowsWritten int      `json:"rows_written"`
	DataFiles   int      `json:"data_files"`
	DeleteFiles int      `json:"delete_files"`
	SnapshotID  int64    `json:"snapshot_id,omitempty"` // the SCD snapshot committed, 0: none
	UpToDate    bool     `json:"up_to_date"`            // nothing new in the history
	Seconds     float64  `json:"seconds"`
}

// Plan is a run written but not committed: its files are in the table's location, referenced by
// nothing until Commit.
type Plan struct {
	Report
	tbl         *table.Table
	historyUUID string
	data, dels  []ice.DataFile
	start       time.Time
}

// Run plans and commits one incremental materialization.
func Run(ctx context.Context, cat catalog.Catalog, o Options) (Report, error) {
	p, err := PlanRun(ctx, cat, o)
	if err != nil {
		return p.report(), err
	}
	err = p.Commit(ctx)
	return p.report(), err
}

func (p *Plan) report() Report {
	if p == nil {
		return Report{}
	}
	r := p.Report
	if !p.start.IsZero() {
		r.Seconds = time.Since(p.start).Seconds()
	}
	return r
}

// PlanRun reads the history added since the SCD table's position, recomputes the intervals of
// the keys it touches from their whole history as of the history's current snapshot, and writes
// their rows and the equality deletes (on business_key) that remove their previous rows.
//
// Why equality deletes on the key rather than rewriting the files holding the keys' rows: a run
// then adds one delete file and as many data files as its rows need (one per target size), however
// many files the keys' old rows are spread over, and never rereads the SCD table; the delete files
// pile up until `connectd iceberg maintain` (or the connector's maintenance) compacts them.
func PlanRun(ctx context.Context, cat catalog.Catalog, o Options) (*Plan, error) {
	p := &Plan{start: time.Now()}
	p.History, p.Target = strings.Join(o.History, "."), strings.Join(o.Target, ".")
	if err := o.validate(); err != nil {
		return p, err
	}
	src := o.source()
	hist, err := cat.LoadTable(ctx, o.History)
	if err != nil {
		return p, fmt.Errorf("scd: history %s: %w", p.History, err)
	}
	p.historyUUID = hist.Metadata().TableUUID().String()
	tbl, err := loadOrCreate(ctx, cat, o)
	if err != nil {
		return p, err
	}
	p.tbl = tbl
	from, found, err := position(tbl, p.historyUUID)
	if err != nil {
		return p, err
	}
	p.From = from
	hs := hist.CurrentSnapshot()
	if hs == nil || (found && from.Sequence >= hs.SequenceNumber) {
		p.To, p.UpToDate = from, true
		return p, nil
	}
	p.To = Position{SnapshotID: hs.SnapshotID, Sequence: hs.SequenceNumber}

	cols := src.columns(o.Attributes, hist.Schema())
	scan := hist.Scan(table.WithSnapshotID(hs.SnapshotID), table.WithSelectedFields(cols...))
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return p, fmt.Errorf("scd: planning %s: %w", p.History, err)
	}
	var added []table.FileScanTask
	for _, t := range tasks {
		// a rewrite of the history (compaction) keeps or raises the sequence number of the rows it
		// moves: rows are reread, never skipped
		if !found || t.DataSequenceNumber == nil || *t.DataSequenceNumber > from.Sequence {
			added = append(added, t)
		}
	}
	byKey := map[string][]Event{}
	_, it, err := scan.ReadTasks(ctx, added)
	if err != nil {
		return p, fmt.Errorf("scd: reading %s: %w", p.History, err)
	}
	if err := readEvents(it, src, o.Attributes, nil, func(e Event) { byKey[e.Key] = append(byKey[e.Key], e); p.NewRows++ }); err != nil {
		return p, fmt.Errorf("scd: reading %s: %w", p.History, err)
	}
	if len(byKey) == 0 {
		p.UpToDate = true // history snapshots that added no rows: nothing to write
		return p, nil
	}
	if found && len(added) < len(tasks) {
		// the whole history of the keys touched, not only their new versions: a late version
		// changes its neighbours' intervals and what counts as unchanged
		for k := range byKey {
			byKey[k] = byKey[k][:0]
		}
		filter := ice.BooleanExpression(ice.AlwaysTrue{})
		if len(byKey) <= 10000 {
			keys := make([]string, 0, len(byKey))
			for k := range byKey {
				keys = append(keys, k)
			}
			filter = ice.IsIn(ice.Reference(src.KeyColumn), keys...)
		}
		full := hist.Scan(table.WithSnapshotID(hs.SnapshotID), table.WithSelectedFields(cols...), table.WithRowFilter(filter))
		_, it, err := full.ToArrowRecords(ctx)
		if err != nil {
			return p, fmt.Errorf("scd: reading %s: %w", p.History, err)
		}
		if err := readEvents(it, src, o.Attributes, byKey, func(e Event) { byKey[e.Key] = append(byKey[e.Key], e) }); err != nil {
			return p, fmt.Errorf("scd: reading %s: %w", p.History, err)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k, evs := range byKey {
		keys = append(keys, k)
		p.RowsRead += len(evs)
	}
	sort.Strings(keys)
	p.Keys = len(keys)
	if err := p.write(ctx, o, keys, byKey); err != nil {
		return p, err
	}
	return p, nil
}

// write writes the keys' rows and their equality deletes.
func (p *Plan) write(ctx context.Context, o Options, keys []string, byKey map[string][]Event) error {
	asc, err := table.SchemaToArrowSchema(p.tbl.Schema(), nil, true, false)
	if err != nil {
		return err
	}
	const batchRows = 8192
	rows := func(yield func(arrow.RecordBatch, error) bool) {
		var buf []icerow.Row
		flush := func() bool {
			rec, err := icerow.BuildRecord(asc, buf)
			buf = buf[:0]
			return yield(rec, err)
		}
		for _, k := range keys {
			rs := Intervals(byKey[k], o.attrNames(), o.Rules)
			p.RowsWritten += len(rs)
			buf = append(buf, rs...)
			if len(buf) >= batchRows && !flush() {
				return
			}
		}
		if len(buf) > 0 {
			flush()
		}
	}
	var wopts []table.WriteRecordOption
	if o.TargetFileSize > 0 {
		wopts = append(wopts, table.WithTargetFileSize(o.TargetFileSize))
	}
	for df, err := range table.WriteRecords(ctx, p.tbl, asc, rows, wopts...) {
		if err != nil {
			return fmt.Errorf("scd: writing %s: %w", p.Target, err)
		}
		p.data = append(p.data, df)
	}
	// deletes when the table may hold rows of the keys, and when there is no row to write (keys
	// that only have deletes): the snapshot must still be committed to record the position
	if p.tbl.CurrentSnapshot() != nil || len(p.data) == 0 {
		f, ok := p.tbl.Schema().FindFieldByName(ColBusinessKey)
		if !ok {
			return fmt.Errorf("scd: %s has no %s column", p.Target, ColBusinessKey)
		}
		dsc, err := p.tbl.Schema().Select(true, ColBusinessKey)
		if err != nil {
			return err
		}
		dasc, err := table.SchemaToArrowSchema(dsc, nil, true, false)
		if err != nil {
			return err
		}
		delRows := func(yield func(arrow.RecordBatch, error) bool) {
			for i := 0; i < len(keys); i += batchRows {
				part := keys[i:min(i+batchRows, len(keys))]
				rs := make([]icerow.Row, len(part))
				for j, k := range part {
					rs[j] = icerow.Row{ColBusinessKey: k}
				}
				if !yield(icerow.BuildRecord(dasc, rs)) {
					return
				}
			}
		}
		files, err := p.tbl.NewTransaction().WriteEqualityDeletes(ctx, []int{f.ID}, delRows)
		if err != nil {
			return fmt.Errorf("scd: writing the deletes of %s: %w", p.Target, err)
		}
		p.dels = files
	}
	p.DataFiles, p.DeleteFiles = len(p.data), len(p.dels)
	return nil
}

// Commit commits the plan as one snapshot holding its position, on the SCD table's head as
// planned: when another run committed meanwhile, it fails and the next run plans again.
func (p *Plan) Commit(ctx context.Context) error {
	if p.UpToDate || (len(p.data) == 0 && len(p.dels) == 0) {
		return nil
	}
	tx := p.tbl.NewTransaction()
	if err := tx.AssertRefSnapshotID(""); err != nil {
		return err
	}
	rd := tx.NewRowDelta(ice.Properties{
		SummaryHistorySnapshot: strconv.FormatInt(p.To.SnapshotID, 10),
		SummaryHistorySequence: strconv.FormatInt(p.To.Sequence, 10),
		SummaryHistoryUUID:     p.historyUUID,
	})
	rd.AddRows(p.data...)
	rd.AddDeletes(p.dels...)
	if err := rd.Commit(ctx); err != nil {
		return fmt.Errorf("scd: committing %s: %w", p.Target, err)
	}
	ntbl, err := tx.Commit(ctx)
	if err != nil {
		return fmt.Errorf("scd: committing %s: %w", p.Target, err)
	}
	if s := ntbl.CurrentSnapshot(); s != nil {
		p.SnapshotID = s.SnapshotID
	}
	return nil
}

// position is the newest position in the summaries of the table's head and its ancestors (a
// maintenance snapshot carries none).
func position(tbl *table.Table, historyUUID string) (Position, bool, error) {
	for cur := tbl.CurrentSnapshot(); cur != nil; {
		if cur.Summary != nil {
			props := cur.Summary.Properties
			if seq, ok := props[SummaryHistorySequence]; ok {
				if u := props[SummaryHistoryUUID]; u != "" && u != historyUUID {
					return Position{}, false, fmt.Errorf("%w (snapshot %d read %s)", ErrHistoryReplaced, cur.SnapshotID, u)
				}
				var pos Position
				var err1, err2 error
				pos.Sequence, err1 = strconv.ParseInt(seq, 10, 64)
				pos.SnapshotID, err2 = strconv.ParseInt(props[SummaryHistorySnapshot], 10, 64)
				if err := errors.Join(err1, err2); err != nil {
					return Position{}, false, fmt.Errorf("scd: snapshot %d: position: %w", cur.SnapshotID, err)
				}
				return pos, true, nil
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
	}
	return Position{}, false, nil
}

// columns are the history columns read.
func (s Source) columns(attrs []string, sc *ice.Schema) []string {
	cols := []string{s.KeyColumn, s.VersionColumn}
	for _, c := range append([]string{s.ValidFromColumn, s.ValidFromFallback, s.OpColumn, s.PayloadColumn}, s.DeliveryColumns...) {
		if c != "" {
			cols = append(cols, c)
		}
	}
	if s.PayloadColumn == "" {
		cols = append(cols, attrs...)
	}
	out := cols[:0]
	for _, c := range cols {
		if _, ok := sc.FindFieldByName(c); ok {
			out = append(out, c)
		}
	}
	return out
}

// readEvents turns history rows into events; with want, only the rows of its keys.
func readEvents(it iter.Seq2[arrow.RecordBatch, error], s Source, attrs []string, want map[string][]Event, emit func(Event)) error {
	for rec, err := range it {
		if err != nil {
			return err
		}
		rows := icerow.RecordToRows(rec)
		rec.Release()
		for _, r := range rows {
			e, ok, err := s.event(r, attrs)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if want != nil {
				if _, ok := want[e.Key]; !ok {
					continue
				}
			}
			emit(e)
		}
	}
	return nil
}

// event reads one history row; ok is false for rows that are no version of a key.
func (s Source) event(r icerow.Row, attrs []string) (Event, bool, error) {
	k := r[s.KeyColumn]
	if k == nil || r[s.VersionColumn] == nil {
		return Event{}, false, nil
	}
	e := Event{Key: icerow.ToString(k), Version: r[s.VersionColumn]}
	if s.OpColumn != "" {
		switch op, _ := r[s.OpColumn].(string); op {
		case "d", "D", "delete":
			e.Deleted = true
		case "tombstone", "t", "T":
			return Event{}, false, nil
		}
	}
	for _, c := range []string{s.ValidFromColumn, s.ValidFromFallback} {
		if t, ok := r[c].(time.Time); ok && c != "" {
			e.ValidFrom = t
			break
		}
	}
	for i, c := range s.DeliveryColumns {
		if i < len(e.Delivery) && r[c] != nil {
			e.Delivery[i], _ = icerow.ToInt64(r[c])
		}
	}
	if e.Deleted {
		return e, true, nil
	}
	if s.PayloadColumn == "" {
		e.Attrs = make([]any, len(attrs))
		for i, a := range attrs {
			e.Attrs[i] = attrString(r[a])
		}
		return e, true, nil
	}
	payload, _ := r[s.PayloadColumn].(string)
	if len(attrs) == 0 {
		e.Attrs = []any{nil}
		if payload != "" && payload != "null" {
			c, err := canonicalJSON(payload)
			if err != nil {
				return e, false, fmt.Errorf("key %s version %v: %s: %w", e.Key, e.Version, s.PayloadColumn, err)
			}
			e.Attrs[0] = c
		}
		return e, true, nil
	}
	var obj map[string]json.RawMessage
	if payload != "" {
		if err := json.Unmarshal([]byte(payload), &obj); err != nil {
			return e, false, fmt.Errorf("key %s version %v: %s: %w", e.Key, e.Version, s.PayloadColumn, err)
		}
	}
	e.Attrs = make([]any, len(attrs))
	for i, a := range attrs {
		raw, ok := obj[a]
		if !ok || string(raw) == "null" {
			continue
		}
		var str string
		if json.Unmarshal(raw, &str) == nil {
			e.Attrs[i] = str
		} else {
			e.Attrs[i] = string(raw)
		}
	}
	return e, true, nil
}

// canonicalJSON re-encodes a JSON value with sorted object keys and numbers as written, so that
// equal payloads hash equal.
func canonicalJSON(s string) (string, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func attrString(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return icerow.ToString(v)
}
