package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
)

// Exactly-once state, kept in ClickHouse itself (no Keeper/KeeperMap): one row per (table, topic,
// partition) and version in a ReplacingMergeTree, read with FINAL. Every insert block is bracketed by
// BEFORE(min,max) and AFTER(min,max) rows, as in the official sink's state machine:
//   - AFTER(min,max): every record up to max is in the table; a replay drops offsets <= max.
//   - BEFORE(min,max): the block [min,max] may or may not have landed. The replay re-inserts exactly the
//     records [min,max] as one block with the same insert_deduplication_token, which the table's
//     deduplication window absorbs. Tables without such a window go through a staging table instead
//     (staging.go), which makes this case exact too.

const (
	stateBefore = "BEFORE"
	stateStaged = "STAGED" // block in the staging table, not yet moved (tables without a dedup window)
	stateAfter  = "AFTER"
)

type partState struct {
	min, max int64
	state    string // "", BEFORE, AFTER
	ver      uint64 // the row's version in the state table (set by get and set)
}

type stateStore struct {
	cfg   *Config
	pool  *pool
	table string // quoted db.table

	own       *ownTable
	checkOnce sync.Once
	checkErr  error

	mu    sync.Mutex
	cache map[string]partState
	seq   uint64
}

func newStateStore(cfg *Config, p *pool) *stateStore {
	own := newOwnTable(cfg, p, cfg.StateTable, "exactly-once state table",
		"(key String, minOffset Int64, maxOffset Int64, state String, ver UInt64, updated DateTime64(3) DEFAULT now64(3))"+
			" ENGINE = ReplacingMergeTree(ver) ORDER BY key")
	return &stateStore{cfg: cfg, pool: p, own: own, table: own.name, cache: map[string]partState{}}
}

func (s *stateStore) init(ctx context.Context) error {
	if err := s.own.ensure(ctx); err != nil {
		return err
	}
	s.checkOnce.Do(func() { s.checkErr = s.checkEngine(ctx) })
	return s.checkErr
}

// SharedStateError is exactly-once state this sink cannot share: the official ClickHouse sink's (JVM workers
// run or ran the connector with exactlyOnce), which keeps it in a KeeperMap table of the same name, one row
// per key, with other state names. Two halves each trusting their own view of a partition's state would
// insert blocks twice or skip them, so the task fails with this instead.
type SharedStateError struct {
	Table, Detail string
}

func (e *SharedStateError) Error() string {
	return "clickhouse: exactly-once state " + e.Table + " " + e.Detail + ": the official ClickHouse sink (a JVM worker) " +
		"keeps its exactly-once state there, and connectd cannot share it with that sink; run the connector's tasks on " +
		"one kind of worker, or give connectd another state table (zkDatabase) and let it start from the committed offsets"
}

// checkEngine refuses a state table that is not this sink's (the official sink creates it with KeeperMap).
func (s *stateStore) checkEngine(ctx context.Context) error {
	var engine proto.ColStr
	err := s.pool.do(ctx, func(c *ch.Client) error {
		engine.Reset()
		return c.Do(ctx, ch.Query{
			Body: "SELECT engine FROM system.tables WHERE database = " + quoteString(s.cfg.Database) +
				" AND name = " + quoteString(s.cfg.StateTable),
			Result: proto.Results{{Name: "engine", Data: &engine}},
		})
	})
	if err != nil {
		return fmt.Errorf("clickhouse: reading the engine of the exactly-once state table %s: %w", s.table, err)
	}
	if engine.Rows() > 0 && !strings.HasSuffix(engine.Row(0), "ReplacingMergeTree") {
		return &SharedStateError{Table: s.table, Detail: "is a " + engine.Row(0) + " table, not this sink's ReplacingMergeTree"}
	}
	return nil
}

func (s *stateStore) key(tbl *tableInfo, topic string, partition int32) string {
	return s.cfg.StatePrefix + "/" + tbl.db + "." + tbl.name + "/" + topic + "-" + strconv.Itoa(int(partition))
}

func (s *stateStore) forget(topic string, partition int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	suffix := "/" + topic + "-" + strconv.Itoa(int(partition))
	for k := range s.cache {
		if len(k) >= len(suffix) && k[len(k)-len(suffix):] == suffix {
			delete(s.cache, k)
		}
	}
}

func (s *stateStore) get(ctx context.Context, key string) (partState, error) {
	s.mu.Lock()
	st, ok := s.cache[key]
	s.mu.Unlock()
	if ok {
		return st, nil
	}
	if err := s.init(ctx); err != nil {
		return st, err
	}
	var (
		minC, maxC proto.ColInt64
		stC        proto.ColStr
		verC       proto.ColUInt64
	)
	err := s.pool.do(ctx, func(c *ch.Client) error {
		minC.Reset()
		maxC.Reset()
		stC.Reset()
		verC.Reset()
		return c.Do(ctx, ch.Query{
			Body: "SELECT minOffset, maxOffset, state, ver FROM " + s.table + " FINAL WHERE key = " + quoteString(key),
			Result: proto.Results{{Name: "minOffset", Data: &minC}, {Name: "maxOffset", Data: &maxC}, {Name: "state", Data: &stC},
				{Name: "ver", Data: &verC}},
		})
	})
	if err != nil {
		return st, fmt.Errorf("clickhouse: reading exactly-once state %s: %w", key, err)
	}
	if minC.Rows() > 0 {
		st = partState{min: minC.Row(0), max: maxC.Row(0), state: stC.Row(0), ver: verC.Row(0)}
		switch {
		case st.state != stateBefore && st.state != stateStaged && st.state != stateAfter:
			return partState{}, &SharedStateError{Table: s.table, Detail: fmt.Sprintf("holds %s in state %q", key, st.state)}
		case st.ver == 0: // this sink writes at least the wall clock in nanoseconds
			return partState{}, &SharedStateError{Table: s.table, Detail: "holds " + key + " written without a version"}
		}
	}
	s.mu.Lock()
	s.cache[key] = st
	s.mu.Unlock()
	return st, nil
}

func (s *stateStore) set(ctx context.Context, key string, st partState) error {
	if err := s.init(ctx); err != nil {
		return err
	}
	// The row must outrank every earlier row of the key, whichever task or process wrote it: above the
	// version last read or written for the key (a partition's new owner reads the state before it writes),
	// above this store's last version, and at least the wall clock in nanoseconds.
	s.mu.Lock()
	ver := max(s.seq+1, s.cache[key].ver+1, uint64(time.Now().UnixNano()))
	s.seq = ver
	st.ver = ver
	s.mu.Unlock()
	var (
		k, state proto.ColStr
		mn, mx   proto.ColInt64
		v        proto.ColUInt64
	)
	k.Append(key)
	mn.Append(st.min)
	mx.Append(st.max)
	state.Append(st.state)
	v.Append(ver)
	in := proto.Input{{Name: "key", Data: &k}, {Name: "minOffset", Data: &mn}, {Name: "maxOffset", Data: &mx},
		{Name: "state", Data: &state}, {Name: "ver", Data: &v}}
	err := s.pool.do(ctx, func(c *ch.Client) error {
		return c.Do(ctx, ch.Query{
			Body:     "INSERT INTO " + s.table + " (key, minOffset, maxOffset, state, ver) VALUES",
			Input:    in,
			Settings: []ch.Setting{ch.SettingInt("async_insert", 0), ch.SettingInt("insert_deduplicate", 0)},
		})
	})
	if err != nil {
		s.mu.Lock()
		delete(s.cache, key) // unknown now
		s.mu.Unlock()
		return fmt.Errorf("clickhouse: writing exactly-once state %s: %w", key, err)
	}
	s.mu.Lock()
	s.cache[key] = st
	s.mu.Unlock()
	return nil
}
