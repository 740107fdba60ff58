package herder

// state.Listener: the local worker reports connector and task states here; they go to the status topic with
// this worker's generation.

import (
	"context"
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

// ConnectorState is mostly called on the herder's goroutine (a connector started, paused, stopped): the
// write is queued for the status writer, in order, so that starting connectors never waits for the status
// topic's acknowledgement (the JVM's status store does not wait either).
func (d *Distributed) ConnectorState(name string, s state.State, trace string) {
	d.putConnectorStatus(name, d.status(s, trace, func() *string { return d.w.ConnectorVersion(name) }), s == state.Unassigned)
}

// putConnectorStatus queues a connector status write; every connector status goes through the one queue,
// so they reach the topic in the order they were made.
func (d *Distributed) putConnectorStatus(name string, st store.Status, safeWrite bool) {
	d.statusQ.push("", func() {
		if err := d.statuses.PutConnector(name, st, safeWrite); err != nil {
			slog.Warn("writing connector status failed", "connector", name, "error", err)
		}
	})
}

// writeStatuses runs the queued connector status writes until ctx ends, then writes what is still queued.
func (d *Distributed) writeStatuses(ctx context.Context) {
	defer close(d.statusDone)
	for {
		if fn, ok := d.statusQ.pop(); ok {
			fn()
			continue
		}
		select {
		case <-d.statusQ.signal:
		case <-ctx.Done():
			for fn, ok := d.statusQ.pop(); ok; fn, ok = d.statusQ.pop() {
				fn()
			}
			d.statusQ.close()
			return
		}
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
