package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
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
	conv := icebergtest.SchemalessConverter(t)
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
			var hooks *commit.Hooks
			if rng.Intn(3) == 0 {
				hooks = &commit.Hooks{AfterTableCommit: func(string) error { return fmt.Errorf("injected: answer lost") }}
			}
			for _, s := range sides {
				s.task.coord.tables.SetHooks(hooks)
				ok := s.task.coord.CommitNow(ctx)
				s.task.coord.tables.SetHooks(nil)
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

// bufferedAsBytes counts the records task holds as their JSON bytes (icetable/buffered.go).
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

// TestJSONKeyedBufferLikeConverted: a task given unconverted JSON upserts buffers as many records
// per round as one given the converter's maps: converting the buffered bytes at the round leaves
// the record shapes the records after it get (and so which of them supersede others) as they were.
func TestJSONKeyedBufferLikeConverted(t *testing.T) {
	rounds := [][]string{
		{`{"id":"a","n":1}`, `{"id":"b","n":1}`, `{"id":"c","n":1,"note":"x"}`, `{"id":"d","n":1,"note":"x","z":null}`},
		{`{"id":"k","n":2,"note":"x"}`, `{"id":"k","n":5,"note":"x\"y"}`}, // the escape takes the converted way
	}
	conv := icebergtest.SchemalessConverter(t)
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
	conv := icebergtest.SchemalessConverter(t)
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
	conv := icebergtest.SchemalessConverter(t)
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
		if task.spills.Current() == nil {
			return task.spills.Len(), 0
		}
		return task.spills.Len(), task.spills.Current().Size
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
