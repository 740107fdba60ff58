// Package file is the JVM's example sink, FileStreamSinkConnector: each record's value, one line per record,
// appended to a file (or stdout when `file` is unset).
package file

import (
	"context"
	"fmt"

	"github.com/connectd/connectd/connect"
)

// Class is the JVM class name users put in configs.
const Class = "org.apache.kafka.connect.file.FileStreamSinkConnector"

// TaskClass is the JVM's task class of the connector.
const TaskClass = "org.apache.kafka.connect.file.FileStreamSinkTask"

// Plugins lists the sink connector, for a runtime's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{Class: Class, Type: connect.PluginSink, New: func() any { return &Connector{} }}}
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

// AlterOffsets implements connect.OffsetAlterer: the file sink keeps no offsets of its own, so altering or
// resetting the framework's offsets is all there is to do (as the JVM's FileStreamSinkConnector answers).
func (c *Connector) AlterOffsets(map[string]string, map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// TaskClass is the JVM task class written as task.class, so that JVM workers sharing the cluster load the tasks.
func (c *Connector) TaskClass() string { return TaskClass }

var _ connect.JVMTaskClasser = (*Connector)(nil)

func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

// Task is FileStreamSinkTask. Each put is one write of the batch's lines. A failed write (a full disk, a
// FIFO whose reader went away) closes the file and returns a retriable error: the worker puts the same
// batch again, the file is reopened and only what the failed write left unwritten is written (from the
// exact byte in the same file; from the start of the torn line in a new file or a pipe). Commits fsync
// regular files; a failed fsync fails the commit, so the records since the last commit are written again.
type Task struct {
	connect.SinkTaskBase
	filename string
	out      *output
	buf      []byte
	failed   *failedWrite
	// unsynced: bytes written to a file closed after a failure may not have reached the disk.
	unsynced bool
}

// failedWrite is what a failed write left unwritten, kept until the same batch is put again.
type failedWrite struct {
	first, last connect.TopicPartition
	firstOff    int64
	lastOff     int64
	count       int
	data        []byte
	written     int
	file        fileID
}

func (t *Task) Start(props map[string]string) error {
	t.filename = props["file"]
	return t.open()
}

func (t *Task) open() error {
	o, err := openOutput(t.filename)
	if err != nil {
		if isNoReader(err) {
			return nil // a FIFO nobody reads yet: opened on the first put
		}
		return fmt.Errorf("couldn't find or create file '%s' for FileStreamSinkTask: %w", t.filename, err)
	}
	t.out = o
	return nil
}

func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	if len(records) == 0 {
		return nil
	}
	if t.out == nil {
		o, err := openOutput(t.filename)
		if err != nil {
			if isNoReader(err) {
				err = fmt.Errorf("no process has the FIFO open for reading: %w", err)
			}
			return connect.Retriable(fmt.Errorf("opening %s: %w", t.target(), err))
		}
		t.out = o
	}
	var data []byte
	if f := t.failed; f != nil && f.sameBatch(records) {
		data = f.data[f.resumeAt(t.out.id):]
	} else {
		data = t.render(records)
	}
	t.failed = nil
	n, err := t.out.write(ctx, data)
	if err != nil {
		t.failed = newFailedWrite(records, data, n, t.out.id)
		t.closeAfterFailure()
		return connect.Retriable(fmt.Errorf("writing to %s (%d of %d bytes written; the rest is written after reopening it): %w",
			t.target(), n, len(data), err))
	}
	return nil
}

func (t *Task) render(records []*connect.SinkRecord) []byte {
	b := t.buf[:0]
	for _, r := range records {
		b = append(b, connect.JavaString(r.Value)...)
		b = append(b, '\n')
	}
	t.buf = b
	return b
}

func newFailedWrite(records []*connect.SinkRecord, data []byte, written int, id fileID) *failedWrite {
	first, last := records[0], records[len(records)-1]
	return &failedWrite{
		first: connect.TopicPartition{Topic: first.Topic, Partition: first.Partition}, firstOff: first.Offset,
		last: connect.TopicPartition{Topic: last.Topic, Partition: last.Partition}, lastOff: last.Offset,
		count: len(records), data: append([]byte(nil), data...), written: written, file: id,
	}
}

// sameBatch reports whether records are the batch whose write failed (the worker redelivers it as is).
func (f *failedWrite) sameBatch(records []*connect.SinkRecord) bool {
	first, last := records[0], records[len(records)-1]
	return len(records) == f.count &&
		first.Topic == f.first.Topic && first.Partition == f.first.Partition && first.Offset == f.firstOff &&
		last.Topic == f.last.Topic && last.Partition == f.last.Partition && last.Offset == f.lastOff
}

// resumeAt is where to continue in data: right after the written bytes in the same regular file, else at
// the start of the first line not completely written (a pipe's new reader, a rotated file).
func (f *failedWrite) resumeAt(now fileID) int {
	if f.file.regular && f.file == now {
		return f.written
	}
	for i := f.written - 1; i >= 0; i-- {
		if f.data[i] == '\n' {
			return i + 1
		}
	}
	return 0
}

func (t *Task) closeAfterFailure() {
	if t.out == nil {
		return
	}
	if err := t.out.close(); err != nil && t.out.id.regular {
		t.unsynced = true
	}
	t.out = nil
}

// Flush makes what was put durable before the worker commits: fsync for regular files; pipes, character
// devices (/dev/null, a terminal) and sockets have nothing to sync.
func (t *Task) Flush(context.Context, map[connect.TopicPartition]connect.OffsetAndMetadata) error {
	if t.unsynced {
		t.unsynced = false
		return fmt.Errorf("%s was closed after a failed write and syncing it failed: records since the last commit are written again", t.target())
	}
	if t.out == nil {
		return nil
	}
	if err := t.out.sync(); err != nil {
		t.closeAfterFailure()
		t.unsynced = false
		return fmt.Errorf("syncing %s (records since the last commit are written again): %w", t.target(), err)
	}
	return nil
}

func (t *Task) Stop() error {
	if t.out == nil {
		return nil
	}
	err := t.out.close()
	t.out = nil
	return err
}

func (t *Task) target() string {
	if t.filename == "" {
		return "standard output"
	}
	return t.filename
}
