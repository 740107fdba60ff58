package group

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

type fakeHandler struct {
	mu      sync.Mutex
	url     string
	snap    ConfigSnapshot
	full    ConnectorsAndTasks
	revoked []ConnectorsAndTasks
	lost    int
	gens    int
	// stopTime is how long stopping revoked work takes (a task's final commit)
	stopTime time.Duration
}

func (h *fakeHandler) State() (string, int64) { return h.url, h.snap.Offset }
func (h *fakeHandler) LeaderSnapshot(max int64) (ConfigSnapshot, bool) {
	return h.snap, h.snap.Offset >= max
}
func (h *fakeHandler) CatchUp(int64) bool { return true }
func (h *fakeHandler) Revoke(c ConnectorsAndTasks, lost bool) <-chan struct{} {
	h.mu.Lock()
	h.revoked = append(h.revoked, c)
	if lost {
		h.lost++
	}
	h.mu.Unlock()
	done := make(chan struct{})
	time.AfterFunc(h.stopTime, func() { close(done) })
	return done
}
func (h *fakeHandler) Assigned(a *Assignment, full ConnectorsAndTasks, gen int32, leader bool) {
	h.mu.Lock()
	h.full = full
	h.gens++
	h.mu.Unlock()
}
func (h *fakeHandler) tasks() []TaskID {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]TaskID(nil), h.full.Tasks...)
}

func newClient(t *testing.T, addr string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

func TestMembersOnBroker(t *testing.T) {
	addr := bootstrap(t)
	group := fmt.Sprintf("connect-group-test-%d", time.Now().UnixNano())
	snap := ConfigSnapshot{Offset: 3, TaskCounts: map[string]int{"c": 6}}
	type run struct {
		h      *fakeHandler
		cancel context.CancelFunc
		done   chan struct{}
	}
	start := func(i int, protocol string) *run {
		h := &fakeHandler{url: fmt.Sprintf("http://w%d/", i), snap: snap}
		m, err := NewMember(newClient(t, addr), Config{GroupID: group, SessionTimeout: 6 * time.Second,
			HeartbeatInterval: 500 * time.Millisecond, RebalanceTimeout: 20 * time.Second, MaxDelay: time.Second, Protocol: protocol}, h)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		r := &run{h: h, cancel: cancel, done: make(chan struct{})}
		go func() { _ = m.Run(ctx); close(r.done) }()
		t.Cleanup(func() { cancel(); <-r.done })
		return r
	}
	spread := func(rs []*run, want []int) {
		require.Eventually(t, func() bool {
			owners := map[TaskID]int{}
			var counts []int
			for _, r := range rs {
				ts := r.h.tasks()
				counts = append(counts, len(ts))
				for _, tk := range ts {
					owners[tk]++
				}
			}
			if len(owners) != 6 {
				return false
			}
			for _, n := range owners {
				if n != 1 {
					return false
				}
			}
			for i := range want {
				if counts[i] != want[i] {
					return false
				}
			}
			return true
		}, 40*time.Second, 100*time.Millisecond)
	}
	rs := []*run{start(1, "sessioned"), start(2, "sessioned"), start(3, "compatible")}
	spread(rs, []int{2, 2, 2})
	before := map[TaskID]bool{}
	for _, tk := range rs[0].h.tasks() {
		before[tk] = true
	}
	// a member leaves: after the scheduled delay its tasks go to the survivors; w1 keeps its own tasks
	rs[2].cancel()
	<-rs[2].done
	spread(rs[:2], []int{3, 3})
	for tk := range before {
		require.Contains(t, rs[0].h.tasks(), tk)
	}
	rs[0].h.mu.Lock()
	for _, r := range rs[0].h.revoked {
		for _, tk := range r.Tasks {
			require.False(t, before[tk], "task %s of a surviving worker was revoked", tk)
		}
	}
	rs[0].h.mu.Unlock()
	// a new member takes a share
	rs = append(rs[:2], start(4, "sessioned"))
	spread(rs, []int{2, 2, 2})
}

// TestEagerMembers: with connect.protocol=eager every rebalance revokes everything and the leader hands out
// the full assignment round-robin.
func TestEagerMembers(t *testing.T) {
	addr := bootstrap(t)
	group := fmt.Sprintf("connect-eager-test-%d", time.Now().UnixNano())
	snap := ConfigSnapshot{Offset: 1, TaskCounts: map[string]int{"a": 2, "b": 2}}
	var hs []*fakeHandler
	for i := 0; i < 2; i++ {
		h := &fakeHandler{url: fmt.Sprintf("http://e%d/", i), snap: snap}
		m, err := NewMember(newClient(t, addr), Config{GroupID: group, SessionTimeout: 6 * time.Second,
			HeartbeatInterval: 500 * time.Millisecond, RebalanceTimeout: 20 * time.Second, Protocol: "eager"}, h)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = m.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		hs = append(hs, h)
		if i == 0 {
			require.Eventually(t, func() bool { return len(h.tasks()) == 4 }, 30*time.Second, 50*time.Millisecond)
		}
	}
	require.Eventually(t, func() bool { return len(hs[0].tasks()) == 2 && len(hs[1].tasks()) == 2 }, 30*time.Second, 50*time.Millisecond)
	hs[0].mu.Lock()
	defer hs[0].mu.Unlock()
	require.NotEmpty(t, hs[0].revoked, "eager members give everything back before rejoining")
	require.Len(t, hs[0].revoked[0].Tasks, 4)
}

// TestSlowRevocationKeepsMembership: stopping revoked work takes longer than the session timeout (slow final
// commits, a herder busy elsewhere); the member heartbeats meanwhile, rejoins once it is done, and is never
// evicted.
func TestSlowRevocationKeepsMembership(t *testing.T) {
	addr := bootstrap(t)
	group := fmt.Sprintf("connect-slow-revoke-%d", time.Now().UnixNano())
	snap := ConfigSnapshot{Offset: 1, TaskCounts: map[string]int{"c": 4}}
	var hs []*fakeHandler
	for i := 0; i < 2; i++ {
		h := &fakeHandler{url: fmt.Sprintf("http://s%d/", i), snap: snap, stopTime: 9 * time.Second}
		m, err := NewMember(newClient(t, addr), Config{GroupID: group, SessionTimeout: 6 * time.Second,
			HeartbeatInterval: 500 * time.Millisecond, RebalanceTimeout: 30 * time.Second, Protocol: "sessioned"}, h)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = m.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		hs = append(hs, h)
		if i == 0 {
			require.Eventually(t, func() bool { return len(h.tasks()) == 4 }, 30*time.Second, 50*time.Millisecond)
		}
	}
	// the first member gives two tasks up (9 s to stop them), the second gets them after that
	require.Eventually(t, func() bool { return len(hs[0].tasks()) == 2 && len(hs[1].tasks()) == 2 }, 60*time.Second, 100*time.Millisecond)
	for i, h := range hs {
		h.mu.Lock()
		require.Zero(t, h.lost, "member %d lost its membership", i)
		h.mu.Unlock()
	}
}
