package herder

// store.ConfigListener: config-topic records as they are read, turned into herder operations.

import (
	"log/slog"
	"maps"

	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/store"
)

func (d *Distributed) ConnectorConfigUpdated(name string, removed bool) {
	d.enqueue("", func() {
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
		if d.member != nil {
			d.member.RequestRejoin()
		}
	})
}

// destroyStatuses writes DESTROYED (tombstones) for a deleted connector's status records, as the JVM leader does.
func (d *Distributed) destroyStatuses(name string) {
	_ = d.statuses.PutConnector(name, d.status(state.Destroyed, "", nil), false)
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

func (d *Distributed) TaskConfigsUpdated(name string, count int) {
	d.enqueue("", func() {
		// restart local tasks of the connector whose config changed; drop those beyond the new count
		snap := d.configs.Snapshot()
		for _, id := range d.localTasks(name) {
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
		if d.member != nil {
			d.member.RequestRejoin()
		}
	})
}

func (d *Distributed) TargetStateChanged(name string) {
	d.enqueue("", func() {
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
	d.enqueue("", func() {
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
