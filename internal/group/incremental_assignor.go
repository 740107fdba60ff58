package group

import (
	"sort"
	"time"
)

// connectorsAndTasks is a set of connectors and tasks that keeps insertion order (the JVM's ConnectorsAndTasks,
// whose collections are LinkedHashSets).
type connectorsAndTasks struct {
	conns []string
	tasks []TaskID
}

func (c *connectorsAndTasks) hasConn(x string) bool {
	for _, y := range c.conns {
		if y == x {
			return true
		}
	}
	return false
}
func (c *connectorsAndTasks) hasTask(x TaskID) bool {
	for _, y := range c.tasks {
		if y == x {
			return true
		}
	}
	return false
}
func (c *connectorsAndTasks) addConn(x string) {
	if !c.hasConn(x) {
		c.conns = append(c.conns, x)
	}
}
func (c *connectorsAndTasks) addTask(x TaskID) {
	if !c.hasTask(x) {
		c.tasks = append(c.tasks, x)
	}
}
func (c *connectorsAndTasks) addAll(o connectorsAndTasks) {
	for _, x := range o.conns {
		c.addConn(x)
	}
	for _, x := range o.tasks {
		c.addTask(x)
	}
}
func (c *connectorsAndTasks) removeAll(o connectorsAndTasks) {
	rc := map[string]bool{}
	for _, x := range o.conns {
		rc[x] = true
	}
	rt := map[TaskID]bool{}
	for _, x := range o.tasks {
		rt[x] = true
	}
	nc := c.conns[:0:0]
	for _, x := range c.conns {
		if !rc[x] {
			nc = append(nc, x)
		}
	}
	nt := c.tasks[:0:0]
	for _, x := range c.tasks {
		if !rt[x] {
			nt = append(nt, x)
		}
	}
	c.conns, c.tasks = nc, nt
}
func (c connectorsAndTasks) empty() bool { return len(c.conns) == 0 && len(c.tasks) == 0 }
func (c connectorsAndTasks) clone() connectorsAndTasks {
	return connectorsAndTasks{append([]string(nil), c.conns...), append([]TaskID(nil), c.tasks...)}
}
func (c connectorsAndTasks) public() ConnectorsAndTasks {
	return ConnectorsAndTasks{Connectors: append([]string(nil), c.conns...), Tasks: append([]TaskID(nil), c.tasks...)}
}
func fromPublic(p ConnectorsAndTasks) connectorsAndTasks {
	var c connectorsAndTasks
	for _, x := range p.Connectors {
		c.addConn(x)
	}
	for _, x := range p.Tasks {
		c.addTask(x)
	}
	return c
}

// diff returns base minus every sub, sorted (the JVM uses TreeSets here).
func diff(base connectorsAndTasks, subs ...connectorsAndTasks) connectorsAndTasks {
	out := base.clone()
	for _, s := range subs {
		out.removeAll(s)
	}
	p := out.public().Sorted()
	return connectorsAndTasks{p.Connectors, p.Tasks}
}

// workerLoad is one worker's share of an assignment while the leader computes it (the JVM's WorkerLoad).
type workerLoad struct {
	worker string
	connectorsAndTasks
}

// IncrementalAssignor is the leader-side state of incremental cooperative rebalancing (KIP-415), a port of the
// JVM's IncrementalCooperativeAssignor. Not safe for concurrent use; the member loop calls it from one goroutine.
type IncrementalAssignor struct {
	MaxDelay time.Duration
	Now      func() time.Time

	previousAssignment       connectorsAndTasks
	previousRevocation       connectorsAndTasks
	revokedInPrevious        bool
	candidateWorkers         []string
	scheduledRebalance       time.Time
	delay                    time.Duration
	previousGenerationID     int32
	previousMembers          map[string]bool
	numSuccessiveRevocations int
}

// NewIncrementalAssignor returns an assignor holding lost work for maxDelay (scheduled.rebalance.max.delay.ms).
func NewIncrementalAssignor(maxDelay time.Duration) *IncrementalAssignor {
	return &IncrementalAssignor{MaxDelay: maxDelay, Now: time.Now, previousGenerationID: -1}
}

func (a *IncrementalAssignor) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}

// backoff is the JVM's ExponentialBackoff(1, 40, maxDelay, jitter 0) for consecutive revoking rebalances.
func (a *IncrementalAssignor) backoff(attempts int) time.Duration {
	if a.MaxDelay == 0 {
		return 0
	}
	d := time.Millisecond
	for i := 0; i < attempts && d < a.MaxDelay; i++ {
		d *= 40
	}
	if d > a.MaxDelay {
		d = a.MaxDelay
	}
	return d
}

// Assign computes the round. lastCompletedGen is the generation of the last assignment this leader synced
// successfully (-1 if none), gen the current one; members maps member id to its reported current assignment.
func (a *IncrementalAssignor) Assign(snap ConfigSnapshot, lastCompletedGen, gen int32, members map[string]ConnectorsAndTasks) *Result {
	if a.previousGenerationID != lastCompletedGen {
		a.previousAssignment = connectorsAndTasks{}
	}
	memberIDs := make([]string, 0, len(members))
	for m := range members {
		memberIDs = append(memberIDs, m)
	}
	sort.Strings(memberIDs)
	memberCts := map[string]connectorsAndTasks{}
	for _, m := range memberIDs {
		memberCts[m] = fromPublic(members[m])
	}

	var configured connectorsAndTasks
	configured.conns = snap.Connectors()
	configured.tasks = snap.Tasks()

	var active connectorsAndTasks
	for _, m := range memberIDs {
		active.addAll(memberCts[m])
	}

	if !a.previousRevocation.empty() {
		stillActive := false
		for _, c := range a.previousRevocation.conns {
			stillActive = stillActive || active.hasConn(c)
		}
		for _, t := range a.previousRevocation.tasks {
			stillActive = stillActive || active.hasTask(t)
		}
		if stillActive {
			a.previousAssignment = active.clone()
		}
		a.previousRevocation = connectorsAndTasks{}
	}

	deleted := diff(a.previousAssignment, configured)
	duplicated := duplicatedAssignments(memberIDs, memberCts)
	lost := diff(a.previousAssignment, active, deleted)
	created := diff(configured, a.previousAssignment, active)

	toRevoke := map[string]*connectorsAndTasks{}
	addRevoke := func(m map[string]connectorsAndTasks) {
		for w, c := range m {
			if c.empty() {
				continue
			}
			if toRevoke[w] == nil {
				toRevoke[w] = &connectorsAndTasks{}
			}
			toRevoke[w].addAll(c)
		}
	}
	deletedToRevoke := intersection(deleted, memberIDs, memberCts)
	addRevoke(deletedToRevoke)
	duplicatedToRevoke := intersection(duplicated, memberIDs, memberCts)
	addRevoke(duplicatedToRevoke)

	// current assignment without deleted work (for the incremental diff), next = what will run after the round
	current := map[string]connectorsAndTasks{}
	for _, m := range memberIDs {
		c := memberCts[m].clone()
		c.removeAll(deleted)
		current[m] = c
	}
	next := make([]*workerLoad, 0, len(memberIDs))
	for _, m := range memberIDs {
		wl := &workerLoad{worker: m, connectorsAndTasks: memberCts[m].clone()}
		wl.removeAll(deletedToRevoke[m])
		wl.removeAll(duplicatedToRevoke[m])
		next = append(next, wl)
	}

	var lostToReassign connectorsAndTasks
	a.handleLost(lost, &lostToReassign, next)

	if a.delay == 0 {
		lb := performLoadBalancingRevocations(configured, next)
		switch {
		case a.revokedInPrevious && len(lb) > 0:
			a.numSuccessiveRevocations++
			a.delay = a.backoff(a.numSuccessiveRevocations)
			if a.delay != 0 {
				a.scheduledRebalance = a.now().Add(a.delay)
			} else {
				addRevoke(lb)
				removeLoads(next, lb)
			}
		case len(lb) > 0:
			addRevoke(lb)
			removeLoads(next, lb)
			a.revokedInPrevious = true
		case a.revokedInPrevious:
			a.revokedInPrevious = false
			a.numSuccessiveRevocations = 0
		}
	} else {
		a.revokedInPrevious = false
	}

	var toAssign connectorsAndTasks
	toAssign.addAll(created)
	toAssign.addAll(lostToReassign)
	assignConnectors(next, toAssign.conns)
	assignTasks(next, toAssign.tasks)

	res := &Result{Assignments: map[string]MemberAssignment{}, All: map[string]ConnectorsAndTasks{}, Delay: a.delay}
	var prev connectorsAndTasks
	for _, wl := range next {
		incr := wl.connectorsAndTasks.clone()
		incr.removeAll(current[wl.worker])
		ma := MemberAssignment{Assigned: incr.public()}
		all := wl.connectorsAndTasks.clone()
		if r := toRevoke[wl.worker]; r != nil {
			ma.Revoked = r.public()
			all.removeAll(*r)
		}
		res.Assignments[wl.worker] = ma
		res.All[wl.worker] = all.public()
		prev.addAll(wl.connectorsAndTasks)
	}
	// previous assignment: next minus revoked, plus lost (still accounted for while the delay runs)
	for _, r := range toRevoke {
		prev.removeAll(*r)
		a.previousRevocation.addAll(*r)
	}
	prev.addAll(lost)
	a.previousAssignment = prev
	a.previousGenerationID = gen
	a.previousMembers = map[string]bool{}
	for _, m := range memberIDs {
		a.previousMembers[m] = true
	}
	return res
}

func (a *IncrementalAssignor) handleLost(lost connectorsAndTasks, toReassign *connectorsAndTasks, loads []*workerLoad) {
	if lost.empty() && !a.revokedInPrevious {
		a.resetDelay()
		return
	}
	now := a.now()
	active := map[string]bool{}
	for _, wl := range loads {
		active[wl.worker] = true
	}
	allPrevActive := true
	for m := range a.previousMembers {
		allPrevActive = allPrevActive && active[m]
	}
	if a.scheduledRebalance.IsZero() && allPrevActive {
		// nobody left: the work went missing some other way (a member missed an assignment); treat it as new
		toReassign.addAll(lost)
		return
	}
	if a.MaxDelay == 0 {
		toReassign.addAll(lost)
		return
	}
	if !a.scheduledRebalance.IsZero() && !now.Before(a.scheduledRebalance) {
		var candidates []*workerLoad
		for _, c := range a.candidateWorkers {
			for _, wl := range loads {
				if wl.worker == c {
					candidates = append(candidates, wl)
				}
			}
		}
		if len(candidates) > 0 {
			for i, c := range lost.conns {
				candidates[i%len(candidates)].addConn(c)
			}
			for i, t := range lost.tasks {
				candidates[i%len(candidates)].addTask(t)
			}
		} else {
			toReassign.addAll(lost)
		}
		a.resetDelay()
		a.revokedInPrevious = false
		return
	}
	for _, wl := range loads {
		if wl.empty() {
			found := false
			for _, c := range a.candidateWorkers {
				found = found || c == wl.worker
			}
			if !found {
				a.candidateWorkers = append(a.candidateWorkers, wl.worker)
			}
		}
	}
	if now.Before(a.scheduledRebalance) {
		d := a.scheduledRebalance.Sub(now)
		if d > a.MaxDelay {
			d = a.MaxDelay
		}
		a.delay = d
	} else {
		a.delay = a.MaxDelay
	}
	a.scheduledRebalance = now.Add(a.delay)
}

func (a *IncrementalAssignor) resetDelay() {
	a.candidateWorkers = nil
	a.scheduledRebalance = time.Time{}
	a.delay = 0
}

func duplicatedAssignments(ids []string, m map[string]connectorsAndTasks) connectorsAndTasks {
	cc := map[string]int{}
	tc := map[TaskID]int{}
	for _, id := range ids {
		for _, c := range m[id].conns {
			cc[c]++
		}
		for _, t := range m[id].tasks {
			tc[t]++
		}
	}
	var out connectorsAndTasks
	for c, n := range cc {
		if n > 1 {
			out.addConn(c)
		}
	}
	for t, n := range tc {
		if n > 1 {
			out.addTask(t)
		}
	}
	return diff(out)
}

func intersection(set connectorsAndTasks, ids []string, m map[string]connectorsAndTasks) map[string]connectorsAndTasks {
	out := map[string]connectorsAndTasks{}
	for _, id := range ids {
		var c connectorsAndTasks
		for _, x := range m[id].conns {
			if set.hasConn(x) {
				c.addConn(x)
			}
		}
		for _, x := range m[id].tasks {
			if set.hasTask(x) {
				c.addTask(x)
			}
		}
		out[id] = c
	}
	return out
}

func removeLoads(loads []*workerLoad, rm map[string]connectorsAndTasks) {
	for _, wl := range loads {
		wl.removeAll(rm[wl.worker])
	}
}

func performLoadBalancingRevocations(configured connectorsAndTasks, loads []*workerLoad) map[string]connectorsAndTasks {
	allEmpty := true
	for _, wl := range loads {
		allEmpty = allEmpty && wl.empty()
	}
	if allEmpty || configured.empty() {
		return nil
	}
	out := map[string]connectorsAndTasks{}
	connRev := lbRevocations(len(configured.conns), loads, func(w *workerLoad) int { return len(w.conns) })
	for w, n := range connRev {
		c := out[w]
		for _, wl := range loads {
			if wl.worker == w {
				c.conns = append(c.conns, wl.conns[:n]...)
			}
		}
		out[w] = c
	}
	taskRev := lbRevocations(len(configured.tasks), loads, func(w *workerLoad) int { return len(w.tasks) })
	for w, n := range taskRev {
		c := out[w]
		for _, wl := range loads {
			if wl.worker == w {
				c.tasks = append(c.tasks, wl.tasks[:n]...)
			}
		}
		out[w] = c
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// lbRevocations returns how many of a resource to revoke from each over-allocated worker (first n in order).
func lbRevocations(total int, loads []*workerLoad, size func(*workerLoad) int) map[string]int {
	n := len(loads)
	minPer := total / n
	extra := total % n
	var atMin, atExtra int
	for _, wl := range loads {
		switch size(wl) {
		case minPer:
			atMin++
		case minPer + 1:
			atExtra++
		}
	}
	if atExtra == extra && atMin+atExtra == n {
		return nil
	}
	out := map[string]int{}
	allocatedExtras := 0
	for _, wl := range loads {
		cur := size(wl)
		if cur <= minPer {
			continue
		}
		max := minPer
		if allocatedExtras < extra {
			allocatedExtras++
			if cur == minPer+1 {
				continue
			}
			max = minPer + 1
		}
		out[wl.worker] = cur - max
	}
	return out
}

func assignConnectors(loads []*workerLoad, conns []string) {
	if len(conns) == 0 || len(loads) == 0 {
		return
	}
	sort.SliceStable(loads, func(i, j int) bool {
		if len(loads[i].conns) != len(loads[j].conns) {
			return len(loads[i].conns) < len(loads[j].conns)
		}
		return loads[i].worker < loads[j].worker
	})
	first := loads[0]
	k := 0
	for k < len(conns) {
		firstLoad := len(first.conns)
		upTo := len(loads)
		for i, wl := range loads {
			if len(wl.conns) > firstLoad {
				upTo = i
				break
			}
		}
		for _, wl := range loads[:upTo] {
			wl.addConn(conns[k])
			k++
			if k == len(conns) {
				break
			}
		}
	}
}

func assignTasks(loads []*workerLoad, tasks []TaskID) {
	if len(tasks) == 0 || len(loads) == 0 {
		return
	}
	sort.SliceStable(loads, func(i, j int) bool {
		if len(loads[i].tasks) != len(loads[j].tasks) {
			return len(loads[i].tasks) < len(loads[j].tasks)
		}
		return loads[i].worker < loads[j].worker
	})
	first := loads[0]
	k := 0
	for k < len(tasks) {
		firstLoad := len(first.tasks)
		upTo := len(loads)
		for i, wl := range loads {
			if len(wl.tasks) > firstLoad {
				upTo = i
				break
			}
		}
		for _, wl := range loads[:upTo] {
			wl.addTask(tasks[k])
			k++
			if k == len(tasks) {
				break
			}
		}
	}
}
