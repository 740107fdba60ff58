package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/state"
)

// memTopic is a status topic in memory: one partition, records in write order, each tagged with the epoch of
// the group generations it was written in (the model's knowledge; the stores only see generations).
type memTopic struct {
	recs   []Record
	epochs []int
	epoch  int
}

// memWriter is one worker's producer on the topic.
type memWriter struct{ t *memTopic }

func (w memWriter) Send(key string, value []byte) (int32, int64, error) {
	w.t.recs = append(w.t.recs, Record{Key: key, Value: value, Offset: int64(len(w.t.recs))})
	w.t.epochs = append(w.t.epochs, w.t.epoch)
	return 0, int64(len(w.t.recs) - 1), nil
}

// fenceWorker is a worker: its status store reads the topic with a lag; gen is the generation it believes in
// (older than the group's when it was evicted without noticing yet).
type fenceWorker struct {
	id    string
	store *StatusStore
	read  int
	gen   int32
}

func (w *fenceWorker) catchUp(t *memTopic, upto int) {
	for ; w.read < upto; w.read++ {
		w.store.Apply(t.recs[w.read])
	}
}

// modelStatus is the plain rule the stores must agree with: after the last tombstone, the record of the
// highest (epoch, generation); the later one among equals.
func modelStatus(t *memTopic, key string) *Status {
	var best *Status
	bestEpoch, bestPos := -1, -1
	for i, r := range t.recs {
		if r.Key != key {
			continue
		}
		if r.Value == nil {
			best, bestEpoch, bestPos = nil, -1, -1
			continue
		}
		var st Status
		mustUnmarshal(r.Value, &st)
		if best == nil || t.epochs[i] > bestEpoch || (t.epochs[i] == bestEpoch && st.Generation >= best.Generation) {
			best, bestEpoch, bestPos = &st, t.epochs[i], i
		}
	}
	_ = bestPos
	return best
}

func fenceSeed(t *testing.T) uint64 {
	if s := os.Getenv("FENCE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		return n
	}
	return uint64(time.Now().UnixNano())
}

// TestStatusFencingModel runs random histories of status writes by workers with lagging views and stale
// generations (evicted members that have not noticed yet), with the occasional deletion and group restart
// (generations starting again), and checks that every worker ends up showing the model's record, and that no
// worker wrote over a later generation it had already read. FENCE_SEED=n replays a history.
func TestStatusFencingModel(t *testing.T) {
	seed := fenceSeed(t)
	for run := 0; run < 300; run++ {
		s := seed + uint64(run)
		if ops := fenceHistory(t, s, false); ops != nil {
			// shrink: the shortest prefix of the history that still fails
			lo, hi := 1, len(ops)
			for lo < hi {
				mid := (lo + hi) / 2
				if fenceHistory(t, s, false, mid) != nil {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			fenceHistory(t, s, true, lo)
			t.Fatalf("seed %d (FENCE_SEED=%d): fails after %d operations (log above)", s, s, lo)
		}
	}
	t.Logf("seeds %d..%d", seed, seed+299)
}

// fenceHistory plays one random history (its first limit operations if given) and returns the operations'
// descriptions if the stores disagree with the model or a fenced write went out, nil if all is well.
func fenceHistory(t *testing.T, seed uint64, verbose bool, limit ...int) []string {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	topic := &memTopic{}
	var ws []*fenceWorker
	for i := range 3 + rng.IntN(3) {
		st := NewStatusStore()
		st.log = memWriter{topic}
		ws = append(ws, &fenceWorker{id: fmt.Sprintf("w%d", i), store: st, gen: 1})
	}
	groupGen := int32(1)
	id := state.TaskID{Connector: "c", Task: 0}
	key := "status-task-c-0"
	states := []state.State{state.Running, state.Unassigned, state.Failed, state.PausedS}
	n := 20 + rng.IntN(60)
	if len(limit) > 0 {
		n = limit[0]
	}
	var ops []string
	fail := func(format string, args ...any) []string {
		ops = append(ops, "FAIL: "+fmt.Sprintf(format, args...))
		if verbose {
			for _, o := range ops {
				t.Log(o)
			}
		}
		return ops
	}
	for range n {
		w := ws[rng.IntN(len(ws))]
		switch p := rng.IntN(100); {
		case p < 15: // a rebalance: some workers learn of the new generation, others stay behind (evicted)
			groupGen++
			for _, x := range ws {
				if rng.IntN(3) > 0 {
					x.gen = groupGen
					x.store.SupersedeAbove(x.gen)
				}
			}
			ops = append(ops, fmt.Sprintf("rebalance to generation %d", groupGen))
		case p < 18: // the group is recreated: generations start again; every worker restarted and re-read
			topic.epoch++
			groupGen = int32(1 + rng.IntN(2))
			for _, x := range ws {
				x.catchUp(topic, len(topic.recs))
				x.gen = groupGen
				x.store.SupersedeAbove(x.gen)
			}
			ops = append(ops, fmt.Sprintf("group recreated at generation %d", groupGen))
		case p < 20: // the connector is deleted: DESTROYED
			before := len(topic.recs)
			require.NoError(t, w.store.PutTask(id, Status{State: state.Destroyed, WorkerID: w.id, Generation: w.gen}, false))
			ops = append(ops, fmt.Sprintf("%s destroys (wrote %v)", w.id, len(topic.recs) > before))
		case p < 50: // a worker reads on
			upto := w.read + rng.IntN(len(topic.recs)-w.read+1)
			w.catchUp(topic, upto)
			ops = append(ops, fmt.Sprintf("%s reads to %d", w.id, upto))
		default: // a worker writes a state in the generation it believes in
			st := Status{State: states[rng.IntN(len(states))], WorkerID: w.id, Generation: w.gen}
			safe := st.State == state.Unassigned
			held, stale := w.store.Task(id), supersededIn(w.store, id)
			before := len(topic.recs)
			require.NoError(t, w.store.PutTask(id, st, safe))
			wrote := len(topic.recs) > before
			ops = append(ops, fmt.Sprintf("%s writes %s gen %d safe=%v over %v: wrote=%v", w.id, st.State, st.Generation, safe, fmtStatus(held), wrote))
			// the write rule in plain terms, against what the worker had read (a record of an older
			// epoch is never newer: SupersedeAbove ran when the worker rejoined)
			want := true
			if held != nil && !stale {
				switch {
				case held.Generation > st.Generation:
					want = false
				case safe && held.WorkerID != st.WorkerID && held.Generation == st.Generation:
					want = false
				}
			}
			if wrote != want {
				return fail("write rule: wrote=%v want %v", wrote, want)
			}
		}
	}
	want := modelStatus(topic, key)
	for _, w := range ws {
		w.catchUp(topic, len(topic.recs))
		got := w.store.Task(id)
		if fmtStatus(got) != fmtStatus(want) {
			return fail("%s shows %s, model %s", w.id, fmtStatus(got), fmtStatus(want))
		}
	}
	return nil
}

func supersededIn(s *StatusStore, id state.TaskID) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.tasks[id]
	return e != nil && e.superseded
}

func fmtStatus(st *Status) string {
	if st == nil {
		return "none"
	}
	return fmt.Sprintf("%s@%s/gen%d", st.State, st.WorkerID, st.Generation)
}

func mustUnmarshal(b []byte, v any) {
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
}

// TestStaleWorkerCannotHideOwner is the eviction story: w1 ran the task in generation 5 and was evicted without
// noticing; w2 got it in generation 7. w1's late RUNNING and UNASSIGNED (generation 5) change nothing,
// whether or not w1 had read w2's record when it wrote them.
func TestStaleWorkerCannotHideOwner(t *testing.T) {
	for _, w1ReadFirst := range []bool{true, false} {
		topic := &memTopic{}
		w1 := &fenceWorker{id: "w1", store: NewStatusStore(), gen: 5}
		w2 := &fenceWorker{id: "w2", store: NewStatusStore(), gen: 7}
		w1.store.log, w2.store.log = memWriter{topic}, memWriter{topic}
		id := state.TaskID{Connector: "c", Task: 0}
		require.NoError(t, w1.store.PutTask(id, Status{State: state.Running, WorkerID: "w1", Generation: 5}, false))
		w2.catchUp(topic, len(topic.recs))
		require.NoError(t, w2.store.PutTask(id, Status{State: state.Running, WorkerID: "w2", Generation: 7}, false))
		if w1ReadFirst {
			w1.catchUp(topic, len(topic.recs))
		}
		require.NoError(t, w1.store.PutTask(id, Status{State: state.Running, WorkerID: "w1", Generation: 5}, false))
		require.NoError(t, w1.store.PutTask(id, Status{State: state.Unassigned, WorkerID: "w1", Generation: 5}, true))
		for _, w := range []*fenceWorker{w1, w2} {
			w.catchUp(topic, len(topic.recs))
			require.Equal(t, "RUNNING@w2/gen7", fmtStatus(w.store.Task(id)), "w1 read w2's record first: %v", w1ReadFirst)
		}
	}
}
