// Package sinktest provides an in-memory sink connector for runtime tests: it records what it is given and
// can be told to fail put() fatally or retriably.
package sinktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/connectd/connectd/connect"
)

// Class is the test connector's class name.
const Class = "io.connectd.test.RecordingSinkConnector"

// Bytes converter class used by runtime tests (passes bytes through as a string).
const StringConverterClass = "io.connectd.test.TestStringConverter"

// Plugins lists the test connector and converters, for a test's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{
		{Class: Class, Type: connect.PluginSink, New: func() any { return &Connector{} }},
		{Class: StringConverterClass, Type: connect.PluginConverter, New: func() any { return stringConverter{} }},
		{Class: "io.connectd.test.TestHeaderConverter", Type: connect.PluginHeaderConverter, New: func() any { return headerConverter{} }},
	}
}

// Record is one delivered record.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       string
	Value     string
	Task      int
}

// Sink is the shared state of one named connector's tasks.
type Sink struct {
	mu             sync.Mutex
	records        []Record
	flushed        map[connect.TopicPartition]int64
	failFatal      error
	retriableLeft  int
	retriableCalls int
	putCalls       int
	rejectValue    string
	rejectIf       func(string) bool
	failOpen       error
	flushFailures  int
	putGate        chan struct{}
	flushedLen     int
}

// FailOpen makes Open fail with err (nil clears).
func (s *Sink) FailOpen(err error) { s.mu.Lock(); s.failOpen = err; s.mu.Unlock() }

// FailFlush makes the next n flushes fail; the task then drops what it buffered, as a sink may.
func (s *Sink) FailFlush(n int) { s.mu.Lock(); s.flushFailures = n; s.mu.Unlock() }

// BlockPuts makes put wait until Unblock is called.
func (s *Sink) BlockPuts() { s.mu.Lock(); s.putGate = make(chan struct{}); s.mu.Unlock() }

// Unblock releases blocked puts.
func (s *Sink) Unblock() {
	s.mu.Lock()
	if s.putGate != nil {
		close(s.putGate)
		s.putGate = nil
	}
	s.mu.Unlock()
}

var (
	sinksMu sync.Mutex
	sinks   = map[string]*Sink{}
)

// For returns the state of the connector with the given "sink.id" config value.
func For(id string) *Sink {
	sinksMu.Lock()
	defer sinksMu.Unlock()
	s, ok := sinks[id]
	if !ok {
		s = &Sink{flushed: map[connect.TopicPartition]int64{}}
		sinks[id] = s
	}
	return s
}

// Records returns a copy of what was delivered.
func (s *Sink) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record(nil), s.records...)
}

// Count is the number of delivered records.
func (s *Sink) Count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.records) }

// FailFatal makes the next put fail with err (nil clears).
func (s *Sink) FailFatal(err error) { s.mu.Lock(); s.failFatal = err; s.mu.Unlock() }

// FailRetriable makes the next n puts fail with a retriable error.
func (s *Sink) FailRetriable(n int) { s.mu.Lock(); s.retriableLeft = n; s.mu.Unlock() }

// RetriableCalls counts puts that failed retriably.
func (s *Sink) RetriableCalls() int { s.mu.Lock(); defer s.mu.Unlock(); return s.retriableCalls }

// RejectIf makes put report records whose value matches through the ErrantRecordReporter (nil clears).
func (s *Sink) RejectIf(f func(string) bool) { s.mu.Lock(); s.rejectIf = f; s.mu.Unlock() }

// RejectValue makes put report records with this value through the ErrantRecordReporter.
func (s *Sink) RejectValue(v string) { s.mu.Lock(); s.rejectValue = v; s.mu.Unlock() }

// Connector is the recording sink connector.
type Connector struct {
	connect.ConnectorBase
	props map[string]string
}

func (c *Connector) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "sink.id", Type: connect.ConfigString, Default: connect.NoDefault, Doc: "which recorder to use"})
}
func (c *Connector) Start(props map[string]string) error {
	if props["sink.id"] == "" {
		return errors.New("sink.id is required")
	}
	c.props = props
	return nil
}
func (c *Connector) TaskConfigs(max int) ([]map[string]string, error) {
	out := connect.ReplicateTaskConfigs(c.props, max)
	for i := range out {
		out[i]["task.index"] = fmt.Sprint(i)
	}
	return out, nil
}
func (c *Connector) Stop() error               { return nil }
func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

// StatusNote is the config's status.note (undefined, so that validation leaves it alone).
func (c *Connector) StatusNote() string { return c.props["status.note"] }

// Task records puts.
type Task struct {
	connect.SinkTaskBase
	sink  *Sink
	index int
}

func (t *Task) Start(props map[string]string) error {
	t.sink = For(props["sink.id"])
	fmt.Sscan(props["task.index"], &t.index)
	return nil
}

func (t *Task) Open(tps []connect.TopicPartition) error {
	t.sink.mu.Lock()
	defer t.sink.mu.Unlock()
	return t.sink.failOpen
}

// Flush fails when told to; the records put since the last flush are then "lost" by the sink (removed
// from the recording), so only the runtime's rewind can bring them back.
func (t *Task) Flush(_ context.Context, _ map[connect.TopicPartition]connect.OffsetAndMetadata) error {
	s := t.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flushFailures > 0 {
		s.flushFailures--
		s.records = s.records[:s.flushedLen]
		return errors.New("simulated flush failure")
	}
	s.flushedLen = len(s.records)
	return nil
}

// StatusNotePrefix starts a record value that the task notes in its status (connect.TaskStatusNoter) with
// the rest of the value as the note ("" clears it).
const StatusNotePrefix = "status-note:"

func (t *Task) Put(ctx context.Context, recs []*connect.SinkRecord) error {
	for _, r := range recs {
		if v, ok := r.Value.(string); ok && strings.HasPrefix(v, StatusNotePrefix) {
			if n, ok := t.Ctx.(connect.TaskStatusNoter); ok {
				n.NoteStatus(strings.TrimPrefix(v, StatusNotePrefix))
			}
		}
	}
	s := t.sink
	s.mu.Lock()
	if g := s.putGate; g != nil && len(recs) > 0 {
		s.mu.Unlock()
		select {
		case <-g:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
	}
	s.putCalls++
	if s.failFatal != nil {
		err := s.failFatal
		s.mu.Unlock()
		return err
	}
	if s.retriableLeft > 0 && len(recs) > 0 {
		s.retriableLeft--
		s.retriableCalls++
		s.mu.Unlock()
		return connect.Retriablef("simulated retriable failure")
	}
	reject, rejectIf := s.rejectValue, s.rejectIf
	s.mu.Unlock()
	for _, r := range recs {
		v := fmt.Sprint(r.Value)
		if (reject != "" && v == reject) || (rejectIf != nil && rejectIf(v)) {
			rep := t.Ctx.ErrantRecordReporter()
			if rep == nil {
				return fmt.Errorf("cannot write record with value %q", v)
			}
			if err := rep.Report(ctx, r, fmt.Errorf("rejected value %q", v)); err != nil {
				return err
			}
			continue
		}
		s.mu.Lock()
		s.records = append(s.records, Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: fmt.Sprint(r.Key), Value: v, Task: t.index})
		s.mu.Unlock()
	}
	return nil
}

func (t *Task) Stop() error { return nil }

type stringConverter struct{}

func (stringConverter) Configure(map[string]string, bool) error { return nil }
func (stringConverter) ToConnectData(_ string, _ connect.Headers, b []byte) (connect.SchemaAndValue, error) {
	if b == nil {
		return connect.NullSchemaAndValue, nil
	}
	if string(b) == "POISON" {
		return connect.SchemaAndValue{}, connect.DataErrorf("poison record cannot be converted")
	}
	return connect.SchemaAndValue{Schema: connect.OptionalStringSchema, Value: string(b)}, nil
}
func (stringConverter) FromConnectData(_ string, _ connect.Headers, _ *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return []byte(fmt.Sprint(v)), nil
}

type headerConverter struct{}

func (headerConverter) Configure(map[string]string) error { return nil }
func (headerConverter) ToConnectHeader(_, _ string, b []byte) (connect.SchemaAndValue, error) {
	return connect.SchemaAndValue{Schema: connect.OptionalStringSchema, Value: string(b)}, nil
}
func (headerConverter) FromConnectHeader(_, _ string, _ *connect.Schema, v any) ([]byte, error) {
	return []byte(fmt.Sprint(v)), nil
}
