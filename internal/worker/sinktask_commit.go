package worker

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/connectd/connectd/connect"
)

// put delivers records; a retriable error keeps the batch for redelivery with backoff, any other fails
// the task.
func (st *sinkTask) put(ctx context.Context, recs []*connect.SinkRecord) error {
	st.timeoutReq = 0
	start := time.Now()
	err := st.task.Put(ctx, recs)
	st.metrics.Put.Observe(time.Since(start).Seconds())
	if err == nil {
		st.metrics.Sent.Add(float64(len(recs)))
		st.recordsPut += int64(len(recs))
		st.retryDelay = 0
		st.putSinceFlush = true
		st.applyPending()
		if st.timeoutReq > 0 {
			st.idleAt = time.Now().Add(st.timeoutReq)
		}
		st.pruneRaw()
		return nil
	}
	if connect.IsRetriable(err) {
		// Keep our own copy: the buffers are reused for the next fetch.
		cp := make([]*connect.SinkRecord, len(recs))
		for i, r := range recs {
			c := *r
			cp[i] = &c
		}
		st.retryBatch = cp
		d := st.timeoutReq
		if d <= 0 {
			st.retryDelay = min(max(2*st.retryDelay, 100*time.Millisecond), 10*time.Second)
			d = st.retryDelay
		}
		st.retryAt = time.Now().Add(d)
		st.log.Warn("retriable error from put, redelivering the batch", "records", len(recs), "after", d, "error", err)
		return nil
	}
	return fmt.Errorf("put: %w", err)
}

// maxRawKept bounds the originals kept for DLQ reports of records not yet committed (a task whose
// preCommit never commits must not keep every record); beyond it, reports of already put records carry
// the context headers without the original bytes.
const maxRawKept = 100_000

func (st *sinkTask) pruneRaw() {
	if len(st.raw) <= maxRawKept {
		return
	}
	for k := range st.raw {
		if cur, ok := st.current[connect.TopicPartition{Topic: k.topic, Partition: k.partition}]; ok && k.offset < cur {
			delete(st.raw, k)
		}
	}
}

// applyPending advances the consumed positions once a batch was put (JVM: currentOffsets after put).
func (st *sinkTask) applyPending() {
	for tp, off := range st.pending {
		if st.assignment[tp] {
			st.current[tp] = off
		}
		delete(st.pending, tp)
	}
}

// commit asks the task what is safe (preCommit, or flush + current) and commits it to the group: of the
// partitions in only, or of all assigned ones if only is nil.
func (st *sinkTask) commit(ctx context.Context, final bool, only map[connect.TopicPartition]bool) error {
	if !st.inSession {
		return nil
	}
	if final {
		// the last commit of revoked partitions, whose lag is their next owner's to report
		defer func() {
			for tp := range only {
				delete(st.hwm, tp)
				st.metrics.ForgetPartition(tp.Topic, tp.Partition)
			}
		}()
	}
	current := make(map[connect.TopicPartition]connect.OffsetAndMetadata, len(st.current))
	for tp, off := range st.current {
		if st.assignment[tp] && (only == nil || only[tp]) {
			current[tp] = connect.OffsetAndMetadata{Offset: off}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, max(st.w.cfg.OffsetFlushTimeout, 5*time.Second)*6)
	defer cancel()
	var toCommit map[connect.TopicPartition]connect.OffsetAndMetadata
	var err error
	if pc, ok := st.task.(connect.PreCommitter); ok {
		toCommit, err = pc.PreCommit(cctx, current)
	} else {
		err = st.task.Flush(cctx, current)
		toCommit = current
	}
	if err != nil {
		st.metrics.Fails.Inc()
		st.log.Error("offset commit failed, rewinding to the last committed offsets", "error", err)
		if final {
			return nil
		}
		st.rewindToCommitted()
		return nil
	}
	// Only what changed since the last successful commit is sent; an offset whose commit failed is
	// sent again on the next cycle.
	send := map[connect.TopicPartition]connect.OffsetAndMetadata{}
	for tp, om := range toCommit {
		cur, consumed := st.current[tp]
		if !st.assignment[tp] || (only != nil && !only[tp]) || !consumed || om.Offset > cur {
			continue
		}
		if last, ok := st.lastCommitted[tp]; ok && last == om.Offset {
			continue
		}
		send[tp] = om
	}
	if len(send) > 0 {
		committed, err := st.commitOffsets(cctx, send)
		if err != nil {
			st.log.Warn("offset commit failed, the offsets are sent again on the next commit", "error", err)
		}
		for tp := range committed {
			st.lastCommitted[tp] = send[tp].Offset
			st.metrics.SetCommitted(tp.Topic, tp.Partition, send[tp].Offset)
			if h, ok := st.hwm[tp]; ok {
				st.metrics.SetCommittedLag(tp.Topic, tp.Partition, max(h-send[tp].Offset, 0))
			}
		}
		if len(committed) > 0 {
			st.metrics.Commits.Inc()
		}
	}
	// Originals below every committed offset are no longer needed for DLQ reporting.
	for k := range st.raw {
		if last, ok := st.lastCommitted[connect.TopicPartition{Topic: k.topic, Partition: k.partition}]; ok && k.offset < last {
			delete(st.raw, k)
		}
	}
	return nil
}

// noteHWM keeps a partition's high watermark, for its lag behind the committed offset: a lag that returns
// to zero when the task's commits reach the end of the partition, records it was never given included.
func (st *sinkTask) noteHWM(tp connect.TopicPartition, hwm int64) {
	if st.hwm == nil {
		st.hwm = map[connect.TopicPartition]int64{}
	}
	st.hwm[tp] = hwm
	if c, ok := st.lastCommitted[tp]; ok {
		st.metrics.SetCommittedLag(tp.Topic, tp.Partition, max(hwm-c, 0))
	}
}

// rewindToCommitted re-consumes from the last committed offsets after a failed flush (JVM behaviour).
// A partition with nothing committed yet whose records wait for a resume is rewound to the first of them.
func (st *sinkTask) rewindToCommitted() {
	seeks := map[connect.TopicPartition]int64{}
	for tp := range st.assignment {
		if off, ok := st.lastCommitted[tp]; ok {
			seeks[tp] = off
			st.current[tp] = off
		} else if bs := st.stashed[tp]; len(bs) > 0 {
			seeks[tp] = bs[0].msgs[0].Offset
		}
	}
	for _, b := range st.ready {
		if _, ok := seeks[b.tp]; !ok {
			seeks[b.tp] = b.msgs[0].Offset
		}
	}
	st.seek(seeks)
	clear(st.pending)
	st.retryBatch, st.idleAt = nil, time.Time{}
	st.ready = nil
	clear(st.stashed)
}

func (st *sinkTask) finalCommit() error {
	if st.isCancelled() {
		return context.Canceled
	}
	return nil // the final commit happens in onRevoked when the session ends
}

func sortTPs(tps []connect.TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}
