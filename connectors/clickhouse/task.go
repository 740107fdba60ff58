package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ClickHouse/ch-go"
	"golang.org/x/sync/errgroup"

	"github.com/connectd/connectd/connect"
)

// Task is the ClickHouse sink task.
//
// Records are buffered per consumed partition; a partition's buffer is written when Put ends (or, with
// bufferCount, when it holds that many records, or after bufferFlushTime), and by PreCommit/Flush.
// Partitions are written in parallel (up to connection.pool.size), each as a sequence of INSERTs of
// one block (<= batch.max.rows rows / batch.max.bytes bytes) carrying the deduplication token
// "<topic>-<partition>-<firstOffset>-<lastOffset>". PreCommit reports only offsets that are written.
type Task struct {
	connect.SinkTaskBase

	cfg     *Config
	pool    *pool
	tables  *tableCache
	state   *stateStore
	markers *markerStore // CDC mode
	log     *slog.Logger

	mu       sync.Mutex // guards buf, seen, inserted, blocks, reporter calls
	buf      map[connect.TopicPartition]*partBuf
	seen     map[connect.TopicPartition]int64 // next offset expected from Put (redelivery filter)
	inserted map[connect.TopicPartition]int64 // next offset not yet written
	blocks   map[string][]*block
	warned   map[string]bool
	repMu    sync.Mutex

	warnMu        sync.Mutex
	tableWarnings map[string]*tableWarning

	written writeCounts // rows and blocks guarded by mu, errant by repMu

	failures failureBudget // consecutive retriable write failures

	// dialOptions is handed to the task's connection pool (see pool.dialOptions); nil dials what the
	// configuration names. Unexported: the runtime builds tasks through Connector.NewTask, which leaves it nil.
	dialOptions func(*ch.Options)
}

// writeCounts counts what the task wrote; Stop logs them.
type writeCounts struct {
	rows, blocks, errant int64
}

type partBuf struct {
	recs  []*connect.SinkRecord
	since time.Time
}

// Version implements connect.SinkTask.
func (t *Task) Version() string { return Version }

// Start implements connect.SinkTask.
func (t *Task) Start(props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	t.setup(cfg)
	if err := t.checkConnection(context.Background()); err != nil {
		t.pool.close()
		return err
	}
	return nil
}

// setup prepares a task for cfg without contacting the server.
func (t *Task) setup(cfg *Config) {
	t.cfg = cfg
	t.pool = newPool(cfg, t.dialOptions)
	t.tables = newTableCache(cfg.TableRefresh)
	t.log = slog.Default().With("connector", "clickhouse")
	t.buf = map[connect.TopicPartition]*partBuf{}
	t.seen = map[connect.TopicPartition]int64{}
	t.inserted = map[connect.TopicPartition]int64{}
	t.blocks = map[string][]*block{}
	t.warned = map[string]bool{}
	t.tableWarnings = map[string]*tableWarning{}
	for _, w := range cfg.cdcWarnings {
		t.log.Warn(w)
	}
	if cfg.ExactlyOnce {
		t.state = newStateStore(cfg, t.pool)
	}
	if cfg.DebeziumCDC {
		t.markers = newMarkerStore(cfg, t.pool)
	}
}

// Stop implements connect.SinkTask.
func (t *Task) Stop() error {
	if t.pool != nil {
		t.pool.close()
	}
	t.mu.Lock()
	rows, blocks := t.written.rows, t.written.blocks
	t.mu.Unlock()
	t.repMu.Lock()
	errant := t.written.errant
	t.repMu.Unlock()
	if t.log != nil {
		t.log.Info("task stopped", "rows_written", rows, "blocks_written", blocks, "errant_records", errant)
	}
	return nil
}

// Open implements connect.SinkTask: state of newly assigned partitions is re-read from ClickHouse.
func (t *Task) Open(partitions []connect.TopicPartition) error {
	for _, tp := range partitions {
		if t.state != nil {
			t.state.forget(tp.Topic, tp.Partition)
		}
		if t.markers != nil {
			t.markers.forget(tp.Topic, tp.Partition)
		}
	}
	return nil
}

// Close implements connect.SinkTask: unwritten records of revoked partitions are dropped (their new
// owner consumes them again from the committed offset).
func (t *Task) Close(partitions []connect.TopicPartition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range partitions {
		delete(t.buf, tp)
		delete(t.seen, tp)
		delete(t.inserted, tp)
		if t.state != nil {
			t.state.forget(tp.Topic, tp.Partition)
		}
		if t.markers != nil {
			t.markers.forget(tp.Topic, tp.Partition)
		}
	}
	return nil
}

func coords(r *connect.SinkRecord) (connect.TopicPartition, int64) {
	if r.OriginalTopic != "" {
		return r.OriginalTopicPartition(), r.OriginalOffset
	}
	return connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}, r.Offset
}

// Put implements connect.SinkTask.
func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	t.mu.Lock()
	for _, r := range records {
		tp, off := coords(r)
		if next, ok := t.seen[tp]; ok && off < next {
			continue // redelivered: already buffered or written
		}
		t.seen[tp] = off + 1
		pb := t.buf[tp]
		if pb == nil {
			pb = &partBuf{}
			t.buf[tp] = pb
		}
		if len(pb.recs) == 0 {
			pb.since = time.Now()
		}
		c := *r
		pb.recs = append(pb.recs, &c)
	}
	var due []connect.TopicPartition
	for tp, pb := range t.buf {
		if len(pb.recs) == 0 {
			continue
		}
		if t.cfg.BufferCount <= 0 || len(pb.recs) >= t.cfg.BufferCount ||
			(t.cfg.BufferFlushTime > 0 && time.Since(pb.since) >= t.cfg.BufferFlushTime) {
			due = append(due, tp)
		}
	}
	t.mu.Unlock()
	if t.cfg.BufferCount > 0 && t.cfg.BufferFlushTime > 0 {
		t.Ctx.Timeout(t.cfg.BufferFlushTime)
	}
	return t.flush(ctx, due)
}

// Flush implements connect.SinkTask (used by runtimes that do not call PreCommit).
func (t *Task) Flush(ctx context.Context, _ map[connect.TopicPartition]connect.OffsetAndMetadata) error {
	return t.flush(ctx, t.pending())
}

// PreCommit implements connect.PreCommitter: everything buffered is written, then the offsets after the
// last written record of each partition are returned.
func (t *Task) PreCommit(ctx context.Context, current map[connect.TopicPartition]connect.OffsetAndMetadata) (map[connect.TopicPartition]connect.OffsetAndMetadata, error) {
	if err := t.flush(ctx, t.pending()); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[connect.TopicPartition]connect.OffsetAndMetadata, len(current))
	for tp, om := range current {
		if pb := t.buf[tp]; pb != nil && len(pb.recs) > 0 {
			// Not written yet (exactly-once waiting for a full replay range, or a failed flush).
			_, first := coords(pb.recs[0])
			out[tp] = connect.OffsetAndMetadata{Offset: first}
			continue
		}
		out[tp] = om
	}
	return out, nil
}

func (t *Task) pending() []connect.TopicPartition {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []connect.TopicPartition
	for tp, pb := range t.buf {
		if len(pb.recs) > 0 {
			out = append(out, tp)
		}
	}
	return out
}

// flush writes the buffers of the given partitions, in parallel.
func (t *Task) flush(ctx context.Context, tps []connect.TopicPartition) error {
	if len(tps) == 0 {
		return nil
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.cfg.PoolSize)
	for _, tp := range tps {
		t.mu.Lock()
		pb := t.buf[tp]
		var recs []*connect.SinkRecord
		if pb != nil {
			recs = pb.recs
		}
		t.mu.Unlock()
		if len(recs) == 0 {
			continue
		}
		g.Go(func() error { return t.flushPartition(gctx, tp, recs) })
	}
	err := g.Wait()
	if err != nil && isRetriable(err) && !connect.IsDataError(err) && ctx.Err() == nil {
		return t.failed(err)
	}
	if err == nil {
		t.failures.succeeded()
	}
	return err
}

// consumed removes the first n buffered records of tp, which are written (or deliberately skipped).
func (t *Task) consumed(tp connect.TopicPartition, n int, next int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pb := t.buf[tp]
	if pb == nil {
		return
	}
	pb.recs = pb.recs[n:]
	if len(pb.recs) == 0 {
		pb.recs = nil
	}
	t.inserted[tp] = next
}

// flushPartition writes recs (the buffered records of tp, in offset order) block by block.
func (t *Task) flushPartition(ctx context.Context, tp connect.TopicPartition, recs []*connect.SinkRecord) error {
	for len(recs) > 0 {
		n, err := t.writeNext(ctx, tp, recs)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil // exactly-once: waiting for more records of an in-doubt range
		}
		recs = recs[n:]
	}
	return nil
}

// writeNext writes the next block from the head of recs and returns how many records it consumed.
func (t *Task) writeNext(ctx context.Context, tp connect.TopicPartition, recs []*connect.SinkRecord) (int, error) {
	db, table := t.cfg.tableFor(recs[0].Topic)
	tbl, err := t.tables.get(ctx, t.pool, db, table)
	var nt *errNoTable
	if errors.As(err, &nt) {
		if t.cfg.AutoCreate {
			if err = t.createTable(ctx, db, table, recs); err == nil {
				tbl, err = t.tables.get(ctx, t.pool, db, table)
			}
		} else if t.cfg.SuppressTableExistence {
			n := sameTableRun(t.cfg, recs)
			t.log.Warn("table does not exist; skipping records", "table", db+"."+table, "records", n)
			_, last := coords(recs[n-1])
			t.consumed(tp, n, last+1)
			return n, nil
		} else {
			return 0, fmt.Errorf("%w (set %s=true to skip, or %s=true to create it)", err, keySuppressTableExists, keyAutoCreate)
		}
	}
	if err != nil {
		return 0, err
	}
	run := recs[:sameTableRun(t.cfg, recs)]
	if t.cfg.AutoEvolve {
		changed, err := t.evolve(ctx, tbl, run)
		if err != nil {
			return 0, err
		}
		if changed {
			if tbl, err = t.tables.get(ctx, t.pool, db, table); err != nil {
				return 0, err
			}
		}
	}

	var key, staging string
	limit := len(run)
	redo := false
	if t.state != nil {
		key = t.state.key(tbl, tp.Topic, tp.Partition)
		if !tbl.dedupWindow() {
			staging = stagingName(tbl, tp)
			t.mu.Lock()
			if !t.warned[db+"."+table] {
				t.warned[db+"."+table] = true
				t.log.Info("exactlyOnce: the table has no deduplication window; blocks go through a staging table and MOVE PARTITION",
					"table", db+"."+table, "engine", tbl.engine)
			}
			t.mu.Unlock()
		}
		st, err := t.state.get(ctx, key)
		if err != nil {
			return 0, err
		}
		if st.state == stateStaged {
			// Crashed between staging and AFTER: finish the move; nothing of the block is redone.
			if err := t.moveStaged(ctx, tbl, stagingName(tbl, tp)); err != nil {
				return 0, err
			}
			st.state = stateAfter
			if err := t.state.set(ctx, key, st); err != nil {
				return 0, err
			}
		}
		// Drop what is known to be written.
		skip := 0
		for skip < len(run) {
			_, off := coords(run[skip])
			if (st.state == stateAfter && off <= st.max) || (st.state == stateBefore && off < st.min) {
				skip++
				continue
			}
			break
		}
		if skip > 0 {
			_, off := coords(run[skip-1])
			t.consumed(tp, skip, off+1)
			return skip, nil
		}
		if _, off := coords(run[0]); st.state == stateBefore && off > st.max {
			// The in-doubt range is behind: its replay wrote no row (below), so what its first attempt wrote stands.
			st.state = stateAfter
			if err := t.state.set(ctx, key, st); err != nil {
				return 0, err
			}
		}
		if st.state == stateBefore {
			// In doubt: redo exactly [min,max] as one block, once all of it is here.
			redo = true
			limit = 0
			for limit < len(run) {
				_, off := coords(run[limit])
				if off > st.max {
					break
				}
				limit++
			}
			_, lastOff := coords(run[limit-1])
			if lastOff < st.max && limit == len(run) {
				return 0, nil // wait for the rest of the range
			}
		}
	}

	b, err := t.takeBlock(tbl)
	if err != nil {
		return 0, err
	}
	defer t.giveBlock(b)
	n, walk, err := t.fill(ctx, b, tp, run[:limit], redo)
	if err != nil {
		return 0, err
	}
	_, first := coords(run[0])
	_, last := coords(run[n-1])
	if walk != nil {
		if err := t.markers.write(ctx, tbl, tp.Topic, tp.Partition, walk.markers()); err != nil {
			return 0, err
		}
	}
	if b.rows > 0 {
		token := fmt.Sprintf("%s-%d-%d-%d", tp.Topic, tp.Partition, first, last)
		switch {
		case t.state == nil:
			if err := t.insert(ctx, b, tbl.qualified(), token); err != nil {
				return 0, err
			}
		case staging == "":
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateBefore}); err != nil {
				return 0, err
			}
			if err := t.insert(ctx, b, tbl.qualified(), token); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateAfter}); err != nil {
				return 0, err
			}
		default:
			if err := t.ensureStaging(ctx, tbl, staging); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateBefore}); err != nil {
				return 0, err
			}
			stq := quoteIdent(tbl.db) + "." + quoteIdent(staging)
			if err := t.pool.exec(ctx, "TRUNCATE TABLE "+stq); err != nil {
				return 0, err
			}
			if err := t.insert(ctx, b, stq, token); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateStaged}); err != nil {
				return 0, err
			}
			if err := t.moveStaged(ctx, tbl, staging); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateAfter}); err != nil {
				return 0, err
			}
		}
	}
	t.consumed(tp, n, last+1)
	return n, nil
}

// sameTableRun is the length of the head of recs that goes to the same table.
func sameTableRun(cfg *Config, recs []*connect.SinkRecord) int {
	db, table := cfg.tableFor(recs[0].Topic)
	n := 1
	for n < len(recs) {
		if recs[n].Topic != recs[0].Topic {
			if d, tb := cfg.tableFor(recs[n].Topic); d != db || tb != table {
				break
			}
		}
		n++
	}
	return n
}

// fill adds records to the block until it is full, or with whole all of recs; errant records go to the
// error reporter. It returns the number of records consumed (written or reported).
//
// A redone in-doubt block is whole: its token names the records of the first attempt, and its rows may
// differ from that attempt's (a tombstone resolves against the table, which may hold the first attempt by
// now), so a block cut by size could end elsewhere, get another token and land next to the first attempt.
//
// In CDC mode it also returns the walk of the block's keys, whose markers must be written before the block.
func (t *Task) fill(ctx context.Context, b *block, tp connect.TopicPartition, recs []*connect.SinkRecord, whole bool) (int, *deleteWalk, error) {
	var (
		keys *keyTracker
		walk *deleteWalk
	)
	if t.cfg.DebeziumCDC && b.deletedIdx >= 0 {
		if hasTombstone(recs) {
			keys = newKeyTracker(b.tbl, t.cfg.versionColumn(b.tbl))
		}
		walk = &deleteWalk{keys: map[string]*walkKey{}, start: map[string]bool{}, read: map[string]struct{}{}}
	}
	_, first := coords(recs[0])
	n := 0
	for ; n < len(recs); n++ {
		if !whole && (b.rows >= t.cfg.BatchMaxRows || (b.rows > 0 && b.rows%256 == 0 && b.size() >= t.cfg.BatchMaxBytes)) {
			break
		}
		if walk != nil && n == len(walk.ids) {
			// Markers are read for the records a block takes at most, unless records that add no row
			// (skipped or errant) let it take more.
			end := len(recs)
			if !whole {
				end = min(end, n+t.cfg.BatchMaxRows-b.rows)
			}
			if err := t.readMarkers(ctx, b.tbl, tp, first, walk, recs[n:end]); err != nil {
				return 0, nil, err
			}
		}
		rec := recs[n]
		var (
			r    row
			skip bool
			err  error
			key  string
		)
		if walk != nil {
			key = walk.ids[n]
		}
		switch {
		case rec.Value == nil && keys != nil && key != "" && walk.afterDelete(key):
			skip = true // the companion of the delete before it, stale or not
		case rec.Value == nil && keys != nil:
			r, skip, err = t.tombstone(ctx, b.tbl, keys, rec)
		default:
			r, skip, err = t.extract(rec, b.tbl)
		}
		if err == nil && !skip {
			if err = b.add(&r); err == nil {
				if keys != nil {
					keys.observe(rec.Key, &r)
				}
				if walk != nil && key != "" && rec.Value != nil {
					_, off := coords(rec)
					walk.observe(key, off, r.deleted)
				}
			}
		}
		if err != nil {
			if connect.IsDataError(err) {
				err = t.report(ctx, rec, b.tbl, err)
			}
			if err != nil {
				return 0, nil, err
			}
		}
	}
	return n, walk, nil
}

// readMarkers adds the keys of recs, the next records of the block, to the walk, with their markers as
// they stand before the block's first offset.
func (t *Task) readMarkers(ctx context.Context, tbl *tableInfo, tp connect.TopicPartition, first int64, w *deleteWalk, recs []*connect.SinkRecord) error {
	var ids []string
	for _, rec := range recs {
		id := ""
		if fields, err := keyFields(rec.Key, tbl); err == nil {
			id = markerKey(fields)
		} // else: reported when the record is written, if it is a tombstone
		w.ids = append(w.ids, id)
		if _, known := w.read[id]; id != "" && !known {
			w.read[id] = struct{}{}
			ids = append(ids, id)
		}
	}
	open, err := t.markers.open(ctx, tbl, tp.Topic, tp.Partition, first, ids)
	for id := range open {
		w.start[id] = true
	}
	return err
}

func (t *Task) report(ctx context.Context, rec *connect.SinkRecord, tbl *tableInfo, cause error) error {
	tp, off := coords(rec)
	err := connect.DataErrorf("clickhouse: record %s@%d cannot be written to %s.%s: %v", tp, off, tbl.db, tbl.name, cause)
	var rep connect.ErrantRecordReporter
	if t.Ctx != nil {
		rep = t.Ctx.ErrantRecordReporter()
	}
	if rep == nil {
		return err
	}
	t.repMu.Lock()
	defer t.repMu.Unlock()
	if rerr := rep.Report(ctx, rec, err); rerr != nil {
		return rerr
	}
	t.written.errant++ // under repMu
	return nil
}

// insert sends one block as one INSERT, retrying retriable failures with the same token.
func (t *Task) insert(ctx context.Context, b *block, into, token string) error {
	body, input := b.input(into)
	for _, c := range input {
		if err := prepare(c.Data.(column)); err != nil {
			return err
		}
	}
	settings := []ch.Setting{{Key: "insert_deduplication_token", Value: token, Important: true}}
	for _, s := range t.cfg.insertSettings() {
		settings = append(settings, ch.Setting{Key: s.Key, Value: s.Value, Important: true})
	}
	deadline := time.Now().Add(t.cfg.RetryTimeout)
	var err error
	for attempt := 0; ; attempt++ {
		err = t.pool.do(ctx, func(c *ch.Client) error {
			qctx, cancel := context.WithTimeout(ctx, t.cfg.InsertTimeout)
			defer cancel()
			return c.Do(qctx, ch.Query{Body: body, Input: input, Settings: settings})
		})
		if err == nil {
			t.mu.Lock()
			t.written.rows += int64(b.rows)
			t.written.blocks++
			t.mu.Unlock()
			return nil
		}
		if ex, ok := ch.AsException(err); ok && (ex.Code == 16 || ex.Code == 47 || ex.Code == 53) {
			// NO_SUCH_COLUMN_IN_TABLE / UNKNOWN_IDENTIFIER / TYPE_MISMATCH: the table changed under us.
			t.tables.invalidate(b.tbl.db, b.tbl.name)
		}
		if !isRetriable(err) || attempt+1 >= max(t.cfg.RetryCount, 1) || time.Now().After(deadline) {
			break
		}
		t.log.Warn("insert failed; retrying", "table", b.tbl.db+"."+b.tbl.name, "token", token, "attempt", attempt+1, "err", err)
		select {
		case <-time.After(backoff(attempt)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("clickhouse: insert into %s.%s (token %s): %w", b.tbl.db, b.tbl.name, token, err)
}

func (t *Task) takeBlock(tbl *tableInfo) (*block, error) {
	key := tbl.db + "." + tbl.name
	t.mu.Lock()
	if bs := t.blocks[key]; len(bs) > 0 {
		b := bs[len(bs)-1]
		t.blocks[key] = bs[:len(bs)-1]
		t.mu.Unlock()
		if b.tbl == tbl {
			b.reset()
			return b, nil
		}
	} else {
		t.mu.Unlock()
	}
	return newBlock(tbl, t.cfg)
}

func (t *Task) giveBlock(b *block) {
	b.reset()
	t.mu.Lock()
	key := b.tbl.db + "." + b.tbl.name
	t.blocks[key] = append(t.blocks[key], b)
	t.mu.Unlock()
}
