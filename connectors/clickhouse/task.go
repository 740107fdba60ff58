package clickhouse

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/ClickHouse/ch-go"

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
