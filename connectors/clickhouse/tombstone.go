package clickhouse

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Tombstones in CDC mode. A tombstone (null value) carries only the key. Debezium sends one after each
// delete event, and ExtractNewRecordState's default delete.tombstone.handling.mode=tombstone turns the
// delete itself into one. The rule:
//   - a tombstone whose key's latest versioned event in Kafka order is a delete belongs to that delete and
//     writes nothing, whether the delete won or was stale: a stale delete's tombstone is stale with it.
//     Across blocks, Put calls and tasks that event is known from the delete markers (markers.go);
//   - otherwise it is bare and deletes the key at the highest version seen for it: the larger of its
//     highest version in the records of the same block (not written yet) and the version of its current
//     row in the table (read with FINAL; earlier blocks and Put calls are written before a later block is
//     filled). A key seen neither in the block nor live in the table needs no delete, nor does one whose
//     highest version in the block is a delete. The delete row gets the smallest version above it
//     (versionAfter), so that a redelivery of that live event cannot win the tie; within the block the
//     delete counts at the version itself, so an event at the next position outranks it.
// The delete row holds the key columns, the version and is_deleted = 1 (other columns get defaults).

func hasTombstone(recs []*connect.SinkRecord) bool {
	for _, r := range recs {
		if r.Value == nil {
			return true
		}
	}
	return false
}

// keyTracker follows, per key, the highest version over the records of one block and whether the event
// at that version is a delete (on a tie the delete wins).
type keyTracker struct {
	tbl    *tableInfo
	verCol string
	verTyp string
	keys   map[string]*keyState
}

type keyState struct {
	version any  // position or a value of the row's version column
	deleted bool // the event at version is a delete
}

func newKeyTracker(tbl *tableInfo, verCol string) *keyTracker {
	k := &keyTracker{tbl: tbl, verCol: verCol, keys: map[string]*keyState{}}
	if i, ok := tbl.byName[verCol]; ok {
		k.verTyp = tbl.columns[i].typ
	}
	return k
}

func (k *keyTracker) observe(key any, r *row) {
	ver := r.version
	if ver == nil {
		ver, _ = lookup(r.value, k.verCol)
	}
	k.observeAt(key, ver, r.deleted)
}

// observeAt records an event of the key at ver. A bare tombstone's delete is recorded at the version it
// deletes at, not at the version after it that its row carries: that one only breaks the table's tie
// with a redelivery, and an event at it (a re-create one position later) outranks the delete.
func (k *keyTracker) observeAt(key any, ver any, deleted bool) {
	fields, err := keyFields(key, k.tbl)
	if err != nil {
		return
	}
	id := keyString(fields)
	st := k.keys[id]
	if st == nil {
		k.keys[id] = &keyState{version: ver, deleted: deleted}
		return
	}
	c, ok := k.compare(ver, st.version)
	switch {
	case !ok || c > 0:
		st.version, st.deleted = ver, deleted
	case c == 0 && deleted:
		st.deleted = true
	}
}

// compare orders two versions: positions, values of the version column (as the block or the table holds
// them); a position is compared as the column holds it when the other is a column value.
func (k *keyTracker) compare(a, b any) (int, bool) {
	pa, okA := a.(position)
	pb, okB := b.(position)
	if okA && okB {
		return pa.cmp(pb), true
	}
	var err error
	if okA {
		if a, err = pa.forColumn(k.verTyp); err != nil {
			return 0, false
		}
	}
	if okB {
		if b, err = pb.forColumn(k.verTyp); err != nil {
			return 0, false
		}
	}
	return compareRowVersions(a, b)
}

// tombstone resolves a tombstone into a delete row and the version it deletes at, or skip.
func (t *Task) tombstone(ctx context.Context, tbl *tableInfo, keys *keyTracker, rec *connect.SinkRecord) (row, any, bool, error) {
	fields, err := keyFields(rec.Key, tbl)
	if err != nil {
		return row{}, nil, false, connect.DataErrorf("tombstone: %v", err)
	}
	for name := range fields {
		if _, ok := tbl.byName[name]; !ok {
			return row{}, nil, false, connect.DataErrorf("tombstone: key field %q is not a column of the table", name)
		}
	}
	r := row{value: fields, deleted: true, cdc: true}
	st := keys.keys[keyString(fields)]
	if st != nil && st.version == nil {
		return row{}, nil, true, nil
	}
	// The block's records are not in the table yet, and the table holds what earlier blocks wrote: the
	// highest version is the larger of the two (a stale redelivery in this block must not hide a later
	// event written before it). When it is the block's and its event is a delete, that delete is written.
	stored, found, err := t.currentVersion(ctx, tbl, fields)
	if err != nil {
		return row{}, nil, false, err
	}
	var ver any
	switch {
	case st != nil && found:
		if c, ok := keys.compare(stored, st.version); ok && c > 0 {
			ver = stored
		} else if st.deleted {
			return row{}, nil, true, nil
		} else {
			ver = st.version
		}
	case st != nil:
		if st.deleted {
			return row{}, nil, true, nil
		}
		ver = st.version
	case found:
		ver = stored
	default:
		return row{}, nil, true, nil // no current row: nothing to delete
	}
	r.version = versionAfter(ver)
	return r, ver, false, nil
}

// currentVersion reads the version of the key's current (not deleted) row: a time for a date/time
// column (rendered in UTC, so that it is written back as the same instant), else its text.
func (t *Task) currentVersion(ctx context.Context, tbl *tableInfo, fields map[string]any) (any, bool, error) {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var where []string
	for _, n := range names {
		where = append(where, keyPredicate(n, fields[n]))
	}
	verCol := t.cfg.versionColumn(tbl)
	render := "toString(" + quoteIdent(verCol) + ")"
	if isTimeColumn(tbl, verCol) {
		render = "toString(" + quoteIdent(verCol) + ", 'UTC')" // compared with the block's times in UTC
	}
	sql := fmt.Sprintf("SELECT %s FROM %s FINAL WHERE %s LIMIT 1", render, tbl.qualified(), strings.Join(where, " AND "))
	rows, err := t.pool.selectStrings(ctx, sql, 1)
	if err != nil {
		return nil, false, fmt.Errorf("clickhouse: reading the current version of a tombstone's key in %s.%s: %w", tbl.db, tbl.name, err)
	}
	if len(rows) == 0 {
		return nil, false, nil
	}
	if isTimeColumn(tbl, verCol) {
		if ts, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", rows[0][0], time.UTC); err == nil {
			return ts, true, nil
		}
	}
	return rows[0][0], true, nil
}

func isTimeColumn(tbl *tableInfo, col string) bool {
	i, ok := tbl.byName[col]
	return ok && strings.Contains(tbl.columns[i].typ, "DateTime")
}

func keyPredicate(col string, v any) string {
	c := quoteIdent(col)
	switch x := v.(type) {
	case string:
		return c + " = " + quoteString(x)
	case bool:
		if x {
			return c + " = 1"
		}
		return c + " = 0"
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return fmt.Sprintf("%s = %d", c, x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return c + " = " + strconv.FormatInt(int64(x), 10)
		}
	}
	return "toString(" + c + ") = " + quoteString(fmt.Sprint(v))
}

// keyFields are the key's fields by name. A key that is not a struct or map names the table's single
// ORDER BY column.
func keyFields(key any, tbl *tableInfo) (map[string]any, error) {
	switch k := key.(type) {
	case nil:
		return nil, fmt.Errorf("the record has no key")
	case *connect.Struct:
		out := map[string]any{}
		for _, f := range k.Schema().Fields() {
			out[f.Name] = k.GetIndex(f.Index)
		}
		return out, nil
	case map[string]any:
		return k, nil
	case map[any]any:
		out := map[string]any{}
		for kk, v := range k {
			out[fmt.Sprint(kk)] = v
		}
		return out, nil
	}
	col := strings.Trim(strings.TrimSpace(tbl.sortingKey), "`")
	if _, ok := tbl.byName[col]; !ok {
		return nil, fmt.Errorf("the key %v is not a struct or map, and the table's ORDER BY (%s) is not one column", key, tbl.sortingKey)
	}
	return map[string]any{col: key}, nil
}

func keyString(fields map[string]any) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%v\x00", n, fields[n])
	}
	return b.String()
}
