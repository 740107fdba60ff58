package connect

import (
	"fmt"
	"strconv"
)

// TimestampType says what a record's timestamp means, as Kafka's TimestampType.
type TimestampType int8

const (
	NoTimestampType TimestampType = iota
	CreateTime
	LogAppendTime
)

func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// NoTimestamp is the timestamp of a record without one (Kafka's RecordBatch.NO_TIMESTAMP).
const NoTimestamp int64 = -1

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// OffsetAndMetadata is what a task wants committed for a partition: the next offset to consume.
type OffsetAndMetadata struct {
	Offset   int64
	Metadata string
}

// Header is one record header with its converted value.
type Header struct {
	Key    string
	Schema *Schema
	Value  any
}

// Headers is an ordered header list (keys may repeat, as in Kafka).
type Headers []Header

// Last returns the last header with the key.
func (h Headers) Last(key string) (Header, bool) {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Key == key {
			return h[i], true
		}
	}
	return Header{}, false
}

// With returns a copy with one header appended.
func (h Headers) With(key string, s *Schema, v any) Headers {
	out := make(Headers, len(h), len(h)+1)
	copy(out, h)
	return append(out, Header{Key: key, Schema: s, Value: v})
}

// Without returns a copy without any header of the key.
func (h Headers) Without(key string) Headers {
	out := make(Headers, 0, len(h))
	for _, x := range h {
		if x.Key != key {
			out = append(out, x)
		}
	}
	return out
}

// Clone returns a shallow copy.
func (h Headers) Clone() Headers {
	if h == nil {
		return nil
	}
	out := make(Headers, len(h))
	copy(out, h)
	return out
}

// SinkRecord is one consumed record after conversion (and transformation), as the JVM's SinkRecord.
// Transformations return new records (NewRecord) instead of mutating their input.
type SinkRecord struct {
	Topic         string
	Partition     int32
	KeySchema     *Schema
	Key           any
	ValueSchema   *Schema
	Value         any
	Timestamp     int64 // milliseconds since the epoch, or NoTimestamp
	TimestampType TimestampType
	Headers       Headers

	// Kafka coordinates of the consumed record. Offset is the JVM's kafkaOffset(); Original* are the
	// pre-transformation topic and partition (KIP-793), which the runtime commits offsets for.
	Offset            int64
	OriginalTopic     string
	OriginalPartition int32
	OriginalOffset    int64
}

// NewRecord returns a copy with the given routing, key, value, timestamp and headers, keeping the Kafka
// coordinates (the JVM's ConnectRecord.newRecord).
func (r *SinkRecord) NewRecord(topic string, partition int32, keySchema *Schema, key any, valueSchema *Schema, value any, timestamp int64, headers Headers) *SinkRecord {
	c := *r
	c.Topic, c.Partition = topic, partition
	c.KeySchema, c.Key = keySchema, key
	c.ValueSchema, c.Value = valueSchema, value
	c.Timestamp = timestamp
	c.Headers = headers
	return &c
}

// WithValue is NewRecord changing only the value.
func (r *SinkRecord) WithValue(s *Schema, v any) *SinkRecord {
	return r.NewRecord(r.Topic, r.Partition, r.KeySchema, r.Key, s, v, r.Timestamp, r.Headers)
}

// WithKey is NewRecord changing only the key.
func (r *SinkRecord) WithKey(s *Schema, v any) *SinkRecord {
	return r.NewRecord(r.Topic, r.Partition, s, v, r.ValueSchema, r.Value, r.Timestamp, r.Headers)
}

// OriginalTopicPartition is where the record was consumed from, whatever SMTs did to Topic/Partition.
func (r *SinkRecord) OriginalTopicPartition() TopicPartition {
	return TopicPartition{Topic: r.OriginalTopic, Partition: r.OriginalPartition}
}

func (r *SinkRecord) String() string {
	return fmt.Sprintf("SinkRecord{kafkaOffset=%d, timestampType=%s} ConnectRecord{topic='%s', kafkaPartition=%d, key=%v, keySchema=%v, value=%v, valueSchema=%v, timestamp=%d}",
		r.Offset, r.TimestampType, r.Topic, r.Partition, r.Key, r.KeySchema, r.Value, r.ValueSchema, r.Timestamp)
}
