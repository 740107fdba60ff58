package group

import (
	"sort"
	"time"
)

// ConfigSnapshot is what the leader knows of the configured work: connector name -> task count, at Offset.
type ConfigSnapshot struct {
	Offset     int64
	TaskCounts map[string]int
}

// Connectors returns the configured connector names, sorted.
func (s ConfigSnapshot) Connectors() []string {
	out := make([]string, 0, len(s.TaskCounts))
	for c := range s.TaskCounts {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Tasks returns all configured task ids, sorted.
func (s ConfigSnapshot) Tasks() []TaskID {
	var out []TaskID
	for _, c := range s.Connectors() {
		for i := 0; i < s.TaskCounts[c]; i++ {
			out = append(out, TaskID{c, int32(i)})
		}
	}
	return out
}

// MemberAssignment is what the leader sends one member, before serialization.
type MemberAssignment struct {
	Assigned ConnectorsAndTasks // V0: the full set; V1+: only new work
	Revoked  ConnectorsAndTasks // V1+ only
}

// Result is the leader's decision for the whole group.
type Result struct {
	Assignments map[string]MemberAssignment
	// All is every member's complete assignment after this round (minus revocations).
	All   map[string]ConnectorsAndTasks
	Delay time.Duration
}

// Serialize encodes r for every member with the group's header fields.
func (r *Result) Serialize(version int16, errCode int16, leader, leaderURL string, offset int64) map[string][]byte {
	out := make(map[string][]byte, len(r.Assignments))
	for m, a := range r.Assignments {
		out[m] = EncodeAssignment(&Assignment{Version: version, Error: errCode, Leader: leader, LeaderURL: leaderURL,
			Offset: offset, Connectors: a.Assigned.Connectors, Tasks: a.Assigned.Tasks,
			RevokedConnectors: a.Revoked.Connectors, RevokedTasks: a.Revoked.Tasks, Delay: int32(r.Delay / time.Millisecond)})
	}
	return out
}

// EagerAssign is the JVM's EagerAssignor: round-robin over the sorted members, all connectors first, then all
// tasks, continuing the same rotation.
func EagerAssign(snap ConfigSnapshot, members []string) *Result {
	ms := append([]string(nil), members...)
	sort.Strings(ms)
	res := &Result{Assignments: map[string]MemberAssignment{}, All: map[string]ConnectorsAndTasks{}}
	for _, m := range ms {
		res.Assignments[m] = MemberAssignment{}
	}
	if len(ms) == 0 {
		return res
	}
	i := 0
	next := func() string { m := ms[i%len(ms)]; i++; return m }
	for _, c := range snap.Connectors() {
		m := next()
		a := res.Assignments[m]
		a.Assigned.Connectors = append(a.Assigned.Connectors, c)
		res.Assignments[m] = a
	}
	for _, t := range snap.Tasks() {
		m := next()
		a := res.Assignments[m]
		a.Assigned.Tasks = append(a.Assigned.Tasks, t)
		res.Assignments[m] = a
	}
	for m, a := range res.Assignments {
		res.All[m] = a.Assigned
	}
	return res
}
