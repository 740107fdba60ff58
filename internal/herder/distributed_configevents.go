package herder

// store.ConfigListener: config-topic records as they are read, turned into herder operations.

import (
	"fmt"
	"log/slog"
	"maps"

	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/store"
)

// Each record is turned into one operation per connector and kind while it is pending (a burst of records
// costs one). A rebalance is asked for at once, from the reader's goroutine, when what the leader assigns
// from changed (a connector added or removed, a task count): the group's members all read the record and
// rejoin together, without waiting for the herder's queue. A changed config of an existing connector or of
// its tasks needs none: their owners restart them.

// noteAssignable records a connector's presence and committed task count as the config store now has them
// and says whether they changed since the last call for it.
func (d *Distributed) noteAssignable(name string) bool {
	_, count, exists := d.configs.Connector(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	prev, had := d.assignable[name]
	if !exists {
		delete(d.assignable, name)
		return had
	}
	d.assignable[name] = count
	return !had || prev != count
}

// rejoinIfAssignmentChanged asks for a rebalance when the connector's presence or task count changed.
func (d *Distributed) rejoinIfAssignmentChanged(name string) {
	if d.noteAssignable(name) && d.member != nil {
		d.member.RequestRejoin()
	}
}

func (d *Distributed) ConnectorConfigUpdated(name string, removed bool) {
	d.rejoinIfAssignmentChanged(name)
	d.enqueue(fmt.Sprintf("connector/%s/%t", name, removed), func() {
		d.mu.Lock()
		run := d.running[name]
		d.mu.Unlock()
		if removed {
			if run {
				d.revoke(group.ConnectorsAndTasks{Connectors: []string{name}})
			}
			var ids []group.TaskID
			for _, id := range d.localTasks(name) {
				ids = append(ids, group.TaskID{Connector: name, Task: int32(id.Task)})
			}
			d.revoke(group.ConnectorsAndTasks{Tasks: ids})
			if self, _ := d.isLeader(); self {
				d.destroyStatuses(name)
			}
		} else if run {
			d.w.StopConnector(name)
			d.mu.Lock()
			delete(d.running, name)
			d.mu.Unlock()
			d.startConnector(d.configs.Snapshot(), name)
		}
	})
}

// destroyStatuses writes DESTROYED (tombstones) for a deleted connector's status records, as the JVM leader does.
func (d *Distributed) destroyStatuses(name string) {
	d.putConnectorStatus(name, d.status(state.Destroyed, "", nil), false)
	for i := range d.statuses.Tasks(name) {
		_ = d.statuses.PutTask(state.TaskID{Connector: name, Task: i}, d.status(state.Destroyed, "", nil), false)
	}
}

func (d *Distributed) localTasks(name string) []state.TaskID {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []state.TaskID
	for id := range d.tasks {
		if id.Connector == name {
			out = append(out, id)
		}
	}
	return out
}

func (d *Distributed) TaskConfigsUpdated(name string, _ int) {
	d.rejoinIfAssignmentChanged(name)
	d.enqueue("tasks/"+name, func() {
		// restart local tasks of the connector whose config changed; drop those beyond the committed count
		local := d.localTasks(name)
		if len(local) == 0 {
			return
		}
		snap := d.configs.Snapshot()
		count := snap.TaskCounts[name]
		for _, id := range local {
			d.mu.Lock()
			old := d.tasks[id]
			d.mu.Unlock()
			if id.Task < count && maps.Equal(old, snap.TaskConfigs[id]) {
				continue
			}
			d.w.StopTasks([]state.TaskID{id})
			d.mu.Lock()
			delete(d.tasks, id)
			d.mu.Unlock()
			if id.Task < count {
				d.startTask(snap, id)
			}
		}
	})
}

func (d *Distributed) TargetStateChanged(name string) {
	d.enqueue("target/"+name, func() {
		t := d.configs.Snapshot().TargetState(name)
		d.mu.Lock()
		run := d.running[name]
		d.mu.Unlock()
		if t == state.Stopped {
			var ids []group.TaskID
			for _, id := range d.localTasks(name) {
				ids = append(ids, group.TaskID{Connector: name, Task: int32(id.Task)})
			}
			d.revoke(group.ConnectorsAndTasks{Tasks: ids})
		}
		if run || t != state.Stopped {
			d.w.SetTargetState(name, t)
		}
		if run {
			d.reconfigure(name)
		}
	})
}

func (d *Distributed) RestartRequested(r store.RestartRequest) {
	d.enqueue(fmt.Sprintf("restart-request/%s/%t/%t", r.Connector, r.IncludeTasks, r.OnlyFailed), func() {
		snap := d.configs.Snapshot()
		d.mu.Lock()
		run := d.running[r.Connector]
		d.mu.Unlock()
		if run {
			cs := d.statuses.Connector(r.Connector)
			if !r.OnlyFailed || (cs != nil && cs.State == state.Failed) {
				d.w.StopConnector(r.Connector)
				d.mu.Lock()
				delete(d.running, r.Connector)
				d.mu.Unlock()
				d.startConnector(snap, r.Connector)
			}
		}
		if r.IncludeTasks {
			for _, id := range d.localTasks(r.Connector) {
				ts := d.statuses.Task(id)
				if r.OnlyFailed && (ts == nil || ts.State != state.Failed) {
					continue
				}
				d.restartLocalTask(snap, id)
			}
		}
	})
}

func (d *Distributed) SessionKeyUpdated(store.SessionKey) {}

// LoggingLevelUpdated applies a cluster-wide logger level read from the config topic (written by
// any worker for PUT /admin/loggers/{ns}?scope=cluster), as the JVM's onLoggingLevelUpdate.
func (d *Distributed) LoggingLevelUpdated(namespace, level string) {
	if _, err := logging.Default.SetLevel(namespace, level); err != nil {
		slog.Warn("ignoring cluster logger level", "namespace", namespace, "level", level, "error", err)
	}
}

func (d *Distributed) restartLocalTask(snap *store.Snapshot, id state.TaskID) {
	d.w.StopTasks([]state.TaskID{id})
	d.mu.Lock()
	delete(d.tasks, id)
	d.mu.Unlock()
	d.startTask(snap, id)
}
