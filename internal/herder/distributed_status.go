package herder

// state.Listener: the local worker reports connector and task states here; they go to the status topic with
// this worker's generation.

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/store"
)

func (d *Distributed) status(s state.State, trace string, version func() *string) store.Status {
	d.mu.Lock()
	gen := d.generation
	d.mu.Unlock()
	st := store.Status{State: s, WorkerID: d.w.ID(), Generation: gen, Version: statusVersion(s, version).Ptr()}
	if trace != "" {
		st.Trace = &trace
	}
	return st
}

func (d *Distributed) ConnectorState(name string, s state.State, trace string) {
	st := d.status(s, trace, func() *string { return d.w.ConnectorVersion(name) })
	if err := d.statuses.PutConnector(name, st, s == state.Unassigned); err != nil {
		slog.Warn("writing connector status failed", "connector", name, "error", err)
	}
}

func (d *Distributed) TaskState(id state.TaskID, s state.State, trace string) {
	d.mu.Lock()
	_, local := d.tasks[id]
	attempt := d.restarts[id]
	if s == state.Running {
		delete(d.restarts, id)
	}
	d.mu.Unlock()
	if s == state.Failed && local {
		// automatic restart with exponential backoff, announced in the status trace
		delay := d.cfg.RestartBackoffMin << attempt
		if delay > d.cfg.RestartBackoffMax || delay <= 0 {
			delay = d.cfg.RestartBackoffMax
		}
		d.mu.Lock()
		d.restarts[id] = attempt + 1
		d.mu.Unlock()
		trace = fmt.Sprintf("%s\nconnectd: automatic restart attempt %d in %d ms", trace, attempt+1, delay.Milliseconds())
		time.AfterFunc(delay, func() {
			d.enqueue("restart/"+id.String(), func() {
				d.mu.Lock()
				_, still := d.tasks[id]
				d.mu.Unlock()
				if still {
					d.restartLocalTask(d.configs.Snapshot(), id)
				}
			})
		})
	}
	if err := d.statuses.PutTask(id, d.status(s, trace, func() *string { return d.w.TaskVersion(id) }), s == state.Unassigned); err != nil {
		slog.Warn("writing task status failed", "task", id.String(), "error", err)
	}
}

func (d *Distributed) TopicActive(connector, topic string, task int) {
	if err := d.statuses.PutTopic(connector, topic, task, time.Now()); err != nil {
		slog.Warn("writing topic status failed", "connector", connector, "error", err)
	}
}
