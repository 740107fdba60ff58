// Package commit runs the commit rounds of one connector's tasks in this process: it drains what the tasks
// buffered, has the table library plan and apply it as one snapshot per table, and tells the tasks which of
// their positions are durable. Three orchestrators do this: Local (this process commits alone), and two that
// coordinate every process of the connector through its control topic, connectd's own protocol and the Apache
// Iceberg sink's (apacheevents is its codec). The sink picks one at start (Start); it reaches the tasks only
// through Tasks and Batch.
package commit

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// Orchestrator runs the commit rounds of one connector's tasks in this process.
type Orchestrator interface {
	// Trigger asks for an early round: the tasks' buffers are full.
	Trigger()
	// TaskStarted is told of a task starting, with what it reads of the task's config; the task's batches carry
	// the key it returns (Batch.Task), and TaskStopped ends it.
	TaskStarted(task TaskConfig) (TaskKey, error)
	// TaskStopped is told of a task that has left Tasks.
	TaskStopped(key TaskKey)
	// BeforeRevoke returns once a task may give up partitions.
	BeforeRevoke()
	// LastTaskStopping runs before the orchestrator closes, with last, the connector's last task here.
	LastTaskStopping(last Tasks)
	// CommitNow runs one round of this process's tasks alone, synchronously (tests, benchmarks, dev mode).
	CommitNow(ctx context.Context) bool
	// Committer reports whether the orchestrator coordinates processes, and whether this one commits for them.
	Committer() (distributed, leads bool)
	// Stats returns a copy of the round counters.
	Stats() Stats
	// StuckReason says why the rounds do not make records durable, as far as this process knows.
	StuckReason(lastRoundFailed bool) string
	// AnswerWaiting reports whether this process answered a commit that no commit has covered yet (apache protocol).
	AnswerWaiting() bool
	// Close stops the orchestrator's loops and closes its clients.
	Close()
}

// Tasks are the connector's tasks in this process as the rounds reach them; the sink implements it.
type Tasks interface {
	// Drain takes what each task buffered, for one round.
	Drain() []Batch
	// Assignment is the partitions the tasks hold.
	Assignment() []icetable.TP
	// Holds reports whether one of the tasks holds tp.
	Holds(tp icetable.TP) bool
	// Progressed tells the tasks that a commit covered their answers: their records are in the tables.
	Progressed()
	// RoundEnded tells the tasks that a round this process took part in ended (Put's backpressure waits for it).
	RoundEnded(ok bool)
	// Fail fails the connector's tasks with err: their next Put returns it.
	Fail(err error)
}

// Batch is what a round took from one task. The round settles it once, with Committed or Failed.
type Batch interface {
	// Tables are the records per table.
	Tables() map[string][]icetable.Rec
	// Positions are the next offsets per partition that the task has seen.
	Positions() icetable.Offsets
	// Rows counts the rows of Tables.
	Rows() int
	// Assigned are the partitions the task held at the drain.
	Assigned() []icetable.TP
	// Committed says that everything below Positions is in every table. durable is false for an apache-protocol
	// answer: its offsets are committed, its records durable only once a commit covers the answer.
	Committed(durable bool)
	// Failed gives the records back for the next round.
	Failed()
	// Fatal gives the records back and fails the task with err: its restart reads them again from the group offsets.
	Fatal(err error)
	// Task is the key TaskStarted gave the task.
	Task() TaskKey
}

// TaskConfig is what an orchestrator reads of a task's config.
type TaskConfig struct {
	ID string // task.id; "": a config that names no task
	// TransactionalSuffix is the Apache sink's iceberg.coordinator.transactional.suffix, one per task ("": none).
	TransactionalSuffix string
}

// TaskKey is a running task as its orchestrator knows it (the zero key: one that keeps nothing per task).
type TaskKey struct{ p *taskProducer }

// Protocol is the language the processes of a connector speak on its control topic.
type Protocol string

const (
	// ProtocolApache is the Apache Iceberg sink's events: the connector's tasks may run on JVM workers too.
	ProtocolApache Protocol = "apache"
	// ProtocolConnectd is connectd's own messages, which carry what upsert and CDC tables need.
	ProtocolConnectd Protocol = "connectd"
)

// Options are what the rounds of one connector need to know.
type Options struct {
	Connector string // the connector's name: snapshot summaries, logs, client ids
	GroupID   string // the connector's consumer group
	Log       *slog.Logger

	Tables *Tables // the catalog and the table writers

	CommitInterval time.Duration
	// CommitTimeout bounds the wait for the other processes' answers; a table commit gets more room.
	CommitTimeout time.Duration
	RetryBackoff  time.Duration // the wait after a failed round
	CommitThreads int           // tables committed at once
	// SkipMissingTables skips the records of a table that does not exist (dynamic routing, auto-create) instead of
	// failing the round.
	SkipMissingTables bool

	// AfterRound runs on the commit loop after a round that this process committed succeeded (table
	// maintenance); no round runs meanwhile. ctx ends when the orchestrator closes.
	AfterRound func(ctx context.Context)

	// Distributed: the processes coordinate through the control topic.
	Distributed  bool
	Protocol     Protocol
	ProtocolKey  string // the config key that picks the protocol, named in the errors about mixed protocols
	ControlTopic string
	Topics       []string // the connector's topics, unless TopicsMatch
	// TopicsMatch reports whether a topic is one of the connector's (topics.regex); nil: Topics lists them.
	TopicsMatch func(topic string) bool
	KafkaProps  map[string]string // over the worker's, for the control topic clients
	CatalogName string            // the catalog the Apache events name
	// TransactionalPrefix starts the transactional ids of the tasks' answers (apache protocol).
	TransactionalPrefix string
}

// Start starts the orchestrator opts ask for over tasks; wi is the worker (nil: a runtime without one).
func Start(opts Options, tasks Tasks, wi connect.WorkerInfo) (Orchestrator, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	r := newRounds(opts, tasks)
	if !opts.Distributed {
		return startLocal(r), nil
	}
	if wi == nil {
		return nil, fmt.Errorf("distributed commits need the worker's Kafka settings, which this runtime does not provide")
	}
	return startControl(r, wi)
}
