package group

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func tasks(c string, ids ...int32) []TaskID {
	var out []TaskID
	for _, i := range ids {
		out = append(out, TaskID{c, i})
	}
	return out
}

// sim drives an IncrementalAssignor like a group: members apply assigned/revoked as the JVM's workers do.
type sim struct {
	t       *testing.T
	a       *IncrementalAssignor
	now     time.Time
	gen     int32
	members map[string]ConnectorsAndTasks
	revoked map[string]ConnectorsAndTasks // revocations seen in the last round
	delay   time.Duration
}

func newSim(t *testing.T, maxDelay time.Duration, members ...string) *sim {
	s := &sim{t: t, now: time.Unix(1000, 0), members: map[string]ConnectorsAndTasks{}}
	s.a = NewIncrementalAssignor(maxDelay)
	s.a.Now = func() time.Time { return s.now }
	for _, m := range members {
		s.members[m] = ConnectorsAndTasks{}
	}
	return s
}

func (s *sim) round(snap ConfigSnapshot) {
	last := s.gen
	if s.gen == 0 {
		last = -1
	}
	s.gen++
	res := s.a.Assign(snap, last, s.gen, s.members)
	s.delay = res.Delay
	s.revoked = map[string]ConnectorsAndTasks{}
	for m, ma := range res.Assignments {
		cur := fromPublic(s.members[m])
		// revocations: the member must not have been asked to stop anything it does not run
		for _, c := range ma.Revoked.Connectors {
			require.True(s.t, cur.hasConn(c), "%s revoked %s it does not run", m, c)
		}
		for _, tk := range ma.Revoked.Tasks {
			require.True(s.t, cur.hasTask(tk), "%s revoked %s it does not run", m, tk)
		}
		// new work is never something it already runs
		for _, tk := range ma.Assigned.Tasks {
			require.False(s.t, cur.hasTask(tk), "%s assigned %s twice", m, tk)
		}
		cur.removeAll(fromPublic(ma.Revoked))
		cur.addAll(fromPublic(ma.Assigned))
		s.members[m] = cur.public()
		s.revoked[m] = ma.Revoked
		require.Equal(s.t, cur.public().Sorted(), res.All[m].Sorted(), "All[%s]", m)
	}
}

// settle runs rounds until nobody is revoked and no delay is pending (as members rejoin on revocation).
func (s *sim) settle(snap ConfigSnapshot) int {
	for i := 1; i <= 10; i++ {
		s.round(snap)
		any := false
		for _, r := range s.revoked {
			any = any || !r.IsEmpty()
		}
		if !any && s.delay == 0 {
			return i
		}
		if s.delay > 0 {
			s.now = s.now.Add(s.delay)
		}
	}
	s.t.Fatal("assignment did not settle")
	return 0
}

func (s *sim) owner() map[TaskID]string {
	out := map[TaskID]string{}
	for m, c := range s.members {
		for _, t := range c.Tasks {
			_, dup := out[t]
			require.False(s.t, dup, "task %s runs twice", t)
			out[t] = m
		}
	}
	return out
}

func (s *sim) counts() []int {
	var out []int
	for _, c := range s.members {
		out = append(out, len(c.Tasks))
	}
	sort.Ints(out)
	return out
}

func (s *sim) requireComplete(snap ConfigSnapshot) {
	own := s.owner()
	require.Len(s.t, own, len(snap.Tasks()))
	conns := map[string]bool{}
	for _, c := range s.members {
		for _, x := range c.Connectors {
			require.False(s.t, conns[x], "connector %s runs twice", x)
			conns[x] = true
		}
	}
	require.Len(s.t, conns, len(snap.TaskCounts))
}

func TestEagerAssign(t *testing.T) {
	snap := ConfigSnapshot{TaskCounts: map[string]int{"a": 2, "b": 3}}
	res := EagerAssign(snap, []string{"w2", "w1", "w3"})
	require.Equal(t, ConnectorsAndTasks{Connectors: []string{"a"}, Tasks: []TaskID{{"a", 1}, {"b", 2}}}, res.All["w1"])
	require.Equal(t, ConnectorsAndTasks{Connectors: []string{"b"}, Tasks: []TaskID{{"b", 0}}}, res.All["w2"])
	require.Equal(t, ConnectorsAndTasks{Tasks: []TaskID{{"a", 0}, {"b", 1}}}, res.All["w3"])
	b := res.Serialize(V0, NoError, "w1", "http://w1/", 5)
	got, err := DecodeAssignment(b["w3"])
	require.NoError(t, err)
	require.Equal(t, []TaskID{{"a", 0}, {"b", 1}}, got.Tasks)
	require.Equal(t, int64(5), got.Offset)
}

func TestIncrementalAssign(t *testing.T) {
	six := ConfigSnapshot{TaskCounts: map[string]int{"c": 6}}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"initial spread over three", func(t *testing.T) {
			s := newSim(t, 2*time.Second, "w1", "w2", "w3")
			require.Equal(t, 1, s.settle(six))
			s.requireComplete(six)
			require.Equal(t, []int{2, 2, 2}, s.counts())
		}},
		{"join moves only a share, others untouched", func(t *testing.T) {
			s := newSim(t, 2*time.Second, "w1", "w2", "w3")
			s.settle(six)
			before := s.owner()
			s.members["w4"] = ConnectorsAndTasks{}
			s.round(six) // revokes the surplus only
			moved := 0
			for m, r := range s.revoked {
				if !r.IsEmpty() {
					require.NotEqual(t, "w4", m)
				}
				moved += len(r.Tasks)
			}
			require.Equal(t, 1, moved) // 6 tasks over 4 workers: 2,2,1,1 -> one task moves
			s.settle(six)
			s.requireComplete(six)
			require.Equal(t, []int{1, 1, 2, 2}, s.counts())
			after := s.owner()
			changed := 0
			for tk, m := range before {
				if after[tk] != m {
					changed++
					require.Equal(t, "w4", after[tk], "task %s moved elsewhere than the new worker", tk)
				}
			}
			require.Equal(t, 1, changed)
		}},
		{"lost work waits for the delay then goes to survivors", func(t *testing.T) {
			s := newSim(t, 2*time.Second, "w1", "w2", "w3")
			s.settle(six)
			before := s.owner()
			delete(s.members, "w2")
			s.round(six)
			require.Equal(t, 2*time.Second, s.delay, "lost work is held for scheduled.rebalance.max.delay.ms")
			require.Len(t, s.owner(), 4, "not reassigned during the delay")
			s.now = s.now.Add(s.delay)
			s.round(six)
			s.requireComplete(six)
			require.Zero(t, s.delay)
			for tk, m := range before {
				if m != "w2" {
					require.Equal(t, m, s.owner()[tk], "surviving task %s moved", tk)
				}
			}
			require.Equal(t, []int{3, 3}, s.counts())
		}},
		{"a replacement worker within the delay gets the lost work", func(t *testing.T) {
			s := newSim(t, 2*time.Second, "w1", "w2", "w3")
			s.settle(six)
			lostTasks := s.members["w2"].Tasks
			delete(s.members, "w2")
			s.round(six)
			s.members["w2b"] = ConnectorsAndTasks{}
			s.now = s.now.Add(500 * time.Millisecond)
			s.round(six)
			require.Greater(t, s.delay, time.Duration(0))
			s.now = s.now.Add(s.delay)
			s.round(six)
			s.requireComplete(six)
			require.ElementsMatch(t, lostTasks, s.members["w2b"].Tasks)
		}},
		{"zero delay reassigns at once", func(t *testing.T) {
			s := newSim(t, 0, "w1", "w2", "w3")
			s.settle(six)
			delete(s.members, "w3")
			s.round(six)
			require.Zero(t, s.delay)
			s.requireComplete(six)
		}},
		{"deleted connector is revoked, new one spread", func(t *testing.T) {
			s := newSim(t, 2*time.Second, "w1", "w2")
			two := ConfigSnapshot{TaskCounts: map[string]int{"a": 2, "b": 2}}
			s.settle(two)
			s.requireComplete(two)
			next := ConfigSnapshot{TaskCounts: map[string]int{"b": 2, "n": 4}}
			s.round(next)
			rev := 0
			for _, r := range s.revoked {
				for _, tk := range r.Tasks {
					require.Equal(t, "a", tk.Connector)
					rev++
				}
			}
			require.Equal(t, 2, rev)
			s.settle(next)
			s.requireComplete(next)
			require.Equal(t, []int{3, 3}, s.counts())
		}},
		{"duplicates are revoked", func(t *testing.T) {
			s := newSim(t, 2*time.Second, "w1", "w2")
			one := ConfigSnapshot{TaskCounts: map[string]int{"a": 2}}
			s.members["w1"] = ConnectorsAndTasks{Connectors: []string{"a"}, Tasks: tasks("a", 0, 1)}
			s.members["w2"] = ConnectorsAndTasks{Tasks: tasks("a", 1)}
			s.settle(one)
			s.requireComplete(one)
		}},
		{"many connectors stay balanced through churn", func(t *testing.T) {
			snap := ConfigSnapshot{TaskCounts: map[string]int{}}
			for i := 0; i < 7; i++ {
				snap.TaskCounts[fmt.Sprintf("c%d", i)] = i + 1
			}
			s := newSim(t, time.Second, "w1", "w2", "w3")
			s.settle(snap)
			s.requireComplete(snap)
			s.members["w4"] = ConnectorsAndTasks{}
			s.members["w5"] = ConnectorsAndTasks{}
			s.settle(snap)
			s.requireComplete(snap)
			c := s.counts()
			require.LessOrEqual(t, c[len(c)-1]-c[0], 1)
			delete(s.members, "w1")
			s.settle(snap)
			s.requireComplete(snap)
			c = s.counts()
			require.LessOrEqual(t, c[len(c)-1]-c[0], 1)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}
}
