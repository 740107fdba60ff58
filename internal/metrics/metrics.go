// Package metrics exposes the runtime's Prometheus metrics: the JVM's sink-task and task-error metrics
// (sink-record-read-total, sink-record-send-total, offset-commit-*, put-batch time, total-record-errors,
// total-records-skipped, deadletterqueue-produce-requests) and per-partition consumer lag (behind the consumed
// position and behind the group's committed offset), so that lag is visible per connector (sum by connector).
package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

var taskLabels = []string{"connector", "task"}

var (
	Registry = prometheus.NewRegistry()

	RecordsRead = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "connectd", Subsystem: "sink_task",
		Name: "sink_record_read_total", Help: "Records read from Kafka by the task (JVM sink-record-read-total)."}, taskLabels)
	RecordsSent = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "connectd", Subsystem: "sink_task",
		Name: "sink_record_send_total", Help: "Records handed to put() after transformations (JVM sink-record-send-total)."}, taskLabels)
	PutBatch = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "connectd", Subsystem: "sink_task",
		Name: "put_batch_seconds", Help: "Time spent in put() per batch.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9)}, taskLabels)
	Commits = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "connectd", Subsystem: "sink_task",
		Name: "offset_commit_completion_total", Help: "Offset commits completed (JVM offset-commit-completion-total)."}, taskLabels)
	CommitFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "connectd", Subsystem: "sink_task",
		Name: "offset_commit_failure_total", Help: "Offset commits that failed in preCommit/flush."}, taskLabels)
	RecordErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "connectd", Subsystem: "task_error",
		Name: "total_record_errors", Help: "Records that failed in a stage (JVM total-record-errors)."}, append(taskLabels, "stage"))
	RecordsSkipped = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "connectd", Subsystem: "task_error",
		Name: "total_records_skipped", Help: "Records skipped under errors.tolerance=all (JVM total-records-skipped)."}, taskLabels)
	DLQProduced = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "connectd", Subsystem: "task_error",
		Name: "deadletterqueue_produce_requests", Help: "Records written to the dead letter queue."}, taskLabels)
	Lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "connectd", Subsystem: "sink",
		Name: "partition_lag_records", Help: "High watermark minus the task's consumed position, per partition."}, []string{"connector", "task", "topic", "partition"})
	Committed = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "connectd", Subsystem: "sink",
		Name: "partition_committed_offset", Help: "Last offset committed to the connector's consumer group, per partition."}, []string{"connector", "task", "topic", "partition"})
	CommittedLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "connectd", Subsystem: "sink",
		Name: "partition_committed_lag_records", Help: "High watermark minus the offset committed to the connector's consumer group, per partition (the group's lag)."}, []string{"connector", "task", "topic", "partition"})
	TopicRetention = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "connectd", Subsystem: "sink",
		Name: "topic_retention_seconds", Help: "retention.ms of a topic the connector consumes, in seconds (+Inf: kept without a time bound)."}, []string{"connector", "topic"})
	TopicRetentionShort = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "connectd", Subsystem: "sink",
		Name: "topic_retention_short", Help: "1 when the topic's retention is shorter than connectd.topic.retention.required.ms, else 0."}, []string{"connector", "topic"})
)

func init() {
	Registry.MustRegister(RecordsRead, RecordsSent, PutBatch, Commits, CommitFailures, RecordErrors, RecordsSkipped,
		DLQProduced, Lag, Committed, CommittedLag, TopicRetention, TopicRetentionShort, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler { return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{}) }

// Task holds a task's pre-resolved series, so the per-batch path does no label lookups.
type Task struct {
	connector, task string
	Read, Sent      prometheus.Counter
	Put             prometheus.Observer
	Commits, Fails  prometheus.Counter
	Skipped, DLQ    prometheus.Counter
}

// ForTask resolves a task's series.
func ForTask(connector string, task int) *Task {
	t := strconv.Itoa(task)
	return &Task{connector: connector, task: t,
		Read: RecordsRead.WithLabelValues(connector, t), Sent: RecordsSent.WithLabelValues(connector, t),
		Put: PutBatch.WithLabelValues(connector, t), Commits: Commits.WithLabelValues(connector, t),
		Fails: CommitFailures.WithLabelValues(connector, t), Skipped: RecordsSkipped.WithLabelValues(connector, t),
		DLQ: DLQProduced.WithLabelValues(connector, t)}
}

// Error counts a failed record in a stage.
func (t *Task) Error(stage string) { RecordErrors.WithLabelValues(t.connector, t.task, stage).Inc() }

// SetLag records a partition's lag.
func (t *Task) SetLag(topic string, partition int32, lag int64) {
	Lag.WithLabelValues(t.connector, t.task, topic, strconv.Itoa(int(partition))).Set(float64(lag))
}

// SetCommitted records a partition's committed offset.
func (t *Task) SetCommitted(topic string, partition int32, off int64) {
	Committed.WithLabelValues(t.connector, t.task, topic, strconv.Itoa(int(partition))).Set(float64(off))
}

// SetCommittedLag records a partition's lag behind its committed offset.
func (t *Task) SetCommittedLag(topic string, partition int32, lag int64) {
	CommittedLag.WithLabelValues(t.connector, t.task, topic, strconv.Itoa(int(partition))).Set(float64(lag))
}

// ForgetPartition removes a partition's series: a revoked partition's are its next owner's.
func (t *Task) ForgetPartition(topic string, partition int32) {
	m := prometheus.Labels{"connector": t.connector, "task": t.task, "topic": topic, "partition": strconv.Itoa(int(partition))}
	Lag.DeletePartialMatch(m)
	Committed.DeletePartialMatch(m)
	CommittedLag.DeletePartialMatch(m)
}

// Forget removes a stopped task's series.
func (t *Task) Forget() {
	for _, v := range []*prometheus.CounterVec{RecordsRead, RecordsSent, Commits, CommitFailures, RecordsSkipped, DLQProduced} {
		v.DeleteLabelValues(t.connector, t.task)
	}
	PutBatch.DeleteLabelValues(t.connector, t.task)
	m := prometheus.Labels{"connector": t.connector, "task": t.task}
	Lag.DeletePartialMatch(m)
	Committed.DeletePartialMatch(m)
	CommittedLag.DeletePartialMatch(m)
	RecordErrors.DeletePartialMatch(m)
	if t.task == "0" {
		c := prometheus.Labels{"connector": t.connector}
		TopicRetention.DeletePartialMatch(c)
		TopicRetentionShort.DeletePartialMatch(c)
	}
}

// SetTopicRetention records the retention of a topic a connector consumes and whether it is too short.
func SetTopicRetention(connector, topic string, seconds float64, short bool) {
	TopicRetention.WithLabelValues(connector, topic).Set(seconds)
	v := 0.0
	if short {
		v = 1
	}
	TopicRetentionShort.WithLabelValues(connector, topic).Set(v)
}
