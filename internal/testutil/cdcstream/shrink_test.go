package cdcstream

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// lossySink imitates an upsert sink that collapses each commit's records per key with the tombstone
// replacing the delete (its version lost), and that remembers the version of deleted keys only for
// versioned deletes: the known way a deleted key comes back.
func lossySink(t Trial) map[string]Row {
	type live struct {
		row Row
		ver int64
	}
	table := map[string]live{}
	deletedAt := map[string]int64{}
	for start := 0; start < len(t.Events); {
		end := start
		for end < len(t.Events) && t.Phases[end] == t.Phases[start] {
			end++
		}
		type win struct {
			e        Event
			tomb     bool
			hasEvent bool
		}
		collapsed := map[string]*win{}
		var order []string
		for _, e := range t.Events[start:end] {
			w := collapsed[e.Key]
			if w == nil {
				w = &win{}
				collapsed[e.Key] = w
				order = append(order, e.Key)
			}
			switch {
			case e.Op == Tombstone:
				w.tomb, w.hasEvent = true, false
			case !w.hasEvent || e.LSN >= w.e.LSN:
				w.e, w.hasEvent, w.tomb = e, true, false
			}
		}
		for _, k := range order {
			w := collapsed[k]
			switch {
			case w.tomb:
				delete(table, k)
			case w.e.Op == Delete:
				if l, ok := table[k]; ok && w.e.LSN < l.ver {
					continue
				}
				delete(table, k)
				deletedAt[k] = max(deletedAt[k], w.e.LSN)
			default:
				if d, ok := deletedAt[k]; ok && w.e.LSN <= d {
					continue
				}
				if l, ok := table[k]; ok && w.e.LSN < l.ver {
					continue
				}
				table[k] = live{*w.e.Row, w.e.LSN}
			}
		}
		start = end
	}
	out := map[string]Row{}
	for k, l := range table {
		out[k] = l.row
	}
	return out
}

// The shrinker reduces a long random stream that the lossy sink gets wrong to the three-record core of the
// failure: delete, tombstone, then a stale redelivery of an older record, with no commit boundary left.
func TestShrinkFindsLostDeleteVersion(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	runs := 0
	for seed := int64(0); seed < 200; seed++ {
		s := Generate(rand.New(rand.NewSource(seed)), "s", DefaultConfig())
		run := func(trials []Trial) ([]bool, error) {
			runs++
			out := make([]bool, len(trials))
			for i, tr := range trials {
				got, want := lossySink(tr), State(tr.Events, VersionLSN)
				out[i] = !equalState(got, want)
			}
			return out, nil
		}
		if len(s.Events) < 8 {
			continue
		}
		sh := &Shrinker{Run: run, Rand: rng, Random: 2}
		m, ok, err := sh.Shrink(s.Events)
		require.NoError(t, err)
		if !ok {
			continue
		}
		t.Logf("seed %d: %d events shrunk to %d in %d rounds:\n%s", seed, len(s.Events), len(m.Events), sh.Rounds, Format(Stream{Prefix: "s", Events: m.Events}, m.Phases))
		require.Len(t, m.Events, 3)
		require.Equal(t, []Op{Delete, Tombstone}, []Op{m.Events[0].Op, m.Events[1].Op})
		require.Less(t, m.Events[2].LSN, m.Events[0].LSN)
		require.Equal(t, 0, m.Boundaries(), "the lossy sink also loses the version inside one commit")
		return
	}
	t.Fatal("no generated stream showed the lossy sink's failure")
}

// A failure that needs exactly one commit boundary at one place in a long stream (what was committed before
// meets the commit after it) is reproduced and shrunk, not left to the random schedules.
func TestShrinkReproducesOneCommitBoundary(t *testing.T) {
	var events []Event
	for i := 0; i < 14; i++ {
		events = append(events, Event{Key: "k", Op: Update, LSN: int64(100 + i), Row: &Row{ID: "k", Qty: int64(i)}})
	}
	const a, b = 3, 9 // the failure needs a in a commit before b, and everything else on the side it is on
	run := func(trials []Trial) ([]bool, error) {
		out := make([]bool, len(trials))
		for i, tr := range trials {
			pa, pb := -1, -1
			for j, e := range tr.Events {
				switch e.Row.Qty {
				case a:
					pa = j
				case b:
					pb = j
				}
			}
			if pa < 0 || pb < 0 {
				continue
			}
			ok := tr.Phases[pa] < tr.Phases[pb]
			for j := range tr.Events {
				if before := tr.Events[j].Row.Qty < b; before && tr.Phases[j] != tr.Phases[pa] || !before && tr.Phases[j] != tr.Phases[pb] {
					ok = false
				}
			}
			out[i] = ok
		}
		return out, nil
	}
	sh := &Shrinker{Run: run, Rand: rand.New(rand.NewSource(5)), Random: 2}
	m, ok, err := sh.Shrink(events)
	require.NoError(t, err)
	require.True(t, ok, "reproduced")
	require.Len(t, m.Events, 2)
	require.Equal(t, []int64{a, b}, []int64{m.Events[0].Row.Qty, m.Events[1].Row.Qty})
	require.Equal(t, 1, m.Boundaries())
}

// A stream the sink gets right does not reproduce: Shrink says so.
func TestShrinkNoReproduction(t *testing.T) {
	s := Generate(rand.New(rand.NewSource(3)), "s", DefaultConfig())
	sh := &Shrinker{Run: func(trials []Trial) ([]bool, error) { return make([]bool, len(trials)), nil }, Rand: rand.New(rand.NewSource(1)), Random: 2}
	_, ok, err := sh.Shrink(s.Events)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, 1, sh.Rounds)
}

func equalState(a, b map[string]Row) bool {
	if len(a) != len(b) {
		return false
	}
	for k, r := range a {
		o, ok := b[k]
		if !ok || !rowEqual(r, o) {
			return false
		}
	}
	return true
}

func rowEqual(a, b Row) bool {
	if a.ID != b.ID || a.Name != b.Name || a.Qty != b.Qty || a.UpdatedAt != b.UpdatedAt {
		return false
	}
	if (a.Email == nil) != (b.Email == nil) {
		return false
	}
	return a.Email == nil || *a.Email == *b.Email
}
