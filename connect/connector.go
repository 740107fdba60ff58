package connect

import (
	"context"
	"time"
)

// Versioned plugins report a version shown by /connector-plugins.
type Versioned interface{ Version() string }

// Configurable plugins describe their configuration; the definition drives validation and
// GET /connector-plugins/{p}/config.
type Configurable interface{ ConfigDef() *ConfigDef }

// ConnectorContext is the runtime seen from a connector instance.
type ConnectorContext interface {
	// RequestTaskReconfiguration asks the runtime to call TaskConfigs again and restart the tasks if changed.
	RequestTaskReconfiguration()
	// RaiseError fails the connector with err (status FAILED with its trace).
	RaiseError(err error)
}

// Connector is a connector instance: it validates and splits its configuration into task configurations.
// The runtime calls Initialize, then Start, then TaskConfigs (again after RequestTaskReconfiguration), then Stop.
type Connector interface {
	Versioned
	Configurable
	Initialize(ctx ConnectorContext)
	Start(props map[string]string) error
	// TaskConfigs returns at most maxTasks task configurations.
	TaskConfigs(maxTasks int) ([]map[string]string, error)
	Stop() error
}

// SinkConnector is a connector whose tasks consume from Kafka.
type SinkConnector interface {
	Connector
	// NewTask creates an unstarted task instance (the JVM's taskClass()).
	NewTask() SinkTask
}

// StatusNoter is implemented by connectors that start with a config they adjusted (a value mapped to the one
// this runtime needs): the note, empty for none, is the trace of the connector's RUNNING or PAUSED status, so
// that clients see what the log says once.
type StatusNoter interface {
	StatusNote() string
}

// TaskStatusNoter is implemented by the runtime's SinkTaskContext: a running task notes what keeps it from making
// progress (its writes failing or stalled) as the trace of its RUNNING status, "" to clear it. It may be called
// from any goroutine.
type TaskStatusNoter interface {
	NoteStatus(note string)
}

// ConfigValidator is implemented by connectors that validate more than their ConfigDef can express
// (the JVM's Connector.validate); the result is merged into the ConfigDef's own validation.
type ConfigValidator interface {
	Validate(props map[string]string) []ConfigValue
}

// OffsetAlterer is implemented by sink connectors that keep offsets outside Kafka (the JVM's
// SinkConnector.alterOffsets). A nil offset means reset. Returning true means the connector altered its
// own offsets too, which changes the REST message.
type OffsetAlterer interface {
	AlterOffsets(props map[string]string, offsets map[TopicPartition]*int64) (bool, error)
}

// SinkTask receives records from the runtime and writes them to the external system.
//
// Lifecycle: Initialize, Start, then Open/Put/PreCommit/Close as partitions come and go, then Stop. All
// methods are called from the task's own goroutine, never concurrently.
type SinkTask interface {
	Versioned
	Initialize(ctx SinkTaskContext)
	Start(props map[string]string) error
	// Put delivers a batch. A RetriableError gets the same batch redelivered; any other error fails the task.
	// The batch slice and its records may be reused after Put returns: copy what must be kept.
	Put(ctx context.Context, records []*SinkRecord) error
	// Flush writes out everything Put so far, before the runtime commits currentOffsets (ConsumedOffsets).
	Flush(ctx context.Context, currentOffsets ConsumedOffsets) error
	// Open is called with newly assigned partitions, before any of their records are put.
	Open(partitions []TopicPartition) error
	// Close is called with partitions being revoked, after the last commit for them.
	Close(partitions []TopicPartition) error
	Stop() error
}

// PreCommitter is implemented by tasks that decide themselves which offsets are safe to commit (the JVM's
// SinkTask.preCommit). Without it the runtime calls Flush and commits currentOffsets. Returning an empty map
// commits nothing; offsets for unassigned partitions or beyond what was consumed are ignored.
//
// currentOffsets are the consumed offsets (ConsumedOffsets): a task that returns, for a partition, its
// currentOffset once everything it was put of that partition is durable moves the group past records it
// never received, so the group's lag returns to zero when a partition ends with such records.
type PreCommitter interface {
	PreCommit(ctx context.Context, currentOffsets ConsumedOffsets) (map[TopicPartition]OffsetAndMetadata, error)
}

// ConsumedOffsets are the currentOffsets the runtime hands to Flush and PreCommit (the JVM's
// WorkerSinkTask currentOffsets): per assigned partition, the offset after the last record consumed in a
// batch whose Put returned nil, whether or not the record reached Put. Records dropped by a
// transformation or predicate, skipped by errors.tolerance=all, or written to the dead letter queue (the
// runtime's producer has the broker's acknowledgement before the record counts) are consumed; so every
// offset between a task's last record put of a partition and its currentOffset is one the task was not
// given, and (with the same transformations and error handling) a restart from anywhere in that range
// gives it nothing of the range.
type ConsumedOffsets = map[TopicPartition]OffsetAndMetadata

// SinkTaskContext is the runtime seen from a sink task.
type SinkTaskContext interface {
	// Configs is the task's configuration.
	Configs() map[string]string
	// Offset asks the runtime to rewind or skip partitions to the given next offsets.
	Offset(offsets map[TopicPartition]int64)
	// Timeout asks for Put to be called again after d even if no record arrives (after a RetriableError).
	Timeout(d time.Duration)
	// Assignment is the set of partitions currently assigned to the task.
	Assignment() []TopicPartition
	// Pause stops consumption from partitions until Resume; it survives rebalances.
	Pause(partitions ...TopicPartition)
	Resume(partitions ...TopicPartition)
	// RequestCommit asks for an offset commit as soon as possible.
	RequestCommit()
	// ErrantRecordReporter reports records that cannot be written, to the connector's error handling (log,
	// dead-letter queue) with stage TASK_PUT. Nil when the connector has no error tolerance configured.
	ErrantRecordReporter() ErrantRecordReporter
}

// WorkerInfo is implemented by the runtime's SinkTaskContext. Connectors that need their own
// Kafka clients (the Iceberg sink's control topic) use the worker's client settings, as the JVM
// Iceberg sink reads the worker's properties.
type WorkerInfo interface {
	// WorkerKafkaProps returns the worker's Kafka client properties (bootstrap.servers,
	// security.*, ssl.*, sasl.*, ...), a copy the caller may change.
	WorkerKafkaProps() map[string]string
	// WorkerID identifies this worker process (the advertised REST host:port).
	WorkerID() string
	// Distributed reports whether the worker is a member of a distributed cluster, where tasks
	// of one connector may run in several processes.
	Distributed() bool
}

// ScratchSpace is implemented by the runtime's SinkTaskContext and ConnectorContext: the directory
// where a plugin writes its temporary files (spool and spill files), the worker's connectd.scratch.dir.
// A plugin asserts for it and uses os.TempDir when it is missing.
type ScratchSpace interface {
	// ScratchDir is an existing, writable directory; its files may be lost when the process ends.
	ScratchDir() string
}

// ErrantRecordReporter sends a failed record to the error handler. It returns an error when the record
// cannot be tolerated (errors.tolerance=none), in which case the task should fail with it.
type ErrantRecordReporter interface {
	Report(ctx context.Context, record *SinkRecord, err error) error
}
