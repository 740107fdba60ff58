package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/testutil/sinktest"
	"github.com/connectd/connectd/internal/worker"
)

// TestSinkConsumerModel drives sink tasks of one connector through random operations against an
// in-process kfake cluster (one broker, one topic of three partitions) and checks what the tasks were
// given against a plain model of at-least-once delivery.
//
// The operations: produce records to a partition or to all (values name partition and offset), pause
// and resume the connector, make the next flush fail, periodic or asked for right after a put while
// records stream (the sink drops what it took since its last flush of those partitions, and the task
// rewinds to the committed offsets), fail puts retriably, fail the commit of a partition at the
// broker, restart a task, start or stop a second task of the connector (a rebalance of the group),
// pause and resume partitions from the task (SinkTaskContext.Pause/Resume; a pause may wait for a put of
// the partition's records, so that a batch in flight is kept for the resume, and the put after a resume
// may fail retriably), and wait.
//
// The sink of this file logs every Open, Close, Put, Flush and pause of its tasks in one order, with the
// group's committed offsets at each Open and Flush. The model replays that log and checks:
//   - a partition is open in one task at a time, and only its open, unpaused partitions are put;
//   - per partition, a session (Open) starts at the group's committed offset, each put continues at
//     the next offset (no gap, no going back), and after a failed flush the task starts over at the
//     committed offset (no record of a batch fetched before the rewind slips in);
//   - each record carries the value produced at its offset;
//   - a flush is asked for exactly the offsets after what was put, and the group never has an offset
//     committed below which a record was not delivered (or was dropped by a failed flush);
//   - at the end, the committed offset of every partition is its end, every record was delivered,
//     and no task failed.
//
// The seed is logged (and is in every failure message). Reproduce the operations of a run with
//
//	SINK_MODEL_SEED=<seed> go test ./internal/worker/ -run TestSinkConsumerModel -v
//
// SINK_MODEL_ROUND=<n> runs only round n of that seed, SINK_MODEL_ROUNDS=<n> changes the number of rounds
// (8), SINK_MODEL_SHRINK=0 skips the search for the shortest failing prefix of a failing round, and
// SINK_MODEL_EVENTS=1 prints the whole recording of the failing run.
// Timing is not reproduced: a seed replays the same operations, not the same interleaving.
func TestSinkConsumerModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SINK_MODEL_SEED"); v != "" {
		var err error
		seed, err = strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "SINK_MODEL_SEED")
	}
	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	rounds = envInt(t, "SINK_MODEL_ROUNDS", rounds)
	only := envInt(t, "SINK_MODEL_ROUND", -1)
	t.Logf("SINK_MODEL_SEED=%d", seed)

	for round := range max(rounds, only+1) {
		if only >= 0 && round != only {
			continue
		}
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		cfg := randomModelConfig(rng)
		ops := randomModelOps(rng, 20+rng.IntN(21))
		res := runModelRound(t, cfg, ops)
		if len(res.problems) == 0 {
			t.Logf("round %d (%s): %d ops, %s, took %v", round, cfg, len(ops), res.stats, res.took.Round(time.Millisecond))
			continue
		}
		shortest, sres := ops, res
		if os.Getenv("SINK_MODEL_SHRINK") != "0" {
			shortest, sres = shrinkModelRound(t, cfg, ops, res)
		}
		if os.Getenv("SINK_MODEL_EVENTS") == "1" {
			t.Logf("the recording of the shortest failing run:\n%s", formatEvents(sres.events))
		}
		t.Fatalf("SINK_MODEL_SEED=%d SINK_MODEL_ROUND=%d (%s): the consumer broke the model\n"+
			"ops (%d): %s\n"+
			"shortest failing prefix (%d ops): %s\n"+
			"its problems:\n%s\n"+
			"its log tail:\n%s",
			seed, round, cfg, len(ops), formatOps(ops), len(shortest), formatOps(shortest),
			sres.report(), tailLines(sres.logs, 60))
	}
}

const (
	modelSinkClass  = "io.connectd.test.ModelSinkConnector"
	modelTopic      = "model"
	modelPartitions = 3
)

var modelSinkPlugin = connect.Plugin{Class: modelSinkClass, Type: connect.PluginSink, New: func() any { return &modelConnector{} }}

func envInt(t *testing.T, key string, def int) int {
	t.Helper()
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, key)
	return n
}

func modelValue(p int32, offset int64) string { return fmt.Sprintf("p%d-%d", p, offset) }

// ---- operations

type modelOpKind int

const (
	opProduce modelOpKind = iota
	opPauseConnector
	opResumeConnector
	opFailFlush
	opFailPuts
	opFailCommit
	opRestartTask
	opJoinTask
	opLeaveTask
	opPausePartition
	opResumePartition
	opWait
)

type modelOp struct {
	kind modelOpKind
	part int32
	n    int // records to produce, puts to fail
	task int
	wait time.Duration
}

func (o modelOp) String() string {
	switch o.kind {
	case opProduce:
		if o.part < 0 {
			return fmt.Sprintf("produce(all,%d)", o.n)
		}
		return fmt.Sprintf("produce(p%d,%d)", o.part, o.n)
	case opPauseConnector:
		return "pause"
	case opResumeConnector:
		return "resume"
	case opFailFlush:
		if o.n == 1 {
			return "failFlushMidStream"
		}
		return "failFlush"
	case opFailPuts:
		return fmt.Sprintf("failPuts(%d)", o.n)
	case opFailCommit:
		return fmt.Sprintf("failCommit(p%d)", o.part)
	case opRestartTask:
		return fmt.Sprintf("restart(t%d)", o.task)
	case opJoinTask:
		return "join(t1)"
	case opLeaveTask:
		return "leave(t1)"
	case opPausePartition:
		if o.n == 1 {
			return fmt.Sprintf("taskPauseMidStream(p%d)", o.part)
		}
		return fmt.Sprintf("taskPause(p%d)", o.part)
	case opResumePartition:
		if o.n == 1 {
			return fmt.Sprintf("taskResumeFailingPut(p%d)", o.part)
		}
		return fmt.Sprintf("taskResume(p%d)", o.part)
	case opWait:
		return fmt.Sprintf("wait(%v)", o.wait)
	}
	return "?"
}

func formatOps(ops []modelOp) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = o.String()
	}
	return strings.Join(s, " ")
}

// randomModelOps returns n operations; each is valid after the ones before it (resume only when paused,
// task 1 leaves only after it joined), so every prefix is a valid sequence too. Some produces are
// followed at once by an operation that then meets records in flight: a pause of the partition, a
// flush failing right after a put, a rebalance.
func randomModelOps(rng *rand.Rand, n int) []modelOp {
	var paused, second bool
	var partPaused [modelPartitions]bool
	streaming := int32(-1) // the partition produced to by the operation before, -1 if none
	// operations chosen in advance: a mid-stream task pause is followed by a wait (the pause takes effect
	// and keeps the batch in flight), a produce to another partition and the resume, which releases the
	// kept batches while records stream
	type planned struct {
		x    int
		part int32
	}
	var plan []planned
	ops := make([]modelOp, 0, n)
	for len(ops) < n {
		part := int32(rng.IntN(modelPartitions))
		x := rng.IntN(100)
		mid := streaming >= 0 && rng.IntN(2) == 0
		switch {
		case len(plan) > 0:
			x, part, mid = plan[0].x, plan[0].part, false
			plan = plan[1:]
		case mid:
			x = []int{40, 60, 70, 75, 75}[rng.IntN(5)] // failFlush, restart, join/leave, task pause/resume
			part = streaming
		}
		streaming = -1
		var op modelOp
		switch {
		case x < 30:
			op = modelOp{kind: opProduce, part: part, n: 1 + rng.IntN(200)}
			streaming = part
			if rng.IntN(4) == 0 {
				op.part = -1 // spread over all partitions
			}
		case x < 38:
			op = modelOp{kind: opPauseConnector}
			if paused {
				op.kind = opResumeConnector
			}
			paused = !paused
		case x < 48:
			op = modelOp{kind: opFailFlush, n: rng.IntN(2)}
			if mid {
				op.n = 1
			}
		case x < 54:
			op = modelOp{kind: opFailPuts, n: 1 + rng.IntN(3)}
		case x < 59:
			op = modelOp{kind: opFailCommit, part: part}
		case x < 66:
			op = modelOp{kind: opRestartTask}
			if second && rng.IntN(2) == 0 {
				op.task = 1
			}
		case x < 73:
			op = modelOp{kind: opJoinTask}
			if second {
				op.kind = opLeaveTask
			}
			second = !second
		case x < 80:
			// a pause with a batch of the partition in flight leaves it stashed for the resume
			op = modelOp{kind: opPausePartition, part: part, n: rng.IntN(2)}
			if mid {
				op.n = 1
				other := (part + 1 + int32(rng.IntN(modelPartitions-1))) % modelPartitions
				plan = []planned{{99, 0}, {0, other}, {75, part}} // wait, produce, resume
			}
			if partPaused[part] {
				op = modelOp{kind: opResumePartition, part: part, n: rng.IntN(2)}
			}
			partPaused[part] = !partPaused[part]
		default:
			op = modelOp{kind: opWait, wait: time.Duration(10+rng.IntN(290)) * time.Millisecond}
		}
		ops = append(ops, op)
	}
	return ops
}

// modelConfig is what a round varies besides its operations.
type modelConfig struct {
	flushInterval time.Duration
	maxPoll       int
	strategy      string
	putDelay      time.Duration // how long a put takes: records stream for longer, so flushes, pauses
	// and rebalances come while batches are in flight
}

func (c modelConfig) String() string {
	return fmt.Sprintf("flush %v, max.poll.records %d, %s, put %v", c.flushInterval, c.maxPoll, c.strategy, c.putDelay)
}

func randomModelConfig(rng *rand.Rand) modelConfig {
	return modelConfig{
		flushInterval: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond}[rng.IntN(3)],
		maxPoll:       []int{7, 50, 500}[rng.IntN(3)],
		strategy:      []string{"RangeAssignor", "CooperativeStickyAssignor"}[rng.IntN(2)],
		putDelay:      []time.Duration{0, 2 * time.Millisecond, 5 * time.Millisecond}[rng.IntN(3)],
	}
}

// ---- the recording sink

// modelSink is the shared recording of one round's tasks (looked up by the tasks' sink.id), and the
// faults they are to inject. Unlike sinktest's, it keeps one log of all tasks' calls with the group's
// committed offsets, and what a failed flush drops (what the failing task took of the partitions it
// was asked to flush) is worked out by the model.
type modelSink struct {
	cluster *kfake.Cluster
	group   string

	putDelay time.Duration

	mu              sync.Mutex
	events          []modelEvent
	failFlushes     int
	commitAfterPut  bool // the next put asks for a commit (the next flush comes while records stream)
	failPuts        int
	wantPaused      map[int32]bool // partitions the tasks are to keep paused (SinkTaskContext.Pause)
	pauseOnPut      map[int32]bool // of wantPaused: paused by a put of their records, not the last ones
	produced        [modelPartitions]int64
	failAfterResume map[int32]bool // the put after the resume of these partitions fails retriably
	instances       atomic.Int64   // tasks started
}

var (
	modelSinks   sync.Map // sink.id -> *modelSink
	modelSinkSeq atomic.Int64
)

func (s *modelSink) log(ev modelEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
}

func (s *modelSink) snapshot() []modelEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// committed returns the group's committed offsets as the broker has them.
func (s *modelSink) committed() map[int32]int64 {
	out := map[int32]int64{}
	if g := s.cluster.GroupInfo(s.group); g != nil {
		for p, c := range g.Commits[modelTopic] {
			out[p] = c.Offset
		}
	}
	return out
}

type modelEventKind int

const (
	evOpen modelEventKind = iota
	evClose
	evPut
	evPutFailed
	evFlush
	evPause
	evResume
	evStop
)

type modelEvent struct {
	kind      modelEventKind
	task      modelTaskRef
	parts     []int32         // open, close, pause, resume, stop (the partitions still open)
	recs      []modelRecord   // put
	offsets   map[int32]int64 // flush: the offsets the runtime is about to commit
	committed map[int32]int64 // open, flush: the group's committed offsets just before
	failed    bool            // flush: failed on purpose
}

// modelTaskRef names one started instance of a task: t<index>.<instance>.
type modelTaskRef struct{ index, instance int }

func (r modelTaskRef) String() string { return fmt.Sprintf("t%d.%d", r.index, r.instance) }

type modelRecord struct {
	topic  string
	part   int32
	offset int64
	value  string
}

func (e modelEvent) String() string {
	switch e.kind {
	case evOpen:
		return fmt.Sprintf("%v open %v (committed %v)", e.task, e.parts, e.committed)
	case evClose:
		return fmt.Sprintf("%v close %v", e.task, e.parts)
	case evPut:
		return fmt.Sprintf("%v put %s", e.task, formatRecords(e.recs))
	case evPutFailed:
		return fmt.Sprintf("%v put failed retriably %s", e.task, formatRecords(e.recs))
	case evFlush:
		s := fmt.Sprintf("%v flush %v (committed %v)", e.task, e.offsets, e.committed)
		if e.failed {
			s += " FAILED"
		}
		return s
	case evPause:
		return fmt.Sprintf("%v pause %v", e.task, e.parts)
	case evResume:
		return fmt.Sprintf("%v resume %v", e.task, e.parts)
	case evStop:
		return fmt.Sprintf("%v stop (open %v)", e.task, e.parts)
	}
	return "?"
}

func formatEvents(events []modelEvent) string {
	var b strings.Builder
	for i, ev := range events {
		fmt.Fprintf(&b, "#%d %s\n", i, ev)
	}
	return b.String()
}

// formatRecords writes runs of consecutive offsets as p0@3-9.
func formatRecords(recs []modelRecord) string {
	var b strings.Builder
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].part == recs[i].part && recs[j].offset == recs[j-1].offset+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "p%d@%d", recs[i].part, recs[i].offset)
		if j-i > 1 {
			fmt.Fprintf(&b, "-%d", recs[j-1].offset)
		}
		i = j
	}
	return b.String()
}

type modelConnector struct {
	connect.ConnectorBase
	props map[string]string
}

func (c *modelConnector) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "sink.id", Type: connect.ConfigString, Default: connect.NoDefault, Doc: "the round's recording"})
}
func (c *modelConnector) Start(props map[string]string) error { c.props = props; return nil }
func (c *modelConnector) TaskConfigs(max int) ([]map[string]string, error) {
	out := connect.ReplicateTaskConfigs(c.props, max)
	for i := range out {
		out[i]["task.index"] = fmt.Sprint(i)
	}
	return out, nil
}
func (c *modelConnector) Stop() error               { return nil }
func (c *modelConnector) NewTask() connect.SinkTask { return &modelTask{} }

// modelTask records its calls; its methods run on the task's goroutine.
type modelTask struct {
	connect.SinkTaskBase
	s      *modelSink
	ref    modelTaskRef
	open   map[int32]bool
	paused map[int32]bool // partitions this task paused
}

func (t *modelTask) Start(props map[string]string) error {
	s, ok := modelSinks.Load(props["sink.id"])
	if !ok {
		return fmt.Errorf("no model sink %q", props["sink.id"])
	}
	idx, err := strconv.Atoi(props["task.index"])
	if err != nil {
		return err
	}
	t.s, t.open, t.paused = s.(*modelSink), map[int32]bool{}, map[int32]bool{}
	t.ref = modelTaskRef{index: idx, instance: int(t.s.instances.Add(1))}
	return nil
}

func (t *modelTask) Open(tps []connect.TopicPartition) error {
	committed := t.s.committed()
	parts := partitionsOf(tps)
	t.s.log(modelEvent{kind: evOpen, task: t.ref, parts: parts, committed: committed})
	for _, p := range parts {
		t.open[p] = true
	}
	// a partition the runtime kept paused over a rebalance is resumed unless the test wants it paused
	t.syncPauses(parts, true, nil)
	return nil
}

func (t *modelTask) Close(tps []connect.TopicPartition) error {
	parts := partitionsOf(tps)
	t.s.log(modelEvent{kind: evClose, task: t.ref, parts: parts})
	for _, p := range parts {
		delete(t.open, p)
		delete(t.paused, p)
	}
	return nil
}

func (t *modelTask) Put(_ context.Context, recs []*connect.SinkRecord) error {
	s := t.s
	ev := modelEvent{kind: evPut, task: t.ref}
	for _, r := range recs {
		ev.recs = append(ev.recs, modelRecord{topic: r.Topic, part: r.Partition, offset: r.Offset, value: fmt.Sprint(r.Value)})
	}
	s.mu.Lock()
	fail := len(recs) > 0 && s.failPuts > 0
	if fail {
		s.failPuts--
		ev.kind = evPutFailed
	}
	commit := false
	if len(recs) > 0 {
		s.events = append(s.events, ev)
		commit, s.commitAfterPut = s.commitAfterPut && !fail, s.commitAfterPut && fail // a failed put keeps it
	}
	s.mu.Unlock()
	if len(recs) > 0 {
		time.Sleep(s.putDelay)
	}
	if fail {
		return connect.Retriablef("injected retriable put failure")
	}
	if commit {
		t.Ctx.RequestCommit()
	}
	// Pauses change only after a put that succeeded: a batch that is put again after a retriable failure
	// holds records fetched before the pause. more: the partitions of this put whose next records were
	// produced already (likely fetched, in flight).
	more := map[int32]bool{}
	s.mu.Lock()
	for _, r := range recs {
		more[r.Partition] = r.Offset+1 < s.produced[r.Partition]
	}
	s.mu.Unlock()
	t.syncPauses(slices.Sorted(maps.Keys(t.open)), false, more)
	return nil
}

func (t *modelTask) Flush(_ context.Context, current map[connect.TopicPartition]connect.OffsetAndMetadata) error {
	committed := t.s.committed()
	ev := modelEvent{kind: evFlush, task: t.ref, offsets: map[int32]int64{}, committed: committed}
	for tp, om := range current {
		ev.offsets[tp.Partition] = om.Offset
	}
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failFlushes > 0 {
		s.failFlushes--
		ev.failed = true
	}
	s.events = append(s.events, ev)
	if ev.failed {
		return errors.New("injected flush failure")
	}
	return nil
}

func (t *modelTask) Stop() error {
	t.s.log(modelEvent{kind: evStop, task: t.ref, parts: slices.Sorted(maps.Keys(t.open))})
	return nil
}

// syncPauses pauses or resumes the given open partitions as the test wants them; all asks again for
// each partition (at Open: the runtime keeps the pauses of partitions it assigns again). A mid-stream
// pause waits for a put of records of its partition that has more records after them (more), which
// are then likely fetched already and kept for the resume.
func (t *modelTask) syncPauses(parts []int32, all bool, more map[int32]bool) {
	var pause, resume []int32
	t.s.mu.Lock()
	for _, p := range parts {
		want := t.s.wantPaused[p]
		switch {
		case want && !t.paused[p] && (all || more[p] || !t.s.pauseOnPut[p]):
			delete(t.s.pauseOnPut, p)
			pause = append(pause, p)
		case !want && (t.paused[p] || all):
			resume = append(resume, p)
			if t.s.failAfterResume[p] {
				delete(t.s.failAfterResume, p)
				t.s.failPuts++ // likely the put of the batches the resume releases
			}
		}
	}
	if len(pause) > 0 {
		t.s.events = append(t.s.events, modelEvent{kind: evPause, task: t.ref, parts: pause})
	}
	if len(resume) > 0 {
		t.s.events = append(t.s.events, modelEvent{kind: evResume, task: t.ref, parts: resume})
	}
	t.s.mu.Unlock()
	for _, p := range pause {
		t.paused[p] = true
		t.Ctx.Pause(connect.TopicPartition{Topic: modelTopic, Partition: p})
	}
	for _, p := range resume {
		delete(t.paused, p)
		t.Ctx.Resume(connect.TopicPartition{Topic: modelTopic, Partition: p})
	}
}

func partitionsOf(tps []connect.TopicPartition) []int32 {
	out := make([]int32, 0, len(tps))
	for _, tp := range tps {
		out = append(out, tp.Partition)
	}
	slices.Sort(out)
	return out
}

// ---- one round

type modelResult struct {
	problems []modelProblem
	events   []modelEvent
	stats    string
	logs     string
	took     time.Duration
}

type modelProblem struct {
	at  int // index of the event, -1 if none
	msg string
}

// report lists the problems, each with the events that led to it.
func (r modelResult) report() string {
	var b strings.Builder
	for i, p := range r.problems {
		if i == 10 {
			fmt.Fprintf(&b, "... and %d more\n", len(r.problems)-i)
			break
		}
		fmt.Fprintf(&b, "- %s\n", p.msg)
		if p.at < 0 {
			continue
		}
		for j := max(p.at-12, 0); j <= p.at && j < len(r.events); j++ {
			mark := "   "
			if j == p.at {
				mark = ">> "
			}
			fmt.Fprintf(&b, "    %s#%d %s\n", mark, j, r.events[j])
		}
	}
	return b.String()
}

type modelRound struct {
	cluster  *kfake.Cluster
	producer *kgo.Client
	w        *worker.Worker
	states   *taskStates
	sink     *modelSink
	sinkID   string
	conn     string
	target   state.Target
	running  [2]bool
	produced [modelPartitions]int64
	faults   []*kfake.FaultHandle
}

// runModelRound runs ops on a fresh cluster and worker, brings the round to its end (everything
// resumed and committed) and checks the recording against the model.
func runModelRound(t testing.TB, cfg modelConfig, ops []modelOp) modelResult {
	start := time.Now()
	logs := &syncBuffer{}
	prevLog := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(prevLog)

	r := newModelRound(t, cfg)
	defer r.close()
	var problems []modelProblem
	for i, op := range ops {
		slog.Info("model op", "i", i, "op", op.String())
		if err := r.apply(op); err != nil {
			problems = append(problems, modelProblem{-1, fmt.Sprintf("op #%d %s: %v", i, op, err)})
			break
		}
	}
	final, err := r.finish()
	if err != nil {
		problems = append(problems, modelProblem{-1, err.Error()})
	}
	events := r.sink.snapshot()
	m := checkModel(events, r.produced, final)
	problems = append(problems, m.problems...)
	for task := range 2 {
		id := state.TaskID{Connector: r.conn, Task: task}
		if slices.Contains(r.states.of(id), state.Failed) {
			problems = append(problems, modelProblem{-1, fmt.Sprintf("task %d failed: states %v", task, r.states.of(id))})
		}
	}
	stats := fmt.Sprintf("produced %v, %d records put (%d again), %d flushes failed, %d opens",
		r.produced, m.put, m.put-m.unique, m.flushFailures, m.opens)
	return modelResult{problems: problems, events: events, stats: stats, logs: logs.String(), took: time.Since(start)}
}

func newModelRound(t testing.TB, cfg modelConfig) *modelRound {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(modelPartitions, modelTopic))
	require.NoError(t, err)
	addr := cluster.ListenAddrs()[0]
	producer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(modelTopic))
	require.NoError(t, err)

	n := modelSinkSeq.Add(1)
	conn := fmt.Sprintf("model-sink-%d", n)
	r := &modelRound{
		cluster: cluster, producer: producer, states: &taskStates{},
		sinkID: fmt.Sprintf("model-%d", n), conn: conn, target: state.Started,
	}
	r.sink = &modelSink{
		cluster: cluster, group: "connect-" + conn, putDelay: cfg.putDelay,
		wantPaused: map[int32]bool{}, pauseOnPut: map[int32]bool{}, failAfterResume: map[int32]bool{},
	}
	modelSinks.Store(r.sinkID, r.sink)

	wcfg, err := worker.ParseConfig(map[string]string{
		"bootstrap.servers":                      addr,
		"key.converter":                          sinktest.StringConverterClass,
		"value.converter":                        sinktest.StringConverterClass,
		"header.converter":                       "io.connectd.test.TestHeaderConverter",
		"offset.flush.interval.ms":               fmt.Sprint(cfg.flushInterval.Milliseconds()),
		"task.shutdown.graceful.timeout.ms":      "10000",
		"consumer.max.poll.records":              fmt.Sprint(cfg.maxPoll),
		"consumer.partition.assignment.strategy": cfg.strategy,
		// rebalances and resumed partitions within a fraction of a second
		"consumer.heartbeat.interval.ms": "100",
		"consumer.fetch.max.wait.ms":     "100",
	})
	require.NoError(t, err)
	r.w = worker.New(wcfg, testRegistry(), r.states)
	require.NoError(t, r.startTask(0))
	return r
}

func (r *modelRound) close() {
	r.w.Stop()
	r.producer.Close()
	r.cluster.Close()
	modelSinks.Delete(r.sinkID)
}

func (r *modelRound) taskID(task int) state.TaskID {
	return state.TaskID{Connector: r.conn, Task: task}
}

func (r *modelRound) startTask(task int) error {
	props := map[string]string{
		"name": r.conn, "connector.class": modelSinkClass, "tasks.max": "2", "topics": modelTopic,
		"sink.id": r.sinkID, "task.index": fmt.Sprint(task),
	}
	if err := r.w.StartTask(r.taskID(task), props, props, r.target); err != nil {
		return err
	}
	r.running[task] = true
	return nil
}

// stopTask stops a task once the group settled: stable, with every running task a member and every
// partition assigned (a cooperative rebalance that revoked a partition rejoins once more). A consumer
// stopped while it waits in a JoinGroup leaves the group on a connection of its own, which a real
// broker answers by ending the pending join (UNKNOWN_MEMBER_ID); kfake drops the member without
// answering it, so that stop would take the whole graceful timeout. TestStopSinkTaskInGroupJoin covers
// stops in a join against a real broker.
func (r *modelRound) stopTask(task int) error {
	members := 0
	for _, on := range r.running {
		if on {
			members++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	settled := func(g *kfake.GroupInfo) bool {
		return g != nil && g.State == "Stable" && len(g.Members) == members && g.NumAssigned() == modelPartitions
	}
	if g, err := r.cluster.WaitGroupInfo(ctx, r.sink.group, settled); err != nil {
		return fmt.Errorf("the group did not settle with %d members before stopping t%d: %s", members, task, describeGroup(g))
	}
	id := r.taskID(task)
	r.w.StopTasks([]state.TaskID{id})
	r.running[task] = false
	if st := r.states.of(id); len(st) == 0 || !slices.Contains([]state.State{state.Unassigned, state.Failed}, st[len(st)-1]) {
		return fmt.Errorf("t%d did not stop within the graceful timeout (states %v)", task, st)
	}
	return nil
}

func describeGroup(g *kfake.GroupInfo) string {
	if g == nil {
		return "no group"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, generation %d", g.State, g.Epoch)
	for _, m := range g.Members {
		fmt.Fprintf(&b, "; %s has %v", m.ClientID, m.Assignment[modelTopic])
	}
	return b.String()
}

func (r *modelRound) apply(op modelOp) error {
	switch op.kind {
	case opProduce:
		return r.produce(op.part, op.n)
	case opPauseConnector, opResumeConnector:
		r.target = state.Paused
		if op.kind == opResumeConnector {
			r.target = state.Started
		}
		r.w.SetTargetState(r.conn, r.target)
	case opFailFlush:
		r.sink.mu.Lock()
		r.sink.failFlushes++
		r.sink.commitAfterPut = r.sink.commitAfterPut || op.n == 1
		r.sink.mu.Unlock()
	case opFailPuts:
		r.sink.mu.Lock()
		r.sink.failPuts = op.n
		r.sink.mu.Unlock()
	case opFailCommit:
		// UNKNOWN_SERVER_ERROR: the client does not retry it, the task sees the partition's commit fail
		r.faults = append(r.faults, r.cluster.Fault(kfake.Fault{
			Keys: []kmsg.Key{kmsg.OffsetCommit}, Group: r.sink.group, Partitions: []int32{op.part}, Count: 1,
		}))
	case opRestartTask:
		if err := r.stopTask(op.task); err != nil {
			return err
		}
		return r.startTask(op.task)
	case opJoinTask:
		return r.startTask(1)
	case opLeaveTask:
		return r.stopTask(1)
	case opPausePartition, opResumePartition:
		r.sink.mu.Lock()
		r.sink.wantPaused[op.part] = op.kind == opPausePartition
		r.sink.pauseOnPut[op.part] = op.kind == opPausePartition && op.n == 1
		r.sink.failAfterResume[op.part] = op.kind == opResumePartition && op.n == 1
		r.sink.mu.Unlock()
	case opWait:
		time.Sleep(op.wait)
	}
	return nil
}

// produce produces n records to partition p, or round-robin to all partitions if p < 0.
func (r *modelRound) produce(p int32, n int) error {
	recs := make([]*kgo.Record, n)
	next := r.produced
	for i := range recs {
		rp := p
		if p < 0 {
			rp = int32(i % modelPartitions)
		}
		recs[i] = &kgo.Record{Partition: rp, Value: []byte(modelValue(rp, next[rp]))}
		next[rp]++
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := r.producer.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("producing: %w", err)
	}
	for _, pr := range res {
		if got := string(pr.Record.Value); got != modelValue(pr.Record.Partition, pr.Record.Offset) {
			return fmt.Errorf("record %q was produced at offset %d of partition %d", got, pr.Record.Offset, pr.Record.Partition)
		}
	}
	r.produced = next
	r.sink.mu.Lock()
	r.sink.produced = next
	r.sink.mu.Unlock()
	return nil
}

// finish lifts every failure and pause, waits until the group committed the end of every partition,
// stops the tasks and returns the committed offsets.
func (r *modelRound) finish() (map[int32]int64, error) {
	r.sink.mu.Lock()
	r.sink.failFlushes, r.sink.failPuts, r.sink.commitAfterPut = 0, 0, false
	clear(r.sink.wantPaused)
	clear(r.sink.pauseOnPut)
	clear(r.sink.failAfterResume)
	r.sink.mu.Unlock()
	for _, f := range r.faults {
		f.Remove()
	}
	if r.target != state.Started {
		r.target = state.Started
		r.w.SetTargetState(r.conn, r.target)
	}
	var committed map[int32]int64
	caughtUp := func() bool {
		committed = r.sink.committed()
		for p := range int32(modelPartitions) {
			if committed[p] != r.produced[p] {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(30 * time.Second)
	for !caughtUp() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var errs []error
	if !caughtUp() {
		errs = append(errs, fmt.Errorf("the group's committed offsets stayed at %v, produced %v", committed, r.produced))
	}
	for task := range 2 {
		if r.running[task] {
			errs = append(errs, r.stopTask(task))
		}
	}
	return r.sink.committed(), errors.Join(errs...)
}

// ---- the model

type modelCheck struct {
	problems                          []modelProblem
	put, unique, flushFailures, opens int
}

// checkModel replays the recording of a round; produced are the records of each partition and final
// the group's committed offsets once the tasks stopped.
func checkModel(events []modelEvent, produced [modelPartitions]int64, final map[int32]int64) modelCheck {
	var c modelCheck
	problem := func(at int, format string, args ...any) {
		if len(c.problems) < 50 {
			c.problems = append(c.problems, modelProblem{at, fmt.Sprintf(format, args...)})
		}
	}
	owner := map[int32]modelTaskRef{}                 // the task a partition is open in
	expect := map[int32]int64{}                       // the next offset the owner must put
	paused := map[modelTaskRef]map[int32]bool{}       // by task
	delivered := map[int32]map[int64]int{}            // copies of each record the sink holds
	unflushed := map[modelTaskRef]map[int32][]int64{} // by task and partition: what a failed flush drops
	for p := range int32(modelPartitions) {
		delivered[p] = map[int64]int{}
	}
	// prefix is the end of the delivered records of a partition that start at offset 0.
	prefix := func(p int32) int64 {
		var o int64
		for delivered[p][o] > 0 {
			o++
		}
		return o
	}
	checkCommitted := func(at int, committed map[int32]int64) {
		for p, off := range committed {
			if d := prefix(p); off > d {
				problem(at, "the group committed p%d@%d, but p%d@%d was not delivered", p, off, p, d)
			}
		}
	}
	for i, ev := range events {
		switch ev.kind {
		case evOpen:
			c.opens++
			for _, p := range ev.parts {
				if o, ok := owner[p]; ok {
					problem(i, "%v opened p%d while %v has it open", ev.task, p, o)
				}
				owner[p] = ev.task
				expect[p] = ev.committed[p] // nothing committed: from the start of the partition
				delete(paused[ev.task], p)
			}
			checkCommitted(i, ev.committed)
		case evClose:
			for _, p := range ev.parts {
				if o, ok := owner[p]; !ok || o != ev.task {
					problem(i, "%v closed p%d, which it does not have open", ev.task, p)
					continue
				}
				delete(owner, p)
			}
		case evStop:
			for _, p := range ev.parts {
				problem(i, "%v stopped with p%d open (no Close)", ev.task, p)
				delete(owner, p)
			}
		case evPause:
			if paused[ev.task] == nil {
				paused[ev.task] = map[int32]bool{}
			}
			for _, p := range ev.parts {
				paused[ev.task][p] = true
			}
		case evResume:
			for _, p := range ev.parts {
				delete(paused[ev.task], p)
			}
		case evPut:
			for _, rec := range ev.recs {
				p := rec.part
				c.put++
				switch o, ok := owner[p]; {
				case rec.topic != modelTopic:
					problem(i, "%v put a record of topic %q", ev.task, rec.topic)
					continue
				case !ok || o != ev.task:
					problem(i, "%v put p%d@%d, but p%d is not open in it", ev.task, p, rec.offset, p)
					continue
				case paused[ev.task][p]:
					problem(i, "%v put p%d@%d while it has p%d paused", ev.task, p, rec.offset, p)
				}
				switch want := expect[p]; {
				case rec.offset > want:
					problem(i, "%v put p%d@%d, expected p%d@%d: records skipped", ev.task, p, rec.offset, p, want)
				case rec.offset < want:
					problem(i, "%v put p%d@%d, expected p%d@%d: out of order or put again", ev.task, p, rec.offset, p, want)
				}
				if want := modelValue(p, rec.offset); rec.value != want {
					problem(i, "%v put p%d@%d with value %q, produced %q", ev.task, p, rec.offset, rec.value, want)
				}
				if delivered[p][rec.offset] == 0 {
					c.unique++
				}
				delivered[p][rec.offset]++
				if unflushed[ev.task] == nil {
					unflushed[ev.task] = map[int32][]int64{}
				}
				unflushed[ev.task][p] = append(unflushed[ev.task][p], rec.offset)
				expect[p] = rec.offset + 1
			}
		case evFlush:
			for p, off := range ev.offsets {
				if o, ok := owner[p]; !ok || o != ev.task {
					problem(i, "%v flushed with offset p%d@%d, but p%d is not open in it", ev.task, p, off, p)
				} else if off != expect[p] {
					problem(i, "%v flushed with offset p%d@%d, but put up to p%d@%d", ev.task, p, off, p, expect[p])
				}
			}
			// A flush is asked for some partitions (all assigned ones, or those being revoked): their
			// records are written, or dropped if it fails.
			for p := range ev.offsets {
				if ev.failed {
					for _, off := range unflushed[ev.task][p] {
						delivered[p][off]--
						if delivered[p][off] == 0 {
							c.unique--
						}
					}
				}
				delete(unflushed[ev.task], p)
			}
			if ev.failed {
				c.flushFailures++
				// After a failed periodic flush the task starts over from what the group has committed.
				// The final flush of partitions being revoked (Close comes next) rewinds nothing: the
				// revoked partitions start over in their next owner, the others go on (as the JVM does).
				if !closesNext(events, i) {
					for p, o := range owner {
						if o == ev.task {
							expect[p] = ev.committed[p]
						}
					}
				}
			}
			checkCommitted(i, ev.committed)
		}
	}
	for p := range int32(modelPartitions) {
		if final[p] != produced[p] {
			problem(-1, "at the end the group committed p%d@%d, but %d records were produced", p, final[p], produced[p])
		}
		var missing []string
		for o := int64(0); o < produced[p]; o++ {
			if delivered[p][o] == 0 {
				from := o
				for o+1 < produced[p] && delivered[p][o+1] == 0 {
					o++
				}
				missing = append(missing, fmt.Sprintf("%d-%d", from, o))
			}
		}
		if len(missing) > 0 {
			problem(-1, "records of p%d never delivered: %s", p, strings.Join(missing, ","))
		}
	}
	return c
}

// closesNext reports whether the next event of the task of events[i] is a Close.
func closesNext(events []modelEvent, i int) bool {
	for _, ev := range events[i+1:] {
		if ev.task == events[i].task {
			return ev.kind == evClose
		}
	}
	return false
}

// ---- shrinking

// shrinkModelRound looks for a short prefix of ops that still fails (timing varies between runs, so a
// prefix that passed once might fail another time: this is the shortest one found, not a minimum).
func shrinkModelRound(t *testing.T, cfg modelConfig, ops []modelOp, res modelResult) ([]modelOp, modelResult) {
	best, bestRes := ops, res
	lo, hi := 0, len(ops) // a prefix of lo ops passed, one of hi failed
	deadline := time.Now().Add(45 * time.Second)
	for hi-lo > 1 && time.Now().Before(deadline) {
		mid := (lo + hi) / 2
		r := runModelRound(t, cfg, ops[:mid])
		t.Logf("shrinking: a prefix of %d ops %s", mid, map[bool]string{true: "fails", false: "passes"}[len(r.problems) > 0])
		if len(r.problems) > 0 {
			hi, best, bestRes = mid, ops[:mid], r
		} else {
			lo = mid
		}
	}
	return best, bestRes
}

// ---- logs

// syncBuffer is a bytes.Buffer for the logs of concurrent goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
