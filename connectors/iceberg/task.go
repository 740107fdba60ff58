package iceberg

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// Task is the sink task. Put converts and routes records into per-table buffers; the
// connector's coordinator (one per connector in the process, see coordinator.go) has package commit
// drain every task's buffers once per commit interval and commit one snapshot per table. PreCommit
// returns only offsets that are durable in every table, so the Connect group never runs
// ahead of the tables.
type Task struct {
	connect.SinkTaskBase
	cfg   *SinkConfig
	coord *coordinator
	rows  *icerow.Router // reads each record once for the tables it goes to
	opts  map[string]icetable.TableOptions
	specs map[string]*tableSpec // what each table needs of a record's row: taskTables
	// the table spec last asked for: the lookup of most records of a task that writes one table
	lastSpecName string
	lastSpec     *tableSpec

	mu        sync.Mutex
	buf       map[string][]icetable.Rec
	nbuf      int
	keys      map[string]*icetable.KeyIndex // per keyed delta table
	spills    icetable.JSONSpills           // the files of the bytes of records bufferJSON buffers
	inflight  int                           // rows drained into rounds not yet resolved
	pos       map[icetable.TP]int64         // next offset per partition, through what Put has seen and PreCommit's consumed offsets
	committed map[icetable.TP]int64         // next offset per partition that every table holds
	assigned  map[icetable.TP]bool
	gen       map[icetable.TP]int // bumped by Open and Close: records drained before are stale after
	now       func() time.Time
	warned    map[string]bool // tables warned about (warnOnce)
	// appends are the append tables whose rows Put converts into spool segments
	// (appendput.go) instead of buffering records.
	appends    icetable.AppendTables
	scratch    icetable.ScratchFiles // the spool and spill files no record is in any more, for the next ones
	scratchDir string                // where the spool and spill files are made (connect.ScratchSpace); "": os.TempDir
	// lost is set when rows already put are only in Kafka now (a data file writer failed, icetable/early.go, or
	// the outcome of a transaction holding them is unknown): the task fails and its restart reads them again
	// from the group offset
	lost atomic.Pointer[error]
	// orchKey is the task as the coordinator's orchestrator knows it (its answer producer, apache protocol);
	// under mu: the rounds drain the task from its registration on
	orchKey commit.TaskKey

	watch      stuckWatch    // records that stay out of the tables: stuck.go
	stuckAfter time.Duration // tests preset it; 0: stuckThreshold's default
}

func (t *Task) Version() string { return Version }

// Start parses the configuration and joins the connector's coordinator.
func (t *Task) Start(props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	t.cfg = cfg
	t.rows = icerow.NewRouter(cfg.routing(), taskTables{t})
	t.opts = map[string]icetable.TableOptions{}
	t.specs = map[string]*tableSpec{}
	t.buf = map[string][]icetable.Rec{}
	t.keys = map[string]*icetable.KeyIndex{}
	t.pos = map[icetable.TP]int64{}
	t.committed = map[icetable.TP]int64{}
	t.assigned = map[icetable.TP]bool{}
	t.gen = map[icetable.TP]int{}
	t.warned = map[string]bool{}
	t.warnVersionConfig()
	if ss, ok := t.Ctx.(connect.ScratchSpace); ok {
		t.scratchDir = ss.ScratchDir()
	}
	t.spills = icetable.JSONSpills{Scratch: &t.scratch, Dir: t.scratchDir, Warn: t.warnSpill}
	t.appends = icetable.AppendTables{Scratch: &t.scratch, Dir: t.scratchDir, Catalog: t.catalog,
		Lost: func(err error) { t.lost.CompareAndSwap(nil, &err) }}
	if t.now == nil {
		t.now = time.Now
	}
	if t.coord == nil { // tests preset one to model several processes
		wi, _ := t.Ctx.(connect.WorkerInfo)
		coord, err := joinCoordinator(t.Ctx, cfg, wi)
		if err != nil {
			return err
		}
		t.coord = coord
	}
	t.coord.register(t)
	key, err := t.coord.orch.TaskStarted(commit.TaskConfig{ID: props["task.id"], TransactionalSuffix: props[KeyTxnSuffix]})
	if err != nil {
		t.coord.unregister(t)
		return err
	}
	t.mu.Lock()
	t.orchKey = key
	t.mu.Unlock()
	t.startWatch()
	return nil
}

func (t *Task) tableOpts(name string) icetable.TableOptions {
	o, ok := t.opts[name]
	if !ok {
		o = t.cfg.TableOptions(name)
		t.opts[name] = o
	}
	return o
}

func origin(r *connect.SinkRecord) (icetable.TP, int64) {
	if r.OriginalTopic != "" {
		return icetable.TP{Topic: r.OriginalTopic, Partition: r.OriginalPartition}, r.OriginalOffset
	}
	return icetable.TP{Topic: r.Topic, Partition: r.Partition}, r.Offset
}

// Put buffers records. A record at or below the position already seen for its partition
// (a redelivered batch) is ignored.
func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	t.watch.putSince.Store(t.now().UnixNano())
	defer t.watch.putSince.Store(0)
	if err := t.coord.fatalErr(); err != nil {
		return err
	}
	if err := t.lost.Load(); err != nil {
		return *err
	}
	t.mu.Lock()
	if max := t.cfg.MaxBuffered; max > 0 && t.nbuf+t.inflight >= 2*max && t.coord.lastRoundFailed() {
		// rounds are failing (catalog down, ...) and the buffers are full: have the worker
		// redeliver this batch later instead of growing without bound
		t.mu.Unlock()
		return &connect.RetriableError{Err: fmt.Errorf("iceberg: %d rows buffered and the last commit round failed; waiting for a round to succeed", t.nbuf+t.inflight)}
	}
	now := t.now()
	// records come in runs of one partition: its position is read and written once per run
	// (a position, once there, comes with a committed start: PreCommit sets both)
	var run icetable.TP
	var pos int64
	inRun, seen := false, false
	endRun := func() {
		if inRun && seen {
			t.pos[run] = pos
		}
	}
	for _, r := range records {
		tp, off := origin(r)
		if !inRun || tp != run {
			endRun()
			run, inRun = tp, true
			pos, seen = t.pos[tp]
		}
		if seen && off < pos {
			continue
		}
		if !seen {
			if _, ok := t.committed[tp]; !ok {
				t.committed[tp] = off // start of what this task must get into the tables
			}
		}
		if err := t.route(ctx, r, now); err != nil {
			if rep := t.Ctx.ErrantRecordReporter(); rep != nil && connect.IsDataError(err) {
				if rerr := rep.Report(ctx, r, err); rerr != nil {
					endRun()
					t.mu.Unlock()
					return rerr
				}
			} else {
				endRun()
				t.mu.Unlock()
				return err
			}
		}
		pos, seen = off+1, true
	}
	endRun()
	n := t.nbuf + t.inflight
	inMemory := n - t.appends.Rows
	t.mu.Unlock()
	// full buffers ask for an early round, unless rounds are failing: then the retry backoff
	// paces them and the check above pushes back. Spooled rows are on disk: they wait for the
	// interval (one snapshot per table per interval) unless rounds fail.
	if max := t.cfg.MaxBuffered; max > 0 && inMemory >= max && !t.coord.lastRoundFailed() {
		t.coord.triggerRound()
		if inMemory >= 2*max {
			t.coord.waitRound(ctx)
		}
	}
	return t.coord.fatalErr()
}

// route hands what each table the record goes to takes of it (icerow.Router) to the table's buffer.
// Caller holds mu.
func (t *Task) route(ctx context.Context, r *connect.SinkRecord, now time.Time) error {
	targets, rerr := t.rows.Route(r, now)
	tp, off := origin(r)
	for i := range targets {
		if err := t.take(ctx, r, &targets[i], tp, off); err != nil {
			return err
		}
	}
	return rerr
}

// take buffers one table's part of a record: into the table's spool segment when it is an append
// table that can take it (appendput.go), through the key index of a keyed table (icetable.KeyIndex;
// as bytes: jsonput.go), else as a Rec. Caller holds mu.
func (t *Task) take(ctx context.Context, r *connect.SinkRecord, tg *icerow.Target, tp icetable.TP, off int64) error {
	name := tg.Table
	if tg.Gap != icerow.NoGap {
		t.warnGap(name, t.tableOpts(name), tg.Gap)
	}
	switch {
	case tg.Shape != nil:
		t.nbuf++
		t.appends.Rows++
		return t.appends.Open(name, tp).AppendScanned(tg.Shape, r.Value.(*jsonvalue.Value).Bytes, off)
	case tg.AsBytes:
		t.bufferJSON(r.Value.(*jsonvalue.Value), tg, tp, off)
		return nil
	}
	o := t.tableOpts(name)
	if tg.Op != icerow.OpDelete {
		a, err := t.appendTarget(ctx, name, o, tg.Struct)
		if err != nil {
			return err
		}
		if a != nil {
			return t.spoolRow(name, a, tp, off, tg.Row)
		}
	}
	rec := icetable.Rec{Op: tg.Op, Row: tg.Row, Schema: tg.Struct, TP: tp, Offset: off}
	if !tg.Raw {
		if x := t.keyIndex(name); x != nil {
			var grew bool
			if t.buf[name], grew = x.Add(t.buf[name], rec, tg.Key, tg.Version); grew {
				t.nbuf++
			}
			return nil
		}
	}
	t.add(name, rec)
	return nil
}

// taskTables tells the task's router how each table takes a record.
type taskTables struct{ t *Task }

// tableSpec is what the router reads of a table, and whether the table can spool rows.
type tableSpec struct {
	icerow.TableSpec
	appends bool // icetable.AppendEligible
}

// Table is the table's spec, made once per table. Caller holds mu.
func (tt taskTables) Table(name string) *icerow.TableSpec {
	return &tt.spec(name).TableSpec
}

func (tt taskTables) spec(name string) *tableSpec {
	t := tt.t
	if t.lastSpec != nil && name == t.lastSpecName {
		return t.lastSpec
	}
	s := t.specs[name]
	if s == nil {
		o := t.tableOpts(name)
		pt := t.cfg.PerTable[name]
		s = &tableSpec{TableSpec: icerow.TableSpec{RawCDC: pt != nil && pt.RawCDC, IDColumns: o.IDColumns, Upsert: o.UpsertMode,
			Delta: o.DeltaMode, VersionColumn: o.VersionColumn, CDCVersionColumn: o.CDCVersionColumn}, appends: icetable.AppendEligible(o)}
		t.specs[name] = s
	}
	t.lastSpecName, t.lastSpec = name, s
	return s
}

// Spool is the schema of the table's open segment of r's partition when the table spools rows
// (icetable.AppendTables) and the segment is of the table's current schema. Caller holds mu.
func (tt taskTables) Spool(name string, r *connect.SinkRecord) *icerow.SpoolColumns {
	if !tt.spec(name).appends {
		return nil
	}
	tp, _ := origin(r)
	return tt.t.appends.Spool(name, tp)
}

// catalog is the catalog the task loads its append tables from.
func (t *Task) catalog(ctx context.Context) (catalog.Catalog, error) {
	return t.coord.tables.Catalog(ctx)
}

func (t *Task) add(table string, rec icetable.Rec) {
	t.buf[table] = append(t.buf[table], rec)
	t.nbuf++
}

// keyIndex returns the key index of a keyed delta table (nil for other tables).
func (t *Task) keyIndex(table string) *icetable.KeyIndex {
	if x, ok := t.keys[table]; ok {
		return x
	}
	var x *icetable.KeyIndex
	if o := t.tableOpts(table); o.DeltaMode && len(o.IDColumns) > 0 {
		x = icetable.NewKeyIndex(o)
	}
	t.keys[table] = x
	return x
}

// resetKeys forgets buffer positions after the buffers were handed over or rearranged.
func (t *Task) resetKeys() {
	for _, x := range t.keys {
		if x != nil {
			x.Reset()
		}
	}
}

// warnGap logs, once per table, that its records lack the version its configuration asks for.
func (t *Task) warnGap(table string, o icetable.TableOptions, gap icerow.VersionGap) {
	switch vc := o.VersionColumn; gap {
	case icerow.EnvelopeVersionMissing:
		t.warnOnce(table, "the version path resolves to nothing in this table's records: they are ordered by Kafka offset within a commit and not protected across commits; set "+KeyVersionColumn+" (or iceberg.table."+table+".version-column) to a position the records carry (source.lsn, source.pos, source.scn, source.commit_lsn, source.ts_ms, or source to detect it; unwrapped records need ExtractNewRecordState add.fields, e.g. lsn)", "version_column", vc)
	case icerow.VersionColumnMissing:
		t.warnOnce(table, "records lack the version column: they are ordered by Kafka offset and not protected across commits", "version_column", vc)
	case icerow.UnversionedDelete:
		t.warnOnce(table, "deletes reach a table without a version: a stale or redelivered event in a later commit can bring a deleted key back; set "+KeyVersionColumn+" (e.g. source.lsn, source.pos, source, or a column such as updated_at)")
	}
}

// warnOnce logs a configuration warning about a table once per task.
func (t *Task) warnOnce(table, msg string, args ...any) {
	if t.warned[table] {
		return
	}
	t.warned[table] = true
	slog.Warn("iceberg sink: "+msg, append([]any{"connector", t.cfg.Name, "table", table}, args...)...)
}

// warnVersionConfig logs, at start, one warning per table whose configuration cannot keep a
// stale event from winning across commits.
func (t *Task) warnVersionConfig() {
	const set = "set " + KeyVersionColumn + " or iceberg.table.<table>.version-column to a position in the change event (source.lsn, source.pos, source.scn, source.commit_lsn, source) or to a column such as updated_at"
	check := func(table string, o icetable.TableOptions) {
		switch {
		case o.DeltaMode && o.VersionColumn == "":
			t.warnOnce(table, "upsert table without a version: a stale or redelivered event in a later commit can bring a deleted key or an older row back; "+set)
		case o.CDCVersionColumn != "" && strings.HasPrefix(o.VersionColumn, "source."):
			if f := strings.TrimPrefix(o.VersionColumn, "source."); !icerow.KnownSourceFields[f] {
				t.warnOnce(table, "the version path is not a known source position (lsn, file/pos/row, scn, commit_scn, change_lsn, commit_lsn, ts_ms): ordered by its value as a number or a string", "version_column", o.VersionColumn)
			}
		}
	}
	if t.cfg.DynamicEnabled {
		check("(dynamically routed)", t.cfg.TableOptions(""))
		return
	}
	for _, name := range t.cfg.Tables {
		if pt := t.cfg.PerTable[name]; pt != nil && pt.RawCDC {
			continue
		}
		check(name, t.cfg.TableOptions(name))
	}
}

// drained is what a round took from a task: given back on failure (roundFailed), its
// positions made durable on success (roundCommitted).
type drained struct {
	t    *Task
	bufs map[string][]icetable.Rec
	n    int // rows in bufs
	pos  map[icetable.TP]int64
	gen  map[icetable.TP]int
	// spills are the files the bytes of bufs' records buffered as bytes are in, ended by the drain
	spills []*icetable.JSONSpill
}

// drain hands the buffers and positions to the coordinator.
func (t *Task) drain() drained {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.appends.SealAll()
	d := drained{t: t, bufs: t.buf, n: t.nbuf, pos: make(map[icetable.TP]int64, len(t.pos)), gen: make(map[icetable.TP]int, len(t.pos))}
	d.spills = t.spills.Drain()
	t.buf = map[string][]icetable.Rec{}
	t.resetKeys()
	t.inflight += t.nbuf
	t.nbuf = 0
	for tp, o := range t.pos {
		d.pos[tp] = o
		d.gen[tp] = t.gen[tp]
	}
	return d
}

// key is the task's orchestrator key.
func (t *Task) key() commit.TaskKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.orchKey
}

// assignment returns the partitions the task holds.
func (t *Task) assignment() []icetable.TP {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]icetable.TP, 0, len(t.assigned))
	for tp := range t.assigned {
		out = append(out, tp)
	}
	return out
}

// holds reports whether the task is assigned tp.
func (t *Task) holds(tp icetable.TP) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.assigned[tp]
}

// roundCommitted records that everything below pos is in every table (for the partitions the
// task still tracks: a partition revoked meanwhile belongs to its new owner). durable is false for an
// apache-protocol answer: its offsets are committed, but its records count as durable only once a
// coordinator's COMMIT_COMPLETE covers the answer (answerWait).
func (t *Task) roundCommitted(d drained, durable bool) {
	t.mu.Lock()
	t.inflight -= d.n
	t.appends.RemoveSegments(d.bufs)
	for _, s := range d.spills {
		s.Close()
	}
	for tp, o := range d.pos {
		if c, ok := t.committed[tp]; ok && o > c {
			t.committed[tp] = o
		}
	}
	t.mu.Unlock()
	if durable {
		t.madeProgress()
	}
	if t.Ctx != nil {
		t.Ctx.RequestCommit()
	}
}

// roundFailed gives a failed round's records back: they go in front of what arrived since
// (per partition, Kafka order is kept) and are planned again in the next round, where the
// tables' offsets skip any that did get committed (a table that committed before another
// failed, or a round that committed although this process heard no COMMIT). Records of
// partitions revoked or reassigned since the drain are dropped: their next owner re-reads them
// from the group offset. No rewind, so no consumer-group rebalance per failed round.
func (t *Task) roundFailed(d drained) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inflight -= d.n
	t.spills.GiveBack(d.spills)
	for name, recs := range d.bufs {
		kept := make([]icetable.Rec, 0, len(recs))
		for _, r := range recs {
			if g, ok := d.gen[r.TP]; ok && g == t.gen[r.TP] {
				kept = append(kept, r)
			} else if r.Seg != nil {
				t.appends.RemoveSegment(r.Seg)
			}
		}
		if len(kept) > 0 {
			t.buf[name] = append(kept, t.buf[name]...)
			t.nbuf += icetable.RecRows(kept)
		}
	}
	t.resetKeys()
}

// PreCommit returns the offsets that every table holds (never more). It first takes the consumed
// offsets as positions: the records between what Put saw and a consumed offset never reach the task
// (filtered, tolerated, dead-lettered), so the next round that makes everything before them durable
// covers them too, and the group moves past a partition's skipped tail. A round's positions go into the
// tables' offsets as well, which a restart's per-table skip reads: the records below them that were
// never written are skipped again by the runtime.
func (t *Task) PreCommit(_ context.Context, consumed connect.ConsumedOffsets) (map[connect.TopicPartition]connect.OffsetAndMetadata, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, om := range consumed {
		tp := icetable.TP{Topic: p.Topic, Partition: p.Partition}
		if !t.assigned[tp] || om.Offset <= t.pos[tp] {
			continue
		}
		t.pos[tp] = om.Offset
		if _, ok := t.committed[tp]; !ok {
			t.committed[tp] = om.Offset // nothing put since Open: nothing to make durable
		}
	}
	out := map[connect.TopicPartition]connect.OffsetAndMetadata{}
	for tp, o := range t.committed {
		out[connect.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}] = connect.OffsetAndMetadata{Offset: o}
	}
	return out, nil
}

// Flush is a no-op: data reaches the tables on the coordinator's schedule (PreCommit decides
// what may be committed).
func (t *Task) Flush(context.Context, map[connect.TopicPartition]connect.OffsetAndMetadata) error {
	return nil
}

// Open forgets positions of newly assigned partitions (they restart at the group offset).
func (t *Task) Open(partitions []connect.TopicPartition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range partitions {
		tp := icetable.TP{Topic: p.Topic, Partition: p.Partition}
		delete(t.pos, tp)
		delete(t.committed, tp)
		t.assigned[tp] = true
		t.gen[tp]++
	}
	t.resetKeys() // a redelivered record must not take the place of a later one
	return nil
}

// Close drops buffered records of revoked partitions: whoever gets them next re-reads them
// from the group offset, and the per-table offsets skip what is already committed. Under the
// apache protocol it first waits for an answer in progress, whose transaction commits the
// partitions' offsets.
func (t *Task) Close(partitions []connect.TopicPartition) error {
	if t.coord != nil {
		t.coord.orch.BeforeRevoke()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	gone := map[icetable.TP]bool{}
	for _, p := range partitions {
		tp := icetable.TP{Topic: p.Topic, Partition: p.Partition}
		gone[tp] = true
		delete(t.assigned, tp)
		t.gen[tp]++
		delete(t.pos, tp)
		delete(t.committed, tp)
	}
	t.appends.DropOpen(gone)
	n := 0
	for name, recs := range t.buf {
		kept := recs[:0]
		for _, r := range recs {
			if !gone[r.TP] {
				kept = append(kept, r)
			} else if r.Seg != nil {
				t.appends.RemoveSegment(r.Seg)
			}
		}
		t.buf[name] = kept
		n += icetable.RecRows(kept)
	}
	t.nbuf = n
	t.resetKeys()
	return nil
}

// Stop leaves the coordinator; the last task out runs a final commit round.
func (t *Task) Stop() error {
	t.stopWatch()
	if t.coord != nil {
		t.coord.unregister(t)
		t.coord.orch.TaskStopped(t.orchKey) // after an answer in progress that holds its batch
	}
	// what the last round left in the buffer is read again from the group offsets by the next owner
	t.mu.Lock()
	t.spills.Close()
	t.appends.AbortEarly()
	t.mu.Unlock()
	t.scratch.Close()
	return nil
}

// Version of the plugin, connector and tasks: the Apache Iceberg sink release whose config keys and control
// events this plugin matches, as GET / reports the Kafka Connect release matched. The tasks of one connector
// on JVM and connectd workers thus report one version, and a connector.plugin.version pin written for the
// Apache sink selects this plugin.
const Version = "1.10.1"

var _ connect.PreCommitter = (*Task)(nil)

func (t *Task) String() string { return fmt.Sprintf("IcebergSinkTask{%s}", t.cfg) }
