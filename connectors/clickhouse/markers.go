package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
)

// Delete markers: whether a key's latest versioned (non-tombstone) event in Kafka order is a delete. A
// tombstone then belongs to that delete and changes nothing, even when the delete was stale and the key
// is live; the target table cannot tell, as a stale delete loses to the live row there. The answer must
// hold across blocks, Put calls, commits and task restarts, so it is kept in ClickHouse, in one MergeTree
// of history rows (target table, topic, partition, key, offset of the event, open) in the sink's database.
//
// A row states a fact about one event: after the versioned event at offset, the key's latest versioned
// event is a delete (open) or not. That is true whichever attempt or block wrote it, so rows are never
// removed and a replay may write them again. The state before a block that starts at offset X is the row
// with the highest offset below X: rows at X and above (an earlier attempt of this or a later range) are
// facts about events not applied yet, and are ignored.
//
// A block writes, for each key whose state was not the same throughout the block, one row at the key's
// last versioned event of the block, before the block's data. Then for every later block start the row
// with the highest offset below it is the key's true state: the block's own row is at the key's latest
// event before it, and any other attempt's row in the block's range is a fact about an earlier event of
// the same block, which a key without a change in the block agrees with.

type markerStore struct {
	cfg   *Config
	pool  *pool
	table string // quoted db.table

	own *ownTable

	mu      sync.Mutex
	present map[string]bool // per target table and partition: whether it has marker rows (absent: not known)
}

func newMarkerStore(cfg *Config, p *pool) *markerStore {
	own := newOwnTable(cfg, p, cfg.StateTable+"_tombstones", "the delete marker table",
		"(target String, topic String, partition Int32, key String, offset Int64, open UInt8)"+
			" ENGINE = MergeTree ORDER BY (target, topic, partition, key, offset)")
	return &markerStore{cfg: cfg, pool: p, own: own, table: own.name, present: map[string]bool{}}
}

func (m *markerStore) init(ctx context.Context) error { return m.own.ensure(ctx) }

func presenceKey(tbl *tableInfo, topic string, partition int32) string {
	return tbl.db + "." + tbl.name + "/" + topic + "-" + strconv.Itoa(int(partition))
}

// forget drops what is known of a partition: its next owner may have written markers since.
func (m *markerStore) forget(topic string, partition int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	suffix := "/" + topic + "-" + strconv.Itoa(int(partition))
	for k := range m.present {
		if strings.HasSuffix(k, suffix) {
			delete(m.present, k)
		}
	}
}

func (m *markerStore) where(tbl *tableInfo, topic string, partition int32) string {
	return fmt.Sprintf("target = %s AND topic = %s AND partition = %d",
		quoteString(tbl.db+"."+tbl.name), quoteString(topic), partition)
}

// maxInList bounds the text of one key list, well below ClickHouse's max_query_size (256 KiB).
const maxInList = 128 << 10

// open returns the keys among keys whose marker is open before offset: at most one query for a block
// (more only for key lists beyond maxInList), none while the partition is known to have no markers.
func (m *markerStore) open(ctx context.Context, tbl *tableInfo, topic string, partition int32, offset int64, keys []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	pk := presenceKey(tbl, topic, partition)
	m.mu.Lock()
	present, known := m.present[pk]
	m.mu.Unlock()
	if known && !present {
		return out, nil
	}
	if err := m.init(ctx); err != nil {
		return nil, err
	}
	where := m.where(tbl, topic, partition)
	if !known {
		rows, err := m.pool.selectStrings(ctx, "SELECT 'x' FROM "+m.table+" WHERE "+where+" LIMIT 1", 1)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: reading delete markers of %s.%s: %w", tbl.db, tbl.name, err)
		}
		m.mu.Lock()
		m.present[pk] = len(rows) > 0
		m.mu.Unlock()
		if len(rows) == 0 {
			return out, nil
		}
	}
	sort.Strings(keys)
	for len(keys) > 0 {
		var list strings.Builder
		n := 0
		for n < len(keys) && (n == 0 || list.Len() < maxInList) {
			if n > 0 {
				list.WriteString(", ")
			}
			list.WriteString(quoteString(keys[n]))
			n++
		}
		keys = keys[n:]
		sql := fmt.Sprintf("SELECT key FROM %s WHERE %s AND offset < %d AND key IN (%s) GROUP BY key HAVING argMax(open, offset) = 1",
			m.table, where, offset, list.String())
		rows, err := m.pool.selectStrings(ctx, sql, 1)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: reading delete markers of %s.%s: %w", tbl.db, tbl.name, err)
		}
		for _, r := range rows {
			out[r[0]] = true
		}
	}
	return out, nil
}

type marker struct {
	key    string
	offset int64
	open   bool
}

// write stores markers; it is called before the block's data is inserted, so that markers never fall
// behind the data. Repeating rows is harmless, so there is no deduplication.
func (m *markerStore) write(ctx context.Context, tbl *tableInfo, topic string, partition int32, ms []marker) error {
	if len(ms) == 0 {
		return nil
	}
	if err := m.init(ctx); err != nil {
		return err
	}
	var (
		tblC, topicC, keyC proto.ColStr
		partC              proto.ColInt32
		offC               proto.ColInt64
		openC              proto.ColUInt8
	)
	name := tbl.db + "." + tbl.name
	for _, mk := range ms {
		tblC.Append(name)
		topicC.Append(topic)
		partC.Append(partition)
		keyC.Append(mk.key)
		offC.Append(mk.offset)
		if mk.open {
			openC.Append(1)
		} else {
			openC.Append(0)
		}
	}
	// Known present from here on: the insert may land even when its answer is lost.
	m.mu.Lock()
	m.present[presenceKey(tbl, topic, partition)] = true
	m.mu.Unlock()
	in := proto.Input{{Name: "target", Data: &tblC}, {Name: "topic", Data: &topicC}, {Name: "partition", Data: &partC},
		{Name: "key", Data: &keyC}, {Name: "offset", Data: &offC}, {Name: "open", Data: &openC}}
	err := m.pool.do(ctx, func(c *ch.Client) error {
		return c.Do(ctx, ch.Query{
			Body:     "INSERT INTO " + m.table + " (target, topic, partition, key, offset, open) VALUES",
			Input:    in,
			Settings: []ch.Setting{ch.SettingInt("async_insert", 0), ch.SettingInt("insert_deduplicate", 0)},
		})
	})
	if err != nil {
		return fmt.Errorf("clickhouse: writing delete markers of %s.%s: %w", tbl.db, tbl.name, err)
	}
	return nil
}

// markerKey renders a key's fields for the marker table: sorted by name, values quoted, so that it is
// the same for every task and record of the key.
func markerKey(fields map[string]any) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(markerValue(fields[n])))
	}
	return b.String()
}

// markerValue renders one key value as the same text whatever numeric type the converter gave it (a
// schemaless JSON number is a float64, the same field with a schema an int64): the markers are stored and
// must still be found after the converter's settings change.
func markerValue(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return markerValue(float64(x))
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return strconv.FormatInt(n, 10)
		}
		return x.String()
	}
	return fmt.Sprint(v)
}

// deleteWalk follows, over the records of one block in Kafka order, whether each key's latest versioned
// event is a delete, starting from the markers before the block.
type deleteWalk struct {
	ids   []string            // the key of each record of the block read so far ("": it has no usable key)
	read  map[string]struct{} // keys whose markers are read
	start map[string]bool     // keys whose marker is open before the block
	keys  map[string]*walkKey
	order []string
}

type walkKey struct {
	deleted bool  // the latest versioned event of the block is a delete
	offset  int64 // its offset
	changed bool  // some versioned event of the block differed from the state before the block
}

// afterDelete reports whether a tombstone of the key now belongs to a delete.
func (w *deleteWalk) afterDelete(key string) bool {
	if k := w.keys[key]; k != nil {
		return k.deleted
	}
	return w.start[key]
}

// observe records a versioned event that the block holds.
func (w *deleteWalk) observe(key string, offset int64, deleted bool) {
	k := w.keys[key]
	if k == nil {
		k = &walkKey{}
		w.keys[key] = k
		w.order = append(w.order, key)
	}
	k.deleted, k.offset = deleted, offset
	if deleted != w.start[key] {
		k.changed = true
	}
}

// markers are the rows the block must write.
func (w *deleteWalk) markers() []marker {
	var out []marker
	for _, key := range w.order {
		if k := w.keys[key]; k.changed {
			out = append(out, marker{key: key, offset: k.offset, open: k.deleted})
		}
	}
	return out
}
