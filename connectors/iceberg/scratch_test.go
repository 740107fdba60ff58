package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestScratchFilesReused: a released file comes back from create at its start and is written over;
// files with a name, files whose write failed and files beyond scratchKeepBytes are closed instead.
func TestScratchFilesReused(t *testing.T) {
	dir := t.TempDir()
	var p icetable.ScratchFiles
	f, err := p.Create(dir, "x-*")
	require.NoError(t, err)
	require.False(t, f.Named, "the file keeps its name")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the file has no name")
	_, err = f.Write([]byte("0123456789"))
	require.NoError(t, err)
	p.Release(f, false)

	g, err := p.Create(dir, "x-*")
	require.NoError(t, err)
	require.Same(t, f.File, g.File, "the released file was not reused")
	_, err = g.Write([]byte("ab"))
	require.NoError(t, err)
	buf := make([]byte, 10)
	_, err = g.ReadAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, "ab23456789", string(buf), "written from the start, over the old bytes")

	p.Release(g, true) // a failed write: closed
	h, err := p.Create(dir, "x-*")
	require.NoError(t, err)
	require.NotSame(t, g.File, h.File)
	_, err = g.Write([]byte("x"))
	require.Error(t, err, "the failed file was not closed")

	require.NoError(t, h.Truncate(icetable.ScratchKeepBytes+1))
	p.Release(h, false) // too large to keep
	require.Empty(t, p.Free)
	_, err = h.Write([]byte("x"))
	require.Error(t, err, "the large file was not closed")

	n, err := p.Create(dir, "x-*")
	require.NoError(t, err)
	p.Close()
	p.Release(n, false) // after close: closed at once
	require.Empty(t, p.Free)
	_, err = n.Write([]byte("x"))
	require.Error(t, err)

	var none *icetable.ScratchFiles // keeps nothing
	m, err := none.Create(dir, "x-*")
	require.NoError(t, err)
	none.Release(m, false)
	_, err = m.Write([]byte("x"))
	require.Error(t, err)
}

// TestSpillFilesReusedModel runs a plain upsert table buffered as bytes against a plain model of
// each key's last value: random batches of random keys whose values vary in size (a reused file
// holds longer old bytes past what is written now), compactions, rounds given back and rounds
// committed, so that spill files are written, compacted, released and reused in every order. After
// each step every buffered record reads back as a value put for its key and each key's last one
// as its last value; at the end the table holds each key's last value.
func TestSpillFilesReusedModel(t *testing.T) {
	seed := modelSeed(t, "SPILL_SEED", 5)
	rng := rand.New(rand.NewSource(seed))
	conv := icebergtest.SchemalessConverter(t)
	ctx := context.Background()
	props, _ := sinkProps(t, map[string]string{KeyTables: "shop.k", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"})
	t.Setenv("TMPDIR", t.TempDir())
	task, _ := startTask(t, props)
	defer func() { require.NoError(t, task.Stop()) }()

	const keys = 12
	pad := strings.Repeat("p", 4096)
	off := int64(0)
	value := func(id string, n int64) string {
		return fmt.Sprintf(`{"id":%q,"n":%d,"pad":%q}`, id, n, pad[:int(n*7919)%len(pad)])
	}
	pending := map[string]int64{} // key → its last n since the last committed round
	table := map[string]int64{}   // what the table holds
	put := func(n int) {
		var batch []*connect.SinkRecord
		for range n {
			id := fmt.Sprintf("k%d", rng.Intn(keys))
			batch = append(batch, &connect.SinkRecord{Topic: "k", Offset: off, OriginalTopic: "k", OriginalOffset: off,
				Value: &jsonvalue.Value{Bytes: []byte(value(id, off)), Topic: "k", Conv: conv}})
			pending[id] = off
			off++
		}
		require.NoError(t, task.Put(ctx, batch))
	}
	check := func(step string) {
		task.mu.Lock()
		defer task.mu.Unlock()
		last := map[string]int64{}
		for _, r := range task.buf["shop.k"] {
			if r.JSON == nil {
				continue // converted (the first record, which notes the shape)
			}
			var v struct {
				ID string `json:"id"`
				N  int64  `json:"n"`
			}
			b := heldBytes(t, r)
			require.NoError(t, json.Unmarshal([]byte(b), &v), "%s: %q", step, b)
			require.Equal(t, value(v.ID, v.N), b, step)
			last[v.ID] = v.N
		}
		for id, n := range last {
			require.Equal(t, pending[id], n, "%s: key %s", step, id)
		}
	}
	reused := 0
	put(1) // converted: notes the shape
	var steps []string
	for i := range 120 {
		var step string
		switch x := rng.Intn(10); {
		case x < 6:
			task.mu.Lock()
			free := slices.Clone(task.scratch.Free)
			task.mu.Unlock()
			put(1 + rng.Intn(40))
			task.mu.Lock()
			if sp := task.spills.Current(); sp != nil && slices.ContainsFunc(free, func(k icetable.KeptFile) bool { return k.File == sp.File.File }) {
				reused++
			}
			task.mu.Unlock()
			step = "put"
		case x < 8:
			task.mu.Lock()
			if task.spills.Current() != nil {
				task.spills.Compact(task.buf)
			}
			task.mu.Unlock()
			step = "compact"
		case x < 9:
			task.roundFailed(task.drain())
			step = "round given back"
		default:
			require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
			for id, n := range pending {
				table[id] = n
			}
			clear(pending)
			step = "round committed"
		}
		steps = append(steps, step)
		check(fmt.Sprintf("step %d (%s; %v)", i, step, steps))
	}
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	for id, n := range pending {
		table[id] = n
	}
	require.Positive(t, reused, "no spill file was reused")

	_, meta := loadTable(t, props, "shop.k")
	var want []string
	for id, n := range table {
		want = append(want, fmt.Sprintf("%s|%d|%d", id, n, len(value(id, n))))
	}
	sort.Strings(want)
	require.Equal(t, want, duckRows(t, meta, `SELECT id, n, length('{"id":"' || id || '","n":' || n || ',"pad":"' || pad || '"}') FROM t ORDER BY id`))
}
