package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/internal/metrics"
	"github.com/connectd/connectd/internal/state"
)

// sinkTask is the JVM's WorkerSinkTask: one consumer in group connect-<name>, and one goroutine that
// converts, transforms and puts batches, and commits what the task's preCommit allows.
type sinkTask struct {
	id                                       state.TaskID
	w                                        *Worker
	task                                     connect.SinkTask
	taskProps                                map[string]string
	connProps                                map[string]string
	keyConv                                  connect.Converter
	valConv                                  connect.Converter
	hdrConv                                  connect.HeaderConverter
	keyConvClass, valConvClass, hdrConvClass string
	chain                                    transformChain
	// jsonValues is the value converter when record values go to the task unconverted (jsonvalue.Value):
	// the task takes them, the converter can vouch for them, and no transformation would need Connect data.
	jsonValues jsonvalue.Converter
	// recycles: the records of a put go back to the consumer's pool once it returned (recyclesRecords)
	recycles   bool
	putBatches []*batch // the batches of the put being made
	errs       *errorHandler
	taskClass  string
	log        *slog.Logger
	metrics    *metrics.Task

	groupID     string
	topics      []string
	topicsRegex *regexp.Regexp
	maxBatch    int
	client      *kgo.Client
	// consumerProps are the consumer's client properties; joined: the group callbacks are between an
	// assignment and its revocation
	consumerProps map[string]string
	joined        atomic.Bool

	// control, from other goroutines
	targetCh  chan state.Target
	commitReq chan struct{}
	// statusNote is the trace of the task's RUNNING status the task noted (connect.TaskStatusNoter);
	// noteReq asks the loop to report it
	statusNote atomic.Pointer[string]
	noteReq    chan struct{}
	events     chan groupEvent
	batches    chan *batch
	done       chan struct{}
	loopDone   chan struct{} // closed when the loop no longer handles group events
	cancel     context.CancelFunc
	cancelled  chan struct{} // closed when the graceful deadline passed: skip the final commit
	seeks      seekQueue
	// rebalanceWanted: a rebalance waits for the poll whose batches are being handed over
	rebalanceWanted chan struct{}

	// loop-owned state
	inSession     bool // between an assignment and its revocation
	assignment    map[connect.TopicPartition]bool
	current       map[connect.TopicPartition]int64 // next offset after what was put
	pending       map[connect.TopicPartition]int64 // next offsets of the batch being put
	lastCommitted map[connect.TopicPartition]int64
	hwm           map[connect.TopicPartition]int64 // high watermark of each partition's last batch: the committed lag
	taskPaused    map[connect.TopicPartition]bool
	stashed       map[connect.TopicPartition][]*batch // batches of task-paused partitions
	pendingSeeks  map[connect.TopicPartition]int64
	seekEpoch     map[connect.TopicPartition]uint64 // the seek epoch of a partition's last seek
	raw           map[rawKey]*kgo.Record            // originals of records not yet committed, for the DLQ
	target        state.Target
	retryBatch    []*connect.SinkRecord
	retryAt       time.Time
	idleAt        time.Time // put([]) requested through SinkTaskContext.Timeout
	ready         []*batch  // stashed batches released by a partition resume, processed before new ones
	putSinceFlush bool
	retryDelay    time.Duration
	timeoutReq    time.Duration
	commitWanted  bool
	recordsBuf    []connect.SinkRecord
	jsonBuf       []jsonvalue.Value  // the values of recordsBuf left unconverted
	jsonMembers   []jsonvalue.Member // the members of jsonBuf's objects
	ptrBuf        []*connect.SinkRecord
	activeTopics  map[string]bool
	startedAt     time.Time
	recordsPut    int64
	opening       bool // inside task.Open: seeks apply before fetching starts
}

type rawKey struct {
	topic     string
	partition int32
	offset    int64
}

type groupEvent struct {
	assigned bool
	lost     bool // revoked: the partitions were lost, a commit would fail
	claims   map[string][]int32
	seeks    map[connect.TopicPartition]int64 // assigned: the seeks of Open, set by the loop
	done     chan struct{}
}

type batch struct {
	epoch uint64 // the seeks applied before the poll that fetched it
	tp    connect.TopicPartition
	msgs  []*kgo.Record
	hwm   int64 // the partition's high watermark when the batch was cut
}

func (st *sinkTask) run(ctx context.Context) {
	defer close(st.done)
	err := st.runLoop(ctx)
	close(st.loopDone)
	st.shutdown(err)
}

func (st *sinkTask) shutdown(runErr error) {
	cancelled := st.isCancelled()
	if !cancelled {
		// a cancelled task's id may already run again here: its status and metrics are the successor's
		defer st.metrics.Forget()
	}
	st.chain.close()
	st.errs.close()
	if st.client != nil {
		st.client.CloseAllowingRebalance() // a poll left unallowed would keep Close's leave waiting
		// and a leave started earlier that still waits for polls to be allowed ends now, on the closed client
		st.client.AllowRebalance()
	}
	if stopErr := st.task.Stop(); stopErr != nil && runErr == nil {
		runErr = fmt.Errorf("stopping task: %w", stopErr)
	}
	if cancelled {
		st.log.Warn("cancelled task finished", "error", runErr)
		return
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		st.log.Error("task failed", "error", runErr)
		st.w.listener.TaskState(st.id, state.Failed, Trace(fmt.Errorf("Exiting WorkerSinkTask due to unrecoverable exception.: %w", runErr)))
		return
	}
	st.w.listener.TaskState(st.id, state.Unassigned, "")
}

// jsonValueConverter is the value converter when the started task takes values unconverted
// (jsonvalue.Sink) and no transformation needs Connect data, nil otherwise.
func (st *sinkTask) jsonValueConverter() jsonvalue.Converter {
	js, ok := st.task.(jsonvalue.Sink)
	if !ok || len(st.chain) > 0 || !js.AcceptsJSONValues() {
		return nil
	}
	c, _ := st.valConv.(jsonvalue.Converter)
	return c
}

func (st *sinkTask) runLoop(ctx context.Context) error {
	st.task.Initialize(&taskContext{st: st})
	if err := st.task.Start(st.taskProps); err != nil {
		return fmt.Errorf("starting task: %w", err)
	}
	st.jsonValues = st.jsonValueConverter()
	st.recycles = st.recyclesRecords()
	if err := st.openConsumer(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // stopped while connecting
		}
		return err
	}
	st.startedAt = time.Now()
	if st.target == state.Paused {
		st.w.listener.TaskState(st.id, state.PausedS, "")
	} else {
		st.w.listener.TaskState(st.id, state.Running, st.runningTrace())
	}
	consumeCtx, stopConsume := context.WithCancel(ctx)
	consumeDone := make(chan struct{})
	go st.consume(consumeCtx, consumeDone)
	go st.watchRetention(consumeCtx)
	defer func() {
		stopConsume()
		// Drain group events: the consumer leaves the group, and its revocation makes the final commit.
		for {
			select {
			case <-consumeDone:
				return
			case ev := <-st.events:
				if !ev.assigned {
					st.onRevoked(ev)
				} else {
					close(ev.done)
				}
			case <-st.batches:
			}
		}
	}()
	flush := time.NewTimer(st.w.cfg.OffsetFlushInterval)
	defer flush.Stop()
	// wake fires for a retriable redelivery (retryAt) or the put([]) a task asked for with Timeout (idleAt).
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	for {
		canPut := st.target == state.Started && st.retryBatch == nil
		if canPut && len(st.ready) > 0 {
			// batches released by a partition resume go first, keeping each partition's order
			if err := st.process(ctx, nil); err != nil {
				return err
			}
		}
		// a retriable failure of that put keeps the batch for redelivery: nothing new until it is put
		canPut = canPut && st.retryBatch == nil
		var batchCh chan *batch
		if canPut {
			batchCh = st.batches
		}
		wakeAt := st.idleAt
		if st.retryBatch != nil {
			wakeAt = st.retryAt
		}
		var wakeC <-chan time.Time
		if !wakeAt.IsZero() {
			wake.Reset(max(time.Until(wakeAt), 0))
			wakeC = wake.C
		}
		select {
		case <-ctx.Done():
			return st.finalCommit()
		case ev := <-st.events:
			if ev.assigned {
				if err := st.onAssigned(ev); err != nil {
					return err
				}
			} else if err := st.onRevoked(ev); err != nil {
				return err
			}
		case b := <-batchCh:
			if err := st.process(ctx, b); err != nil {
				return err
			}
		case <-wakeC:
			recs := st.retryBatch
			st.retryBatch, st.idleAt = nil, time.Time{}
			if recs != nil || st.target == state.Started {
				if err := st.put(ctx, recs); err != nil {
					return err
				}
			}
		case t := <-st.targetCh:
			st.setTarget(t)
		case <-st.commitReq:
			st.commitWanted = true
		case <-st.noteReq:
			if st.target == state.Started {
				st.w.listener.TaskState(st.id, state.Running, st.runningTrace())
			}
		case <-flush.C:
			// The JVM's poll times out at the commit deadline and calls put([]) when nothing came in;
			// time-driven sinks flush their buffers on it.
			if !st.putSinceFlush && st.inSession && st.target == state.Started && st.retryBatch == nil {
				if err := st.put(ctx, nil); err != nil {
					return err
				}
			}
			st.putSinceFlush = false
			st.commitWanted = true
			flush.Reset(st.w.cfg.OffsetFlushInterval)
		}
		wake.Stop()
		if st.commitWanted && st.inSession {
			st.commitWanted = false
			if err := st.commit(ctx, false, nil); err != nil {
				return err
			}
		}
	}
}

func (st *sinkTask) isCancelled() bool {
	select {
	case <-st.cancelled:
		return true
	default:
		return false
	}
}

func (st *sinkTask) setTarget(t state.Target) {
	if t == st.target {
		return
	}
	st.target = t
	switch t {
	case state.Paused:
		st.syncPaused()
		st.commitWanted = true
		st.w.listener.TaskState(st.id, state.PausedS, "")
	case state.Started:
		st.syncPaused()
		st.w.listener.TaskState(st.id, state.Running, st.runningTrace())
	}
}

// runningTrace is the trace of the RUNNING status: the task's note, if it noted one.
func (st *sinkTask) runningTrace() string {
	if n := st.statusNote.Load(); n != nil {
		return *n
	}
	return ""
}
