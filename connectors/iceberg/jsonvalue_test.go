package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/converters/jsonconv"
)

// TestJSONValueModel: a task given unconverted JSON objects (jsonvalue.Value, as the worker hands them
// when the value converter is schemaless JsonConverter and no SMT runs, their members listed or not)
// ends with the same table, the same schema and the same records reported to the DLQ as a task given
// the converter's maps, over records of one shape and of others: nulls, missing and new members
// (evolved at Put), numbers that do not fit, repeated names, escapes, nested values, integers beyond
// 18 digits, a member named op.
func TestJSONValueModel(t *testing.T) {
	seed := modelSeed(t, "JSONVALUE_SEED", 11)
	// append, and upsert tables keyed by id (50 keys shared by both partitions), ordered by Kafka
	// order or by the member n as version
	modes := []struct {
		name  string
		keys  int
		props map[string]string
	}{
		{"append", 0, nil},
		{"upsert", 50, map[string]string{KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"}},
		{"upsert-versioned", 50, map[string]string{KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true", KeyVersionColumn: "n"}},
	}
	for _, mode := range modes {
		for _, evolve := range []string{"true", "false"} {
			t.Run(mode.name+"/evolve="+evolve, func(t *testing.T) { jsonValueModel(t, seed, mode.keys, mode.props, evolve) })
		}
	}
}

func jsonValueModel(t *testing.T, seed int64, keys int, extra map[string]string, evolve string) {
	rng := rand.New(rand.NewSource(seed))
	conv := schemalessConverter(t)
	const parts, perPart = 2, 3000
	var logs [parts][][]byte
	for p := range parts {
		for off := range perPart {
			logs[p] = append(logs[p], []byte(jsonValueRecord(rng, p, off, keys)))
		}
	}
	type side struct {
		task  *Task
		dctx  *dlqCtx
		props map[string]string
	}
	var sides [2]side
	for i := range sides {
		conf := map[string]string{KeyTables: "shop.events", "iceberg.tables.evolve-schema-enabled": evolve}
		for k, v := range extra {
			conf[k] = v
		}
		props, _ := sinkProps(t, conf)
		task, dctx := startDLQTask(t, props)
		sides[i] = side{task, dctx, props}
	}
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	pos := [parts]int{}
	fast, asBytes := 0, 0
	for pos[0] < perPart || pos[1] < perPart {
		p := rng.Intn(parts)
		end := min(perPart, pos[p]+rng.Intn(300)+1)
		for i, s := range sides {
			var batch []*connect.SinkRecord
			for off := pos[p]; off < end; off++ {
				r := &connect.SinkRecord{Topic: "ev", Partition: int32(p), Offset: int64(off)}
				if i == 0 {
					jv := &jsonvalue.Value{Bytes: logs[p][off], Topic: "ev", Conv: conv}
					if rng.Intn(2) == 0 { // listed, as the worker hands them, or found by the sink
						jv.Members, _ = conv.SchemalessJSONObject(jv.Bytes, nil)
					}
					r.Value = jv
				} else {
					sv, err := conv.ToConnectData("ev", nil, logs[p][off])
					require.NoError(t, err)
					r.Value = sv.Value
				}
				r.OriginalTopic, r.OriginalPartition, r.OriginalOffset = r.Topic, r.Partition, r.Offset
				batch = append(batch, r)
			}
			before := s.task.nbuf
			require.NoError(t, s.task.Put(ctx, batch))
			if i == 0 {
				fast += s.task.nbuf - before
			}
		}
		pos[p] = end
		if rng.Intn(8) == 0 {
			asBytes += bufferedAsBytes(sides[0].task)
			// now and then a round's answer is lost after its table committed: the round fails, its
			// records go back into the buffers in front of what comes next, and the next round skips
			// what the table holds
			var hooks *roundHooks
			if rng.Intn(3) == 0 {
				hooks = &roundHooks{afterTableCommit: func(string) error { return fmt.Errorf("injected: answer lost") }}
			}
			for _, s := range sides {
				s.task.coord.hooks.Store(hooks)
				ok := s.task.coord.CommitNow(ctx)
				s.task.coord.hooks.Store(nil)
				require.Equal(t, hooks == nil, ok, s.task.coord.stats().LastError)
			}
		}
	}
	asBytes += bufferedAsBytes(sides[0].task)
	if keys > 0 {
		require.Positive(t, asBytes, "no record buffered as its bytes")
	}
	var tables [2][]string
	var reported [2][]string
	for i, s := range sides {
		require.True(t, s.task.coord.CommitNow(ctx), s.task.coord.stats().LastError)
		require.NoError(t, s.task.Stop())
		_, meta := loadTable(t, s.props, "shop.events")
		tables[i] = duckRows(t, meta, "SELECT * FROM t")
		sort.Strings(tables[i])
		for _, r := range s.dctx.reported {
			reported[i] = append(reported[i], fmt.Sprintf("%d/%d", r.Partition, r.Offset))
		}
		sort.Strings(reported[i])
		cat, _ := loadTable(t, s.props, "shop.events")
		tbl, err := cat.LoadTable(ctx, []string{"shop", "events"})
		require.NoError(t, err)
		tables[i] = append(tables[i], tbl.Schema().String())
	}
	require.Equal(t, tables[1], tables[0])
	require.Equal(t, reported[1], reported[0])
	if keys == 0 {
		require.Equal(t, parts*perPart, len(tables[0])-1+len(reported[0]), "every record is a row or reported")
	} else {
		require.Equal(t, keys, len(tables[0])-1) // every key has a row
	}
	t.Logf("%d rows, %d reported, %d records buffered, %d of them as bytes when a round took them", len(tables[0])-1, len(reported[0]), fast, asBytes)
}

// schemalessConverter is JsonConverter with schemas.enable=false, as the worker configures it.
func schemalessConverter(t testing.TB) *jsonconv.Converter {
	t.Helper()
	conv := &jsonconv.Converter{}
	require.NoError(t, conv.Configure(map[string]string{"schemas.enable": "false"}, false))
	return conv
}

// bufferedAsBytes counts the records task holds as their JSON bytes (jsonkeyed.go).
func bufferedAsBytes(task *Task) int {
	task.mu.Lock()
	defer task.mu.Unlock()
	n := 0
	for _, recs := range task.buf {
		for _, r := range recs {
			if r.JSON != nil {
				n++
			}
		}
	}
	return n
}

// jsonValueRecord is a flat object of a common shape, or now and then of another; with keys, its id
// is one of that many.
func jsonValueRecord(rng *rand.Rand, p, off, keys int) string {
	id := fmt.Sprintf(`"id":"%d-%d"`, p, off)
	if keys > 0 {
		id = fmt.Sprintf(`"id":"k%d"`, (off+p*7)%keys)
	}
	members := []string{
		id,
		fmt.Sprintf(`"n":%d`, off),
		fmt.Sprintf(`"amount":%d.%02d`, off, off%100),
		fmt.Sprintf(`"ok":%v`, off%2 == 0),
		`"note":"plain"`,
	}
	c := rng.Intn(40)
	if keys > 0 && (c == 3 || c == 4 || c == 7) {
		// a value that does not fit its column (or the evolved schema) fails a keyed table's commit
		// round rather than reaching the DLQ at put (its rows are converted at the round): not what
		// this test compares
		c = 40
	}
	switch c {
	case 0:
		members[2] = `"amount":null`
	case 1:
		members = members[:3] // ok and note missing
	case 2:
		members = append(members, fmt.Sprintf(`"extra":%d`, off)) // a new column
	case 3:
		members[1] = `"n":"not a number"`
	case 4:
		members[1] = `"n":1234567890123456789012`
	case 5:
		members[4] = `"note":"tab\tand \"quotes\""`
	case 6:
		members = append(members, `"n":7`) // a repeated name
	case 7:
		members[4] = `"note":{"nested":true}`
	case 8:
		members = append(members, `"op":"c"`)
	case 9:
		members[2] = fmt.Sprintf(`"amount":%d`, off) // an integral amount
	case 10:
		members[1] = `"n":-0012`
	case 11:
		members[2] = `"amount":-0.0`
	case 12:
		members[2] = `"amount":1e3`
	case 13:
		members[3] = `"ok":null`
	}
	if rng.Intn(2) == 0 {
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	}
	return "{" + strings.Join(members, ", ") + "}"
}

// FuzzJSONValueRow: a JSON object that appendJSON takes for the shape of its converted map becomes the
// row segment.add makes of that map.
func FuzzJSONValueRow(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"n":-0012,"amount":1e3,"s":"x","ok":true}`,
		`{"amount":-0.0,"id":123456789012345678,"s":"","ok":false,"n":null}`,
		`{"id":7,"amount":2,"s":"a b","x":"ignored"}`,
		`{"id":1,"id":2}`, `{"s":"tab\t"}`, `{"amount":1E-400,"n":00}`, `{"amount":1.5e400}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	conv := schemalessConverter(f)
	sc := arrowSchemaOf(f, `{"id":1,"n":1,"amount":1.5,"s":"x","ok":true}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		m, st, members, ok := convertedShape(t, conv, data)
		if !ok {
			return
		}
		slow, err := icetable.NewSegment(nil, dir, icetable.TP{Topic: "t", Partition: 0}, 1, sc)
		require.NoError(t, err)
		defer slow.Remove()
		js := icerow.CompileShape(st, slow.SchemaID, slow.Fields)
		if js == nil {
			return
		}
		var want []icerow.Row
		for _, listed := range [][]jsonvalue.Member{nil, members} { // found in the bytes, and listed
			fast, err := icetable.NewSegment(nil, dir, icetable.TP{Topic: "t", Partition: 0}, 1, sc)
			require.NoError(t, err)
			defer fast.Remove()
			if ok, err := fast.AppendJSON(js, data, listed, 0); !ok || err != nil {
				require.NoError(t, err)
				require.Nil(t, listed, "%q: taken as found in the bytes, refused as listed", data)
				return
			}
			if want == nil {
				require.NoError(t, slow.Add(m, 0), "appendJSON took %q, segment.add refused its map", data)
				want = segmentRows(t, slow, sc)
			}
			require.Equal(t, want, segmentRows(t, fast, sc), "%q (listed: %v)", data, listed != nil)
		}
	})
}

// convertedShape is the converter's map of a schemaless JSON object, its inferred struct type and the
// members the converter listed (ok false: not such an object).
func convertedShape(t *testing.T, conv *jsonconv.Converter, data []byte) (map[string]any, *ice.StructType, []jsonvalue.Member, bool) {
	members, ok := conv.SchemalessJSONObject(data, []jsonvalue.Member{})
	if !ok {
		return nil, nil, nil, false
	}
	sv, err := conv.ToConnectData("t", nil, data)
	require.NoError(t, err)
	m := sv.Value.(map[string]any)
	return m, icerow.NewSchemaCache().ForSchemaless(m), members, true
}

// arrowSchemaOf is the table schema (with field ids) auto-created for a schemaless record.
func arrowSchemaOf(t testing.TB, record string) *arrow.Schema {
	conv := schemalessConverter(t)
	sv, err := conv.ToConnectData("t", nil, []byte(record))
	require.NoError(t, err)
	st := icerow.NewSchemaCache().ForSchemaless(sv.Value.(map[string]any))
	sc, err := table.SchemaToArrowSchema(ice.NewSchema(0, st.FieldList...), nil, true, false)
	require.NoError(t, err)
	return sc
}

func segmentRows(t *testing.T, s *icetable.Segment, sc *arrow.Schema) []icerow.Row {
	require.NoError(t, s.Seal())
	var rows []icerow.Row
	var n, skipped int
	for rec, err := range s.Batches(sc, s.SchemaID, 0, &n, &skipped) {
		require.NoError(t, err)
		rows = append(rows, icerow.RecordToRows(rec)...)
		rec.Release()
	}
	return rows
}

// FuzzJSONKeyShape: for a JSON object that keyShape.read takes, the key and version are those of
// the converted map (keyOf, the version column's value), for ids of string and long members.
func FuzzJSONKeyShape(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","n":7,"v":"x"}`, `{"n":-0012,"id":"k1","v":null}`, `{"id":"a","id":"b","n":1}`,
		`{"id":"tab\t","n":1}`, `{"id":1,"n":123456789012345678}`, `{"n":1,"id":"é"}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	conv := schemalessConverter(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m, st, members, ok := convertedShape(t, conv, data)
		if !ok {
			return
		}
		for _, o := range []icetable.TableOptions{
			{IDColumns: []string{"id"}, VersionColumn: "n"},
			{IDColumns: []string{"n", "id"}, VersionColumn: "v"},
		} {
			ks := icerow.CompileKeyShape(st, o.IDColumns, o.KeyVersionColumn())
			if ks == nil {
				continue
			}
			kb, ver, ok := ks.Read(data, nil)
			k := string(kb) // kb is valid until the next read
			lk, lver, lok := ks.Read(data, members)
			require.Equal(t, ok, lok, "%q: read found in the bytes and listed", data)
			if !ok {
				continue
			}
			require.Equal(t, k, string(lk), "%q", data)
			require.Equal(t, ver, lver, "%q", data)
			row, _, err := icerow.NewSchemaCache().RecordValue(nil, m)
			require.NoError(t, err)
			require.Equal(t, icerow.KeyOf(row, o.IDColumns), k, "%q", data)
			require.Equal(t, row[o.VersionColumn], ver, "%q", data)
		}
	})
}

// FuzzJSONRoundRows: a keyed record buffered as bytes and planned as such gets, from keyRows, the
// values of the converted map in the planned columns, and from
// buildDataRecord the data (or delete) row that buildRecord makes of the converted map, for the table
// created from its own shape, for another and for the delete rows of a table keyed by id.
func FuzzJSONRoundRows(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"n":-0012,"amount":1e3,"s":"x","ok":true}`, `{"id":"a","n":7,"v":"x"}`,
		`{"amount":-0.0,"id":123456789012345678,"s":"","ok":false,"n":null}`, `{"id":1,"id":2}`,
		`{"id":7,"amount":2,"s":"a b","x":"ignored"}`, `{"s":"tab\t"}`, `{"amount":1E-400,"n":00}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	conv := schemalessConverter(f)
	other := arrowSchemaOf(f, `{"id":1,"n":1,"amount":1.5,"s":"x","ok":true}`)
	deletes := arrowSchemaOf(f, `{"id":1}`) // the equality-delete rows of a table keyed by id
	f.Fuzz(func(t *testing.T, data []byte) {
		m, st, _, ok := convertedShape(t, conv, data)
		if !ok {
			return
		}
		row, _, err := icerow.NewSchemaCache().RecordValue(nil, m)
		require.NoError(t, err)
		jv := &jsonvalue.Value{Bytes: data, Topic: "t", Conv: conv}
		names := []string{"id", "n", "missing"}
		for k := range m {
			names = append(names, k)
		}
		recs := []icetable.Rec{{Op: icerow.OpUpdate, Schema: st, JSON: jv}}
		require.NoError(t, icetable.KeyRows(recs, names, true))
		for _, n := range names {
			require.Equal(t, row[n], recs[0].Row[n], "%q: column %s", data, n)
		}
		own, err := table.SchemaToArrowSchema(ice.NewSchema(0, st.FieldList...), nil, true, false)
		require.NoError(t, err)
		for _, sc := range []*arrow.Schema{own, other, deletes} {
			want, werr := icerow.BuildRecord(sc, []icerow.Row{row})
			got, gerr := icetable.BuildDataRecord(sc, sc.Fields(), 0, []*icetable.Rec{{Op: icerow.OpUpdate, Schema: st, JSON: jv}}, map[*ice.StructType]*icerow.JSONShape{})
			if werr != nil {
				require.Error(t, gerr, "%q: buildRecord refused the map, buildDataRecord took the bytes", data)
				continue
			}
			require.NoError(t, gerr, "%q", data)
			for c := 0; c < int(want.NumCols()); c++ {
				require.True(t, array.Equal(want.Column(c), got.Column(c)), "%q: column %s: %v != %v", data, want.ColumnName(c), want.Column(c), got.Column(c))
			}
			want.Release()
			got.Release()
		}
	})
}

// TestJSONKeyedBufferLikeConverted: a task given unconverted JSON upserts buffers as many records
// per round as one given the converter's maps: converting the buffered bytes at the round leaves
// the record shapes the records after it get (and so which of them supersede others) as they were.
func TestJSONKeyedBufferLikeConverted(t *testing.T) {
	rounds := [][]string{
		{`{"id":"a","n":1}`, `{"id":"b","n":1}`, `{"id":"c","n":1,"note":"x"}`, `{"id":"d","n":1,"note":"x","z":null}`},
		{`{"id":"k","n":2,"note":"x"}`, `{"id":"k","n":5,"note":"x\"y"}`}, // the escape takes the converted way
	}
	conv := schemalessConverter(t)
	ctx := context.Background()
	var buffered [2][]int
	for side := range 2 {
		props, _ := sinkProps(t, map[string]string{KeyTables: "shop.k", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"})
		task, _ := startTask(t, props)
		off := int64(0)
		for _, round := range rounds {
			var batch []*connect.SinkRecord
			for _, v := range round {
				r := &connect.SinkRecord{Topic: "k", Offset: off, OriginalTopic: "k", OriginalOffset: off}
				off++
				if side == 0 {
					r.Value = &jsonvalue.Value{Bytes: []byte(v), Topic: "k", Conv: conv}
				} else {
					sv, err := conv.ToConnectData("k", nil, []byte(v))
					require.NoError(t, err)
					r.Value = sv.Value
				}
				batch = append(batch, r)
			}
			require.NoError(t, task.Put(ctx, batch))
			buffered[side] = append(buffered[side], task.nbuf)
			require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
		}
		require.NoError(t, task.Stop())
	}
	require.Equal(t, buffered[1], buffered[0], "records buffered per round: as bytes vs converted")
}

// TestSupersededBytesReused: a buffered record superseded by the next of its key lends it its bytes,
// but never the bytes of records a round has taken, also when the round gave them back.
func TestSupersededBytesReused(t *testing.T) {
	conv := schemalessConverter(t)
	ctx := context.Background()
	props, _ := sinkProps(t, map[string]string{KeyTables: "shop.k", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"})
	task, _ := startTask(t, props)
	defer func() { require.NoError(t, task.Stop()) }()
	off := int64(0)
	put := func(vs ...string) {
		var batch []*connect.SinkRecord
		for _, v := range vs {
			batch = append(batch, &connect.SinkRecord{Topic: "k", Offset: off, OriginalTopic: "k", OriginalOffset: off,
				Value: &jsonvalue.Value{Bytes: []byte(v), Topic: "k", Conv: conv}})
			off++
		}
		require.NoError(t, task.Put(ctx, batch))
	}
	put(`{"id":"a","n":0}`) // converted: notes the shape
	put(`{"id":"b","n":1}`, `{"id":"b","n":2}`)
	task.mu.Lock()
	require.Len(t, task.buf["shop.k"], 2)
	first := task.buf["shop.k"][1]
	require.Equal(t, `{"id":"b","n":2}`, heldBytes(t, first))
	task.mu.Unlock()

	d := task.drain()
	held := slices.Clone(d.bufs["shop.k"])
	put(`{"id":"b","n":3}`) // a new buffer: nothing to take the place of
	require.Equal(t, `{"id":"b","n":2}`, heldBytes(t, first))
	task.roundFailed(d) // given back in front of the new record
	// the given-back records and the one after them lost their slots (their order must stay): the next
	// record of the key gets one of its own, and the one after it reuses its value and key
	put(`{"id":"b","n":44}`)
	task.mu.Lock()
	last := task.buf["shop.k"][len(task.buf["shop.k"])-1]
	task.mu.Unlock()
	put(`{"id":"b","n":5}`)
	task.mu.Lock()
	defer task.mu.Unlock()
	require.Equal(t, `{"id":"b","n":2}`, heldBytes(t, first), "a round's bytes changed after it was given back")
	for _, r := range held {
		if r.JSON != nil {
			require.Equal(t, `{"id":"b","n":2}`, heldBytes(t, r))
		}
	}
	var got []string
	for _, r := range task.buf["shop.k"] {
		if r.JSON != nil {
			got = append(got, heldBytes(t, r))
		}
	}
	require.Equal(t, []string{`{"id":"b","n":2}`, `{"id":"b","n":3}`, `{"id":"b","n":5}`}, got)
	require.Same(t, last.JSON, task.buf["shop.k"][len(task.buf["shop.k"])-1].JSON, "the superseded record's value was not reused")
	require.Equal(t, `{"id":"b","n":5}`, heldBytes(t, last), "the superseded record's key was not reused")
}

// heldBytes reads the bytes of a record buffered as bytes, from memory or from its task's spill file,
// which is flushed first when the task still writes it (caller holds the task's mu).
func heldBytes(t *testing.T, r icetable.Rec) string {
	t.Helper()
	if r.Key != nil && r.Key.Spill != nil && r.Key.Spill.Buf != nil {
		require.NoError(t, r.Key.Spill.Buf.Flush())
	}
	b, err := r.JSONBytes(nil)
	require.NoError(t, err)
	return string(b)
}

// TestSpillCompacted: the spill file of upserts buffered as bytes keeps the versions its keys
// superseded only until it is spillCompactAt and spillCompactRatio times what is still buffered: then
// the buffered records move to a new file. The round still writes each key's last version, read
// back from wherever its bytes are, also for records given back by a failed round.
func TestSpillCompacted(t *testing.T) {
	conv := schemalessConverter(t)
	ctx := context.Background()
	props, _ := sinkProps(t, map[string]string{KeyTables: "shop.k", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"})
	task, _ := startTask(t, props)
	defer func() { require.NoError(t, task.Stop()) }()
	const keys = 8
	pad := strings.Repeat("x", 64<<10)
	off := int64(0)
	last := map[string]int64{}
	put := func(n int) {
		var batch []*connect.SinkRecord
		for range n {
			id := fmt.Sprintf("k%d", off%keys)
			v := fmt.Sprintf(`{"id":%q,"n":%d,"pad":%q}`, id, off, pad)
			batch = append(batch, &connect.SinkRecord{Topic: "k", Offset: off, OriginalTopic: "k", OriginalOffset: off,
				Value: &jsonvalue.Value{Bytes: []byte(v), Topic: "k", Conv: conv}})
			last[id] = off
			off++
		}
		require.NoError(t, task.Put(ctx, batch))
	}
	put(1) // converted: notes the shape
	// given back by a failed round: these stay in their file through the compactions
	put(keys)
	d := task.drain()
	task.roundFailed(d)
	files := func() (int, int64) {
		task.mu.Lock()
		defer task.mu.Unlock()
		if task.spill == nil {
			return len(task.spills), 0
		}
		return len(task.spills), task.spill.Size
	}
	var maxSize int64
	for range 3 * icetable.SpillCompactAt / 2 / (64 << 10) / 256 {
		put(256)
		_, size := files()
		maxSize = max(maxSize, size)
	}
	n, size := files()
	require.Equal(t, 2, n, "the given-back round's file and the one written now")
	require.Less(t, maxSize, int64(icetable.SpillCompactAt+256*(64<<10+64)), "the file written now was not compacted")
	require.Greater(t, size, int64(0))

	task.mu.Lock()
	got := map[string]int64{}
	for _, r := range task.buf["shop.k"] {
		if r.JSON != nil {
			var v struct {
				ID string `json:"id"`
				N  int64  `json:"n"`
			}
			require.NoError(t, json.Unmarshal([]byte(heldBytes(t, r)), &v))
			got[v.ID] = max(got[v.ID], v.N)
		}
	}
	task.mu.Unlock()
	require.Equal(t, last, got, "each key's last version, read back from the spill files")

	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	_, meta := loadTable(t, props, "shop.k")
	var want []string
	for id, n := range last {
		want = append(want, fmt.Sprintf("%s|%d|%d", id, n, len(pad)))
	}
	sort.Strings(want)
	require.Equal(t, want, duckRows(t, meta, "SELECT id, n, length(pad) FROM t ORDER BY id"))
	n, _ = files()
	require.Equal(t, 0, n, "the committed round's files are closed")
}

// benchShapeRecord is one flat record of the Iceberg benchmark's shape (~406 B, 9 members: longs, a
// double, strings) and its inferred struct type.
func benchShapeRecord(b *testing.B) ([]byte, *ice.StructType) {
	rec := []byte(`{"id":123456,"name":"customer-0123456","email":"customer-0123456@example.com","region":"eu-west",` +
		`"amount":12345.67,"qty":7,"ts":"2026-01-02T10:17:36Z","version":3,"note":"` + strings.Repeat("abcdefghijklmnopqrstuvwxyz", 9) + `"}`)
	sv, err := schemalessConverter(b).ToConnectData("t", nil, rec)
	require.NoError(b, err)
	return rec, icerow.NewSchemaCache().ForSchemaless(sv.Value.(map[string]any))
}

// BenchmarkJSONShapeAppend: benchShapeRecord from its bytes into the builders of its columns, its
// members found in the bytes or listed by the converter's check (jsonvalue.Value.Members).
func BenchmarkJSONShapeAppend(b *testing.B) {
	rec, st := benchShapeRecord(b)
	listed, ok := schemalessConverter(b).SchemalessJSONObject(rec, nil)
	require.True(b, ok)
	for _, bc := range []struct {
		name    string
		members []jsonvalue.Member
	}{{"found", nil}, {"listed", listed}} {
		b.Run(bc.name, func(b *testing.B) {
			sc := arrowSchemaOf(b, string(rec))
			bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			defer bld.Release()
			js := icerow.CompileShape(st, 1, sc.Fields())
			require.NotNil(b, js)
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			for i := range b.N {
				if !js.AppendRow(bld.Fields(), rec, bc.members) {
					b.Fatal("not of the shape")
				}
				if i%icetable.SpoolBatchRows == icetable.SpoolBatchRows-1 {
					bld.NewRecordBatch().Release()
				}
			}
		})
	}
}

// BenchmarkSpoolWrite: rows of benchShapeRecord from their bytes into a segment
// and its spool file, sealed at the end: the Put side of an append table. sys-ns/row is the
// process's system CPU per row (mostly the kernel copying batches into the file's pages: cheap for
// pages the system has cached before, dear on a virtual machine whose host backs guest memory on
// first touch); spool-B/row is the file's size per row.
func BenchmarkSpoolWrite(b *testing.B) {
	rec, st := benchShapeRecord(b)
	s, err := icetable.NewSegment(nil, b.TempDir(), icetable.TP{Topic: "t", Partition: 0}, 1, arrowSchemaOf(b, string(rec)))
	require.NoError(b, err)
	defer s.Remove()
	js := icerow.CompileShape(st, 1, s.Fields)
	require.NotNil(b, js)
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.SetBytes(int64(len(rec)))
	b.ResetTimer()
	for i := range b.N {
		if ok, err := s.AppendJSON(js, rec, nil, int64(i)); !ok || err != nil {
			b.Fatal("not appended", err)
		}
	}
	require.NoError(b, s.Seal())
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	b.ReportMetric(float64(r1.Stime.Nano()-r0.Stime.Nano())/float64(b.N), "sys-ns/row")
	b.ReportMetric(float64(s.Size)/float64(b.N), "spool-B/row")
}

// TestScanListedLikeFound: for random objects against random shapes, memberScan.scan over the members
// the converter listed says what it says finding them in the bytes, with the same value bounds.
func TestScanListedLikeFound(t *testing.T) {
	seed := modelSeed(t, "JSONVALUE_SEED", 3)
	rng := rand.New(rand.NewSource(seed))
	conv := schemalessConverter(t)
	names := []string{"id", "n", "s", "a\"b", "é", "long-member-name-of-forty-bytes-or-so-xx"}
	values := []string{`1`, `-7`, `007`, `123456789012345678`, `-123456789012345678`, `1234567890123456789`,
		`-1234567890123456789`, `1.5`, `-0.0`, `1e3`, `2E-2`, `"x"`, `""`, `"tab\t"`, `"é"`,
		`"` + strings.Repeat("p", 70) + `"`, `true`, `false`, `null`, `{"a":1}`, `[1,"]"]`, `[]`}
	kinds := []ice.Type{ice.PrimitiveTypes.Int64, ice.PrimitiveTypes.Float64, ice.PrimitiveTypes.String, ice.PrimitiveTypes.Bool}
	ws := []string{"", "", " ", "\n\t "}
	taken := 0
	for iter := range 20000 {
		st := &ice.StructType{}
		for i, nm := range names {
			if rng.Intn(2) == 0 {
				st.FieldList = append(st.FieldList, ice.NestedField{ID: i + 1, Name: nm, Type: kinds[rng.Intn(len(kinds))]})
			}
		}
		ms := icerow.NewMemberScan(st)
		// members of the shape with values of their kinds, mostly, else any
		type member struct{ name, value string }
		var mbs []member
		if rng.Intn(2) == 0 {
			for _, f := range st.FieldList {
				v := values[rng.Intn(len(values))]
				if rng.Intn(5) > 0 {
					v = map[ice.Type][]string{
						ice.PrimitiveTypes.Int64:   {`1`, `-7`, `007`, `123456789012345678`, `-123456789012345678`},
						ice.PrimitiveTypes.Float64: {`1.5`, `-0.0`, `1e3`, `2E-2`},
						ice.PrimitiveTypes.String:  {`"x"`, `""`, `"é"`, `"` + strings.Repeat("p", 70) + `"`},
						ice.PrimitiveTypes.Bool:    {`true`, `false`},
					}[f.Type][rng.Intn(2)]
				}
				mbs = append(mbs, member{f.Name, v})
			}
			if rng.Intn(3) == 0 {
				mbs = append(mbs, member{names[rng.Intn(len(names))], values[rng.Intn(len(values))]})
			}
			if rng.Intn(2) == 0 {
				rng.Shuffle(len(mbs), func(i, j int) { mbs[i], mbs[j] = mbs[j], mbs[i] })
			}
		} else {
			for range rng.Intn(7) {
				mbs = append(mbs, member{names[rng.Intn(len(names))], values[rng.Intn(len(values))]})
			}
		}
		var b strings.Builder
		b.WriteString(ws[rng.Intn(len(ws))] + "{")
		for m, mb := range mbs {
			if m > 0 {
				b.WriteString(ws[rng.Intn(len(ws))] + ",")
			}
			fmt.Fprintf(&b, "%s%q%s:%s%s", ws[rng.Intn(len(ws))], mb.name, ws[rng.Intn(len(ws))], ws[rng.Intn(len(ws))], mb.value)
		}
		b.WriteString(ws[rng.Intn(len(ws))] + "}")
		data := []byte(b.String())
		listed, ok := conv.SchemalessJSONObject(data, []jsonvalue.Member{})
		require.True(t, ok, "seed %d, iteration %d: %q", seed, iter, data)
		for range 2 { // the second time with the member order learnt
			found := ms.Scan(data, nil)
			pos, end := slices.Clone(ms.Pos), slices.Clone(ms.End)
			require.Equal(t, found, ms.Scan(data, listed), "seed %d, iteration %d: %q", seed, iter, data)
			if found {
				taken++
				require.Equal(t, pos, ms.Pos, "seed %d, iteration %d: %q", seed, iter, data)
				for m, p := range pos {
					if p >= 0 {
						require.Equal(t, end[m], ms.End[m], "seed %d, iteration %d: %q", seed, iter, data)
					}
				}
			}
		}
	}
	t.Logf("%d of the scans took the object", taken)
}
