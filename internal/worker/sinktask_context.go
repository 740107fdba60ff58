package worker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/state"
)

// taskContext is the SinkTaskContext handed to the task; its methods run on the task goroutine.
type taskContext struct {
	pluginRuntime
	st *sinkTask
}

func (c *taskContext) Configs() map[string]string { return c.st.taskProps }

func (c *taskContext) Offset(offsets map[connect.TopicPartition]int64) {
	st := c.st
	seeks := map[connect.TopicPartition]int64{}
	for tp, off := range offsets {
		if st.opening {
			st.pendingSeeks[tp] = off // applied to the positions the group fetches, before fetching starts
			continue
		}
		if st.inSession && st.assignment[tp] {
			seeks[tp] = off
			st.current[tp] = off
			delete(st.pending, tp)
		} else {
			st.pendingSeeks[tp] = off // applied at the next assignment of the partition
		}
	}
	st.seek(seeks)
}

func (c *taskContext) Timeout(d time.Duration) { c.st.timeoutReq = d }

func (c *taskContext) Assignment() []connect.TopicPartition {
	var out []connect.TopicPartition
	for tp := range c.st.assignment {
		out = append(out, tp)
	}
	sortTPs(out)
	return out
}

func (c *taskContext) Pause(tps ...connect.TopicPartition) {
	for _, tp := range tps {
		c.st.taskPaused[tp] = true
	}
	c.st.pauseFetch(tps...)
}

func (c *taskContext) Resume(tps ...connect.TopicPartition) {
	st := c.st
	for _, tp := range tps {
		delete(st.taskPaused, tp)
		if st.target == state.Started {
			st.resumeFetch(tp)
		}
		if bs := st.stashed[tp]; len(bs) > 0 {
			delete(st.stashed, tp)
			st.ready = append(st.ready, bs...)
		}
	}
}

// RequestCommit may be called from any goroutine (a connector's own committer, for example).
func (c *taskContext) RequestCommit() {
	select {
	case c.st.commitReq <- struct{}{}:
	default:
	}
}

// NoteStatus may be called from any goroutine: the task's loop reports the note.
func (c *taskContext) NoteStatus(note string) {
	if old := c.st.statusNote.Load(); old != nil && *old == note || old == nil && note == "" {
		return
	}
	c.st.statusNote.Store(&note)
	select {
	case c.st.noteReq <- struct{}{}:
	default:
	}
}

var _ connect.TaskStatusNoter = (*taskContext)(nil)

func (c *taskContext) WorkerKafkaProps() map[string]string { return c.st.w.cfg.BaseClientProps() }
func (c *taskContext) WorkerID() string                    { return c.st.w.id }
func (c *taskContext) Distributed() bool                   { return c.st.w.cfg.Distributed }

var _ connect.WorkerInfo = (*taskContext)(nil)

func (c *taskContext) ErrantRecordReporter() connect.ErrantRecordReporter {
	if !c.st.errs.tolerateAll && c.st.errs.dlq == nil {
		return nil
	}
	return &errantReporter{st: c.st}
}

type errantReporter struct{ st *sinkTask }

func (r *errantReporter) Report(ctx context.Context, rec *connect.SinkRecord, cause error) error {
	st := r.st
	raw := st.raw[rawKey{rec.OriginalTopic, rec.OriginalPartition, rec.OriginalOffset}]
	if raw == nil {
		raw = &kgo.Record{Topic: rec.OriginalTopic, Partition: rec.OriginalPartition, Offset: rec.OriginalOffset}
	}
	_, err := st.errs.fail(ctx, StageTaskPut, st.taskClass, raw, cause)
	return err
}
