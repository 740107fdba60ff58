package herder

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/store"
)

// TestRebalanceOnlyWhenAssignmentChanges: config-topic records ask for a rebalance exactly when what the
// leader assigns from changed (a connector added or removed, its committed task count), checked against a
// plain model over random record sequences (seed printed); a changed connector or task config alone does not.
func TestRebalanceOnlyWhenAssignmentChanges(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	d := NewDistributed(&DistributedConfig{SessionTimeout: 10 * time.Second}, "http://127.0.0.1:1/", nil)
	rl := &rejoinListener{d: d}
	d.configs = store.NewConfigStore(rl) // the herder's own listener decides the same way (rejoinIfAssignmentChanged)
	type conn struct {
		exists bool
		count  int // committed
	}
	model := map[string]conn{}
	offset := int64(0)
	apply := func(key, value string) {
		r := store.Record{Key: key, Offset: offset}
		if value != "" {
			r.Value = []byte(value)
		}
		offset++
		d.configs.Apply(r)
	}
	for i := range 400 {
		name := fmt.Sprintf("c%d", rng.IntN(3))
		before := model[name]
		rl.wanted = false
		var step string
		switch rng.IntN(4) {
		case 0: // connector config written (new or changed)
			step = "config"
			apply(store.ConnectorPrefix+name, fmt.Sprintf(`{"properties":{"v":"%d"}}`, i))
			model[name] = conn{exists: true, count: before.count}
		case 1: // connector deleted
			step = "delete"
			apply(store.ConnectorPrefix+name, "")
			model[name] = conn{}
		default: // task configs and their commit, count 0..3, config values changing
			n := rng.IntN(4)
			step = fmt.Sprintf("tasks %d", n)
			for j := range n {
				apply(fmt.Sprintf("%s%s-%d", store.TaskPrefix, name, j), fmt.Sprintf(`{"properties":{"v":"%d"}}`, i))
			}
			apply(store.CommitPrefix+name, fmt.Sprintf(`{"tasks":%d}`, n))
			model[name] = conn{exists: before.exists, count: n}
		}
		after := model[name]
		if !after.exists {
			after = conn{}
		}
		if !before.exists {
			before = conn{}
		}
		want := after != before
		require.Equal(t, want, rl.wanted, "step %d (%s on %s): %+v -> %+v", i, step, name, before, after)
	}
}

// rejoinListener records whether config records asked for a rebalance.
type rejoinListener struct {
	d      *Distributed
	wanted bool
}

func (l *rejoinListener) ConnectorConfigUpdated(name string, _ bool) {
	l.wanted = l.d.noteAssignable(name) || l.wanted
}
func (l *rejoinListener) TaskConfigsUpdated(name string, _ int) {
	l.wanted = l.d.noteAssignable(name) || l.wanted
}
func (l *rejoinListener) TargetStateChanged(string)             {}
func (l *rejoinListener) RestartRequested(store.RestartRequest) {}
func (l *rejoinListener) SessionKeyUpdated(store.SessionKey)    {}
