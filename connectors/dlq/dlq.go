// Package dlq is a dead-letter sink connector: it writes every record it receives to another Kafka topic,
// keeping the key, the value, the headers and the timestamp byte for byte. Use it to quarantine a topic
// (`topic=<target>`) or to replay a dead-letter queue back into the topics its records came from
// (`dlq.replay=true`: each record goes to the topic named by its `__connect.errors.topic` header).
//
// It must see raw bytes, so configure it with
//
//	key.converter=org.apache.kafka.connect.converters.ByteArrayConverter
//	value.converter=org.apache.kafka.connect.converters.ByteArrayConverter
//	header.converter=io.connectd.connect.dlq.BytesHeaderConverter
//
// (BytesHeaderConverter, in this package, is the header role of ByteArrayConverter; ByteArrayConverter itself
// is accepted as header.converter too once the runtime serves it as a header converter. The worker's
// default header converter, SimpleHeaderConverter, parses header values: a header holding
// "123" would come back as an INT and could not be written back unchanged). StringConverter keys and
// values are accepted too (written as UTF-8). Any other value type fails the record with a DataError.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Class is the connector's class name; the runtime also accepts DeadLetterSink and DeadLetterSinkConnector.
const Class = "io.connectd.connect.dlq.DeadLetterSinkConnector"

// TaskClass is the connector's task class name.
const TaskClass = "io.connectd.connect.dlq.DeadLetterSinkTask"

// Configuration keys.
const (
	ConfigTopic             = "topic"
	ConfigReplay            = "dlq.replay"
	ConfigStripErrorHeaders = "dlq.strip.error.headers"
	ConfigMissingTopic      = "dlq.replay.missing.topic"
	ConfigPreservePartition = "dlq.preserve.partition"
	ConfigBootstrap         = "bootstrap.servers"
	ProducerPrefix          = "producer."

	// ErrorTopicHeader names the original topic of a dead-lettered record.
	ErrorTopicHeader = "__connect.errors.topic"
	// ErrorPartitionHeader names its original partition.
	ErrorPartitionHeader = "__connect.errors.partition"
	errorHeaderPrefix    = "__connect.errors."
	byteArrayConverter   = "org.apache.kafka.connect.converters.ByteArrayConverter"
	stringConverter      = "org.apache.kafka.connect.storage.StringConverter"
)

// Plugins lists the sink connector and its header converter, for a runtime's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{
		{Class: Class, Type: connect.PluginSink, New: func() any { return &Connector{} }},
		{Class: HeaderConverterClass, Type: connect.PluginHeaderConverter, New: func() any { return BytesHeaderConverter{} }},
	}
}

// ConfigDef describes the connector's keys.
func ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: ConfigTopic, Type: connect.ConfigString, Default: "", Importance: connect.High,
			Group: "Target", OrderInGroup: 1, DisplayName: "Target topic",
			Doc: "Topic every record is written to. Required unless dlq.replay=true."}).
		Define(connect.ConfigKey{Name: ConfigReplay, Type: connect.ConfigBoolean, Default: false, Importance: connect.High,
			Group: "Target", OrderInGroup: 2, DisplayName: "Replay",
			Doc: "Write each record back to the topic named in its __connect.errors.topic header (replaying a dead-letter queue)."}).
		Define(connect.ConfigKey{Name: ConfigStripErrorHeaders, Type: connect.ConfigBoolean, Default: true, Importance: connect.Medium,
			Group: "Target", OrderInGroup: 3, DisplayName: "Strip error headers",
			Doc: "In replay mode, drop the __connect.errors.* headers the dead-letter queue added."}).
		Define(connect.ConfigKey{Name: ConfigMissingTopic, Type: connect.ConfigString, Default: "fail", Importance: connect.Medium,
			Validator: connect.In("fail", "skip", "report"), Group: "Target", OrderInGroup: 4, DisplayName: "Records without origin",
			Doc: "In replay mode, what to do with a record without a __connect.errors.topic header: fail the task, skip it, or report it to the connector's error handler (errors.tolerance / DLQ)."}).
		Define(connect.ConfigKey{Name: ConfigPreservePartition, Type: connect.ConfigBoolean, Default: false, Importance: connect.Low,
			Group: "Target", OrderInGroup: 5, DisplayName: "Preserve partition",
			Doc: "Write to the same partition number: the record's own partition, or in replay mode its __connect.errors.partition header. Otherwise keyed records are partitioned as the Java client's default partitioner (murmur2)."}).
		Define(connect.ConfigKey{Name: ConfigBootstrap, Type: connect.ConfigList, Default: connect.NoDefault, Importance: connect.High,
			Group: "Producer", OrderInGroup: 1, DisplayName: "Bootstrap servers",
			Doc: "Kafka cluster to write to. Further producer settings as producer.* keys (acks, compression.type, linger.ms, security.protocol, sasl.*, ssl.*, client.id ...)."})
}

// Connector is the dead-letter sink connector.
type Connector struct {
	connect.ConnectorBase
	props map[string]string
}

func (c *Connector) ConfigDef() *connect.ConfigDef { return ConfigDef() }

func (c *Connector) Start(props map[string]string) error {
	if _, err := parseConfig(props, kafkaClients(c.Ctx)); err != nil {
		return err
	}
	c.props = props
	return nil
}

func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return connect.ReplicateTaskConfigs(c.props, maxTasks), nil
}

func (c *Connector) Stop() error { return nil }

// TaskClass is written as task.class; it names the task class a JVM build of this connector would have.
func (c *Connector) TaskClass() string { return TaskClass }

var _ connect.JVMTaskClasser = (*Connector)(nil)

func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

// Validate checks what ConfigDef cannot: a target, and converters that keep bytes.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	var out []connect.ConfigValue
	if props[ConfigReplay] != "true" && strings.TrimSpace(props[ConfigTopic]) == "" {
		out = append(out, connect.ConfigValue{Name: ConfigTopic, Value: props[ConfigTopic],
			Errors: []string{"topic is required unless dlq.replay=true"}, Visible: true})
	}
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		v, ok := props[k]
		if !ok || isBytesConverter(v, k != "header.converter") {
			continue
		}
		if k == "header.converter" && (strings.TrimSpace(v) == HeaderConverterClass || strings.TrimSpace(v) == "BytesHeaderConverter") {
			continue
		}
		out = append(out, connect.ConfigValue{Name: k, Value: v,
			Errors: []string{"the dead-letter sink needs raw bytes: use " + byteArrayConverter}, Visible: true})
	}
	return out
}

func isBytesConverter(class string, allowString bool) bool {
	class = strings.TrimSpace(class)
	switch class {
	case byteArrayConverter, "ByteArrayConverter", "ByteArray":
		return true
	case stringConverter, "StringConverter", "String":
		return allowString
	}
	return false
}

type config struct {
	topic             string
	replay            bool
	strip             bool
	missing           string
	preservePartition bool
	producerProps     map[string]string
	brokers           []string
}

// kafkaClients is the runtime's Kafka client factory, nil when the runtime offers none.
func kafkaClients(ctx any) connect.KafkaClients {
	if pr, ok := ctx.(connect.PluginRuntime); ok {
		return pr.KafkaClients()
	}
	return nil
}

// parseConfig reads the configuration; with kc it also builds the producer's client settings.
func parseConfig(props map[string]string, kc connect.KafkaClients) (*config, error) {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	c := &config{topic: strings.TrimSpace(cfg.String(ConfigTopic)), replay: cfg.Bool(ConfigReplay),
		strip: cfg.Bool(ConfigStripErrorHeaders), missing: cfg.String(ConfigMissingTopic),
		preservePartition: cfg.Bool(ConfigPreservePartition), brokers: cfg.List(ConfigBootstrap)}
	if !c.replay && c.topic == "" {
		return nil, &connect.ConfigError{Name: ConfigTopic, Value: "", Message: "topic is required unless dlq.replay=true"}
	}
	if kc == nil {
		return c, nil
	}
	pp := connect.WithPrefix(props, ProducerPrefix)
	pp[ConfigBootstrap] = strings.Join(c.brokers, ",")
	if pp["client.id"] == "" {
		pp["client.id"] = "connector-dlq-sink-" + props["name"]
	}
	if err := kc.CheckProducerConfig(pp); err != nil {
		return nil, &connect.ConfigError{Name: ProducerPrefix + "*", Message: err.Error()}
	}
	c.producerProps = pp
	return c, nil
}

// Task writes records with the runtime's producer (connect.Producer).
type Task struct {
	connect.SinkTaskBase
	cfg      *config
	producer connect.Producer
}

func (t *Task) Start(props map[string]string) error {
	kc := kafkaClients(t.Ctx)
	if kc == nil {
		return errors.New("dlq: the runtime offers no Kafka clients (connect.PluginRuntime)")
	}
	cfg, err := parseConfig(props, kc)
	if err != nil {
		return err
	}
	t.cfg = cfg
	p, err := kc.NewProducer(cfg.producerProps)
	if err != nil {
		return connect.Retriable(fmt.Errorf("creating the dead-letter sink producer: %w", err))
	}
	t.producer = p
	return nil
}

// Put converts and sends the batch; it returns once every record is acknowledged.
func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	msgs := make([]*connect.ProducerRecord, 0, len(records))
	for _, r := range records {
		m, err := t.message(r)
		if err != nil {
			var skip *skipError
			if errors.As(err, &skip) {
				if t.cfg.missing == "report" {
					if rep := t.Ctx.ErrantRecordReporter(); rep != nil {
						if rerr := rep.Report(ctx, r, skip.err); rerr != nil {
							return rerr
						}
						continue
					}
					return skip.err
				}
				slog.Warn("dead-letter sink: skipping record without origin topic", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset)
				continue
			}
			return err
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := t.producer.Produce(ctx, msgs...); err != nil {
		var pe *connect.ProduceError
		if errors.As(err, &pe) && pe.Fatal {
			return fmt.Errorf("dead-letter sink: writing to %s: %w", pe.Topic, pe.Err)
		}
		return connect.Retriable(fmt.Errorf("dead-letter sink: %w", err))
	}
	return nil
}

type skipError struct{ err error }

func (e *skipError) Error() string { return e.err.Error() }

func (t *Task) message(r *connect.SinkRecord) (*connect.ProducerRecord, error) {
	key, err := rawBytes(r.Key, "key")
	if err != nil {
		return nil, err
	}
	val, err := rawBytes(r.Value, "value")
	if err != nil {
		return nil, err
	}
	m := &connect.ProducerRecord{Topic: t.cfg.topic, Partition: connect.AnyPartition, Key: key, Value: val}
	if r.Timestamp >= 0 {
		m.Timestamp = time.UnixMilli(r.Timestamp)
	}
	partition := r.Partition
	if t.cfg.replay {
		h, ok := r.Headers.Last(ErrorTopicHeader)
		var origin []byte
		if ok {
			origin, err = rawBytes(h.Value, "header "+ErrorTopicHeader)
			if err != nil {
				return nil, err
			}
		}
		if len(origin) == 0 {
			err := connect.DataErrorf("record %s-%d@%d has no %s header to replay to", r.Topic, r.Partition, r.Offset, ErrorTopicHeader)
			if t.cfg.missing == "fail" {
				return nil, err
			}
			return nil, &skipError{err}
		}
		m.Topic = string(origin)
		if h, ok := r.Headers.Last(ErrorPartitionHeader); ok {
			if b, err := rawBytes(h.Value, "header"); err == nil {
				var p int32
				if _, err := fmt.Sscanf(string(b), "%d", &p); err == nil {
					partition = p
				}
			}
		}
	}
	if t.cfg.preservePartition {
		m.Partition = partition
	}
	for _, h := range r.Headers {
		if t.cfg.replay && t.cfg.strip && strings.HasPrefix(h.Key, errorHeaderPrefix) {
			continue
		}
		v, err := rawBytes(h.Value, "header "+h.Key)
		if err != nil {
			return nil, err
		}
		m.Headers = append(m.Headers, connect.RecordHeader{Key: h.Key, Value: v})
	}
	return m, nil
}

func rawBytes(v any, what string) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return x, nil
	case string:
		return []byte(x), nil
	}
	return nil, connect.DataErrorf("dead-letter sink: %s is a %T, not bytes: configure %s for keys, values and headers", what, v, byteArrayConverter)
}

// Flush has nothing to do: Put returns only after every record is acknowledged.
func (t *Task) Flush(context.Context, map[connect.TopicPartition]connect.OffsetAndMetadata) error {
	return nil
}

func (t *Task) Stop() error {
	if t.producer != nil {
		t.producer.Close()
		t.producer = nil
	}
	return nil
}
