package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/metrics"
)

// Stage is where in the pipeline an error happened, named as the JVM's Stage enum.
type Stage string

const (
	StageKeyConverter    Stage = "KEY_CONVERTER"
	StageValueConverter  Stage = "VALUE_CONVERTER"
	StageHeaderConverter Stage = "HEADER_CONVERTER"
	StageTransformation  Stage = "TRANSFORMATION"
	StageTaskPut         Stage = "TASK_PUT"
)

// DLQ context header names (exactly the JVM's DeadLetterQueueReporter constants).
const (
	HeaderPrefix           = "__connect.errors."
	HeaderTopic            = HeaderPrefix + "topic"
	HeaderPartition        = HeaderPrefix + "partition"
	HeaderOffset           = HeaderPrefix + "offset"
	HeaderConnectorName    = HeaderPrefix + "connector.name"
	HeaderTaskID           = HeaderPrefix + "task.id"
	HeaderStage            = HeaderPrefix + "stage"
	HeaderExecutingClass   = HeaderPrefix + "class.name"
	HeaderExceptionClass   = HeaderPrefix + "exception.class.name"
	HeaderExceptionMessage = HeaderPrefix + "exception.message"
	HeaderExceptionTrace   = HeaderPrefix + "exception.stacktrace"
)

// ErrorsConfigDef is the connector-level error handling keys (JVM ConnectorConfig / SinkConnectorConfig),
// shared by the task's error handler and the herders' validation.
func ErrorsConfigDef() *connect.ConfigDef {
	const g = "Error Handling"
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "errors.retry.timeout", Type: connect.ConfigLong, Default: int64(0), Group: g, OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Retry Timeout for Errors", Doc: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries."}).
		Define(connect.ConfigKey{Name: "errors.retry.delay.max.ms", Type: connect.ConfigLong, Default: int64(60000), Group: g, OrderInGroup: 2, Width: connect.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors", Doc: "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues."}).
		Define(connect.ConfigKey{Name: "errors.tolerance", Type: connect.ConfigString, Default: "none", Validator: connect.InIgnoreCase("none", "all"), Group: g, OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Error Tolerance", Doc: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records."}).
		Define(connect.ConfigKey{Name: "errors.log.enable", Type: connect.ConfigBoolean, Default: false, Group: g, OrderInGroup: 4, Width: connect.WidthShort, DisplayName: "Log Errors", Doc: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported."}).
		Define(connect.ConfigKey{Name: "errors.log.include.messages", Type: connect.ConfigBoolean, Default: false, Group: g, OrderInGroup: 5, Width: connect.WidthShort, DisplayName: "Log Error Details", Doc: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files."}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.name", Type: connect.ConfigString, Default: "", Group: g, OrderInGroup: 6, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Name", Doc: "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ."}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.replication.factor", Type: connect.ConfigShort, Default: 3, Group: g, OrderInGroup: 7, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Replication Factor", Doc: "Replication factor used to create the dead letter queue topic when it doesn't already exist."}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.context.headers.enable", Type: connect.ConfigBoolean, Default: false, Group: g, OrderInGroup: 8, Width: connect.WidthMedium, DisplayName: "Enable Error Context Headers", Doc: "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>"})
}

// ToleranceExceededError is the JVM's "Tolerance exceeded in error handler" ConnectException.
type ToleranceExceededError struct{ Cause error }

func (e *ToleranceExceededError) Error() string { return "Tolerance exceeded in error handler" }
func (e *ToleranceExceededError) Unwrap() error { return e.Cause }

// errorHandler is the JVM's RetryWithToleranceOperator plus its reporters (log, DLQ).
type errorHandler struct {
	connector     string
	taskID        int
	tolerateAll   bool
	retryTimeout  time.Duration // <0 forever
	maxDelay      time.Duration
	logEnable     bool
	logMessages   bool
	dlq           *dlqReporter
	metrics       *metrics.Task
	totalFailures int64
	totalSkipped  int64
}

func newErrorHandler(connector string, task int, props map[string]string, workerClientProps map[string]string) (*errorHandler, error) {
	c, err := ErrorsConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	h := &errorHandler{
		connector:    connector,
		taskID:       task,
		tolerateAll:  strings.EqualFold(c.String("errors.tolerance"), "all"),
		retryTimeout: time.Duration(c.Long("errors.retry.timeout")) * time.Millisecond,
		maxDelay:     time.Duration(c.Long("errors.retry.delay.max.ms")) * time.Millisecond,
		logEnable:    c.Bool("errors.log.enable"),
		logMessages:  c.Bool("errors.log.include.messages"),
	}
	if t := c.String("errors.deadletterqueue.topic.name"); t != "" {
		h.dlq = &dlqReporter{
			topic:          t,
			replication:    int16(c.Int("errors.deadletterqueue.topic.replication.factor")),
			contextHeaders: c.Bool("errors.deadletterqueue.context.headers.enable"),
			clientProps:    workerClientProps,
			clientID:       kafka.ClientID(fmt.Sprintf("connector-dlq-producer-%s-%d", connector, task)),
		}
	}
	return h, nil
}

// retry handles a failed first attempt: a RetriableError is retried with fn (backoff, up to
// errors.retry.timeout), anything else goes straight to tolerance. It returns skip=true when the record must
// be dropped (tolerated and reported) and a non-nil error when the task must fail. The hot path never calls
// it: callers make the first attempt themselves, so nothing is allocated for records that convert cleanly.
func (h *errorHandler) retry(ctx context.Context, stage Stage, class string, raw *kgo.Record, err error, fn func() error) (skip bool, _ error) {
	start := time.Now()
	for attempt := 1; connect.IsRetriable(err) && h.retryTimeout != 0; attempt++ {
		d := h.backoff(attempt)
		if h.retryTimeout > 0 {
			left := h.retryTimeout - time.Since(start)
			if left <= 0 {
				break
			}
			d = min(d, left)
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(d):
		}
		if err = fn(); err == nil {
			return false, nil
		}
	}
	return h.fail(ctx, stage, class, raw, err)
}

// fail records an error that was not (or no longer) retried: tolerated → reported and skipped,
// otherwise the task fails.
func (h *errorHandler) fail(ctx context.Context, stage Stage, class string, raw *kgo.Record, cause error) (bool, error) {
	h.totalFailures++
	if h.metrics != nil {
		h.metrics.Error(string(stage))
	}
	if h.logEnable || !h.tolerateAll {
		h.log(stage, class, raw, cause)
	}
	if !h.tolerateAll {
		return false, &ToleranceExceededError{Cause: cause}
	}
	h.totalSkipped++
	if h.metrics != nil {
		h.metrics.Skipped.Inc()
	}
	if h.dlq != nil && raw != nil {
		if err := h.dlq.report(ctx, h, stage, class, raw, cause); err != nil {
			return false, fmt.Errorf("writing to the dead letter queue %s: %w", h.dlq.topic, err)
		}
		if h.metrics != nil {
			h.metrics.DLQ.Inc()
		}
	}
	return true, nil
}

// backoff is the JVM's: 300 ms · 2^(n−1); once above the max, random in [0, max).
func (h *errorHandler) backoff(attempt int) time.Duration {
	d := 300 * time.Millisecond << min(attempt-1, 20)
	if d > h.maxDelay {
		if h.maxDelay <= 0 {
			return 0
		}
		return time.Duration(rand.Int64N(int64(h.maxDelay)))
	}
	return d
}

func (h *errorHandler) log(stage Stage, class string, raw *kgo.Record, cause error) {
	msg := fmt.Sprintf("Error encountered in task %s-%d. Executing stage '%s' with class '%s'", h.connector, h.taskID, stage, class)
	if h.logMessages && raw != nil {
		msg += fmt.Sprintf(", where consumed record is {topic='%s', partition=%d, offset=%d, timestamp=%d, timestampType=CreateTime}",
			raw.Topic, raw.Partition, raw.Offset, raw.Timestamp.UnixMilli())
	}
	slog.Error(msg+".", "error", cause)
}

func (h *errorHandler) close() {
	if h.dlq != nil {
		h.dlq.close()
	}
}

// dlqReporter writes failed records, byte for byte as consumed, to the dead letter topic.
type dlqReporter struct {
	topic          string
	replication    int16
	contextHeaders bool
	clientProps    map[string]string
	clientID       string

	mu       sync.Mutex
	producer connect.Producer
}

func (d *dlqReporter) ensure(ctx context.Context) error {
	if d.producer != nil {
		return nil
	}
	props := make(map[string]string, len(d.clientProps)+1)
	for k, v := range d.clientProps {
		props[k] = v
	}
	props["client.id"] = d.clientID
	p, err := kafka.NewProducer(ctx, props)
	if err != nil {
		return connect.Retriable(fmt.Errorf("connecting the DLQ producer: %w", err))
	}
	if err := kafka.EnsureTopic(ctx, p.Client(), connect.TopicSpec{Name: d.topic, Partitions: 1, ReplicationFactor: d.replication}); err != nil {
		p.Close()
		return err
	}
	d.producer = p
	return nil
}

func (d *dlqReporter) report(ctx context.Context, h *errorHandler, stage Stage, class string, raw *kgo.Record, cause error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.ensure(ctx); err != nil {
		return err
	}
	msg := &connect.ProducerRecord{Topic: d.topic, Partition: connect.AnyPartition, Key: raw.Key, Value: raw.Value, Timestamp: raw.Timestamp}
	for _, rh := range raw.Headers {
		msg.Headers = append(msg.Headers, connect.RecordHeader{Key: rh.Key, Value: rh.Value})
	}
	if d.contextHeaders {
		add := func(k, v string) {
			msg.Headers = append(msg.Headers, connect.RecordHeader{Key: k, Value: []byte(v)})
		}
		add(HeaderTopic, raw.Topic)
		add(HeaderPartition, strconv.Itoa(int(raw.Partition)))
		add(HeaderOffset, strconv.FormatInt(raw.Offset, 10))
		add(HeaderConnectorName, h.connector)
		add(HeaderTaskID, strconv.Itoa(h.taskID))
		add(HeaderStage, string(stage))
		add(HeaderExecutingClass, class)
		if cause != nil {
			add(HeaderExceptionClass, connect.ErrorClassName(cause))
			add(HeaderExceptionMessage, cause.Error())
			add(HeaderExceptionTrace, Trace(cause))
		}
	}
	if err := d.producer.Produce(ctx, msg); err != nil {
		return fmt.Errorf("producing to %s: %w", d.topic, err)
	}
	return nil
}

func (d *dlqReporter) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.producer != nil {
		d.producer.Close()
		d.producer = nil
	}
}

// Trace renders an error chain the way status traces and DLQ headers carry it: the JVM's
// "Class: message" lines with "Caused by:" for wrapped causes, then the Go stack of the reporting goroutine.
func Trace(err error) string {
	if err == nil {
		return ""
	}
	var b strings.Builder
	first := true
	seen := ""
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		if msg == seen {
			continue
		}
		seen = msg
		if !first {
			b.WriteString("Caused by: ")
		}
		fmt.Fprintf(&b, "%s: %s\n", connect.ErrorClassName(e), msg)
		if first {
			for _, line := range strings.Split(strings.TrimSpace(string(debug.Stack())), "\n")[1:] {
				b.WriteString("\tat " + strings.TrimSpace(line) + "\n")
			}
		}
		first = false
	}
	return strings.TrimRight(b.String(), "\n")
}
