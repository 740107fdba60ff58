// Package file is the JVM's example sink, FileStreamSinkConnector: each record's value, one line per record,
// appended to a file (or stdout when `file` is unset).
package file

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/connectd/connectd/connect"
)

// Class is the JVM class name users put in configs.
const Class = "org.apache.kafka.connect.file.FileStreamSinkConnector"

// TaskClass is the JVM's task class of the connector.
const TaskClass = "org.apache.kafka.connect.file.FileStreamSinkTask"

func init() {
	connect.Register(connect.Plugin{Class: Class, Type: connect.PluginSink, New: func() any { return &Connector{} }})
}

func configDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "file", Type: connect.ConfigString, Default: nil, Importance: connect.High,
			Doc: "Destination filename. If not specified, the standard output will be used"})
}

// Connector is FileStreamSinkConnector.
type Connector struct {
	connect.ConnectorBase
	props map[string]string
}

func (c *Connector) ConfigDef() *connect.ConfigDef { return configDef() }
func (c *Connector) Start(props map[string]string) error {
	if _, err := configDef().Parse(props); err != nil {
		return err
	}
	c.props = props
	return nil
}
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	// Like the JVM's: every task appends to the same file.
	return connect.ReplicateTaskConfigs(c.props, maxTasks), nil
}
func (c *Connector) Stop() error { return nil }

// TaskClass is the JVM task class written as task.class, so that JVM workers sharing the cluster load the tasks.
func (c *Connector) TaskClass() string { return TaskClass }

var _ connect.JVMTaskClasser = (*Connector)(nil)

func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

// Task is FileStreamSinkTask.
type Task struct {
	connect.SinkTaskBase
	filename string
	f        *os.File
	w        *bufio.Writer
}

func (t *Task) Start(props map[string]string) error {
	t.filename = props["file"]
	if t.filename == "" {
		t.w = bufio.NewWriter(os.Stdout)
		return nil
	}
	f, err := os.OpenFile(t.filename, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("couldn't find or create file '%s' for FileStreamSinkTask: %w", t.filename, err)
	}
	t.f, t.w = f, bufio.NewWriterSize(f, 64<<10)
	return nil
}

func (t *Task) Put(_ context.Context, records []*connect.SinkRecord) error {
	for _, r := range records {
		t.w.WriteString(connect.JavaString(r.Value))
		t.w.WriteByte('\n')
	}
	// Like the JVM's PrintStream, what was put is in the file when put returns (one write per batch here).
	if err := t.w.Flush(); err != nil {
		return connect.Retriable(fmt.Errorf("writing %s: %w", t.filename, err))
	}
	return nil
}

func (t *Task) Flush(context.Context, map[connect.TopicPartition]connect.OffsetAndMetadata) error {
	if err := t.w.Flush(); err != nil {
		return connect.Retriable(fmt.Errorf("flushing %s: %w", t.filename, err))
	}
	if t.f != nil {
		return t.f.Sync()
	}
	return nil
}

func (t *Task) Stop() error {
	if t.w != nil {
		t.w.Flush()
	}
	if t.f != nil {
		return t.f.Close()
	}
	return nil
}
