package cdcmodel

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
)

// shrinkAndReport minimises a failing stream through the same worker, topic and tables: each round
// produces every trial (its own key prefix) phase by phase, waiting for the connector to commit between
// phases, then reads the view once. Keys are independent in the model, so it first tries the records of
// the keys that differ (got: what the view held for the stream) and falls back to the whole stream.
func shrinkAndReport(t *testing.T, h *harness, v view, s cdcstream.Stream, got map[string][]cdcstream.Row, seed int64, deadline time.Time) {
	round := 0
	run := func(trials []cdcstream.Trial) ([]bool, error) {
		round++
		streams := make([]cdcstream.Stream, len(trials))
		for i, tr := range trials {
			streams[i] = cdcstream.Stream{Prefix: fmt.Sprintf("%sx%dt%d", s.Prefix, round, i), Events: tr.Events}
		}
		phases := make([][]int, len(trials))
		for i, tr := range trials {
			phases[i] = tr.Phases
		}
		h.deliverPhased(streams, phases)
		got := byPrefix(v.read(t))
		out := make([]bool, len(trials))
		for i, st := range streams {
			out[i] = diff(st, keyed(st, h.state(st.Events, v.version)), got[st.Prefix]) != ""
		}
		return out, nil
	}
	sh := &cdcstream.Shrinker{Run: run, Rand: rand.New(rand.NewSource(seed)), Random: 2,
		Continue: func() bool { return time.Now().Before(deadline) }}
	t0 := time.Now()
	var m cdcstream.Trial
	ok := false
	var err error
	if keys := differingKeys(s, h.state(s.Events, v.version), got); len(keys) > 0 {
		var sub []cdcstream.Event
		for _, e := range s.Events {
			if keys[e.Key] {
				sub = append(sub, e)
			}
		}
		if len(sub) < len(s.Events) {
			m, ok, err = sh.Shrink(sub)
			require.NoError(t, err)
		}
	}
	if !ok && !sh.Stopped {
		m, ok, err = sh.Shrink(s.Events)
	}
	stopped := ""
	if sh.Stopped {
		stopped = ", stopped early by CDC_SHRINK_SECONDS"
	}
	require.NoError(t, err)
	if !ok && sh.Stopped {
		t.Errorf("%s: stream %s (CDC_SEED=%d) not shrunk: the shrinking budget (CDC_SHRINK_SECONDS) is spent", v.name, s.Prefix, seed)
		return
	}
	if !ok {
		t.Errorf("%s: stream %s (CDC_SEED=%d) did not fail again without SIGKILLs under the commit schedules tried "+
			"(every placement of commit boundaries up to 6 events); the failure needs a crash or a timing the reruns did not hit. "+
			"The stream:\n%s", v.name, s.Prefix, seed, cdcstream.Format(s, nil))
		return
	}
	// how reliably the minimal stream fails: three more copies in one run
	again, err := run([]cdcstream.Trial{m, m, m})
	require.NoError(t, err)
	fails := 0
	for _, f := range again {
		if f {
			fails++
		}
	}
	min := cdcstream.Stream{Prefix: s.Prefix, Events: m.Events}
	want := keyed(min, h.state(m.Events, v.version))
	var wantDesc []string
	for _, r := range want {
		wantDesc = append(wantDesc, fmt.Sprintf("%q=%v", r.ID, r))
	}
	if len(wantDesc) == 0 {
		wantDesc = []string{"no live key"}
	}
	t.Errorf("%s: CDC_SEED=%d stream %s shrunk from %d to %d events in %d rounds (%v%s); minimal failing stream (%d forced commit boundaries; "+
		"keys get the prefix %s-; failed again in %d of 3 reruns):\n%s  model: %s", v.name, seed, s.Prefix, len(s.Events), len(m.Events), sh.Rounds,
		time.Since(t0).Round(time.Second), stopped, m.Boundaries(), s.Prefix, fails, cdcstream.Format(min, m.Phases), strings.Join(wantDesc, ", "))
}

// differingKeys are the local keys of stream s whose rows in the view (got, by rendered key) differ from
// the model's state.
func differingKeys(s cdcstream.Stream, state map[string]cdcstream.Row, got map[string][]cdcstream.Row) map[string]bool {
	out := map[string]bool{}
	for _, e := range s.Events {
		if out[e.Key] {
			continue
		}
		w, live := state[e.Key]
		w.ID = s.FullKey(e)
		g := got[w.ID]
		if live != (len(g) > 0) || live && (len(g) > 1 || !rowEqual(w, g[0])) {
			out[e.Key] = true
		}
	}
	return out
}
