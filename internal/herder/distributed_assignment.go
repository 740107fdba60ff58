package herder

// The distributed herder's side of group membership (group.Handler, called on the member's goroutine) and
// the local work an assignment starts and a revocation stops (on the herder's goroutine).

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/store"
	"github.com/connectd/connectd/internal/worker"
)

func (d *Distributed) State() (string, int64) { return d.url, d.configs.Offset() }

func (d *Distributed) CatchUp(offset int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.SyncTimeout)
	defer cancel()
	if d.configs.Offset() >= offset {
		return true
	}
	_ = d.configLog.ReadToEnd(ctx)
	return d.configs.Offset() >= offset
}

func (d *Distributed) LeaderSnapshot(maxOffset int64) (group.ConfigSnapshot, bool) {
	ok := d.CatchUp(maxOffset)
	snap := d.configs.Snapshot()
	gs := group.ConfigSnapshot{Offset: snap.Offset, TaskCounts: map[string]int{}}
	for _, n := range snap.ConnectorNames() {
		gs.TaskCounts[n] = snap.TaskCounts[n]
	}
	if ok {
		d.enqueue("session-key", d.ensureSessionKey)
	}
	return gs, ok
}

// Revoke is the group callback (member goroutine): the work stops being ours at once (nothing of it is started
// again), and the herder stops it in order with its other work; done closes when it is stopped.
func (d *Distributed) Revoke(c group.ConnectorsAndTasks, lost bool) <-chan struct{} {
	d.mu.Lock()
	if lost {
		d.assigned = group.ConnectorsAndTasks{}
	} else {
		d.assigned = without(d.assigned, c)
	}
	d.mu.Unlock()
	done := make(chan struct{})
	// once the herder loop ended (the worker stops) the channel stays open: Stop stops all local work itself
	// and ends the member, which stops waiting then
	d.q.pushUrgent(func() {
		slog.Info("revoking", "connectors", c.Connectors, "tasks", fmt.Sprint(c.Tasks), "membership_lost", lost)
		d.revoke(c)
		close(done)
	})
	return done
}

// without is a minus b.
func without(a, b group.ConnectorsAndTasks) group.ConnectorsAndTasks {
	gone := map[string]bool{}
	for _, n := range b.Connectors {
		gone[n] = true
	}
	goneTasks := map[group.TaskID]bool{}
	for _, t := range b.Tasks {
		goneTasks[t] = true
	}
	var out group.ConnectorsAndTasks
	for _, n := range a.Connectors {
		if !gone[n] {
			out.Connectors = append(out.Connectors, n)
		}
	}
	for _, t := range a.Tasks {
		if !goneTasks[t] {
			out.Tasks = append(out.Tasks, t)
		}
	}
	return out
}

func (d *Distributed) revoke(c group.ConnectorsAndTasks) {
	var ids []state.TaskID
	for _, t := range c.Tasks {
		ids = append(ids, state.TaskID{Connector: t.Connector, Task: int(t.Task)})
	}
	d.w.StopTasks(ids)
	d.mu.Lock()
	for _, id := range ids {
		delete(d.tasks, id)
	}
	for _, n := range c.Connectors {
		delete(d.running, n)
	}
	d.mu.Unlock()
	for _, n := range c.Connectors {
		d.w.StopConnector(n)
	}
}

// Assigned is the group callback (member goroutine): the assignment is applied by the herder goroutine.
func (d *Distributed) Assigned(a *group.Assignment, full group.ConnectorsAndTasks, gen int32, isLeader bool) {
	d.statuses.SupersedeAbove(gen)
	d.mu.Lock()
	d.assigned = full
	d.mu.Unlock()
	d.q.pushAssignment(func() { d.applyAssignment(a, full, gen, isLeader) })
}

// applyAssignment starts what the assignment gives this worker and is not running here. An assignment whose
// generation is no longer the member's (a newer one is on its way, or the membership was lost) is skipped:
// its work may belong to someone else by now.
func (d *Distributed) applyAssignment(a *group.Assignment, full group.ConnectorsAndTasks, gen int32, isLeader bool) {
	if !d.member.IsCurrent(gen) {
		slog.Info("skipping an outdated assignment", "generation", gen)
		return
	}
	d.mu.Lock()
	d.generation = gen
	d.ready = true
	d.mu.Unlock()
	slog.Info("rebalance done", "generation", gen, "leader", isLeader, "protocol", a.Version, "assigned", fmt.Sprint(a.Connectors, a.Tasks),
		"revoked", fmt.Sprint(a.RevokedConnectors, a.RevokedTasks), "delay", a.Delay, "running", fmt.Sprint(full.Connectors, full.Tasks))
	snap := d.configs.Snapshot()
	for _, n := range full.Connectors {
		d.mu.Lock()
		run := d.running[n]
		d.mu.Unlock()
		if !run {
			d.startConnector(snap, n)
		}
	}
	for _, t := range full.Tasks {
		id := state.TaskID{Connector: t.Connector, Task: int(t.Task)}
		d.mu.Lock()
		_, run := d.tasks[id]
		d.mu.Unlock()
		if !run {
			d.startTask(snap, id)
		}
	}
}

// owns says whether the current assignment holds the connector (task < 0) or the task, and the membership is
// current: only then may it be started here.
func (d *Distributed) owns(connector string, task int) bool {
	d.mu.Lock()
	gen, a := d.generation, d.assigned
	d.mu.Unlock()
	if d.member == nil || !d.member.IsCurrent(gen) {
		return false
	}
	if task < 0 {
		return slices.Contains(a.Connectors, connector)
	}
	return slices.Contains(a.Tasks, group.TaskID{Connector: connector, Task: int32(task)})
}

func (d *Distributed) startConnector(snap *store.Snapshot, name string) {
	props, ok := snap.Connectors[name]
	if !ok || !d.owns(name, -1) {
		return
	}
	target := snap.TargetState(name)
	if err := pinError(d.w.Registry(), name, props); err != nil {
		slog.Error("connector failed to start", "connector", name, "error", err)
		d.ConnectorState(name, state.Failed, worker.Trace(err))
		return
	}
	if err := d.w.StartConnector(name, props, target, func() { d.requestReconfigure(name) }); err != nil {
		slog.Error("connector failed to start", "connector", name, "error", err)
		return
	}
	d.mu.Lock()
	d.running[name] = true
	d.mu.Unlock()
	d.requestReconfigure(name)
}

func (d *Distributed) startTask(snap *store.Snapshot, id state.TaskID) {
	conn, ok := snap.Connectors[id.Connector]
	if !ok || id.Task >= snap.TaskCounts[id.Connector] || snap.TargetState(id.Connector) == state.Stopped {
		return // a STOPPED connector runs no tasks (its owner is about to write an empty task set)
	}
	if !d.owns(id.Connector, id.Task) {
		return
	}
	if err := pinError(d.w.Registry(), id.Connector, conn); err != nil {
		// not taken as running here, so never restarted automatically: only a new config can change the verdict
		slog.Error("task failed to start", "task", id.String(), "error", err)
		d.TaskState(id, state.Failed, worker.Trace(err))
		return
	}
	tc := snap.TaskConfigs[id]
	d.mu.Lock()
	d.tasks[id] = tc
	d.mu.Unlock()
	if err := d.w.StartTask(id, conn, tc, snap.TargetState(id.Connector)); err != nil {
		slog.Error("task failed to start", "task", id.String(), "error", err)
	}
}

// reconfigure runs on the connector's owner: regenerate task configs and have the leader write them if they
