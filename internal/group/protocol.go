// Package group is worker group membership on the Kafka group coordinator with protocol type "connect", byte for
// byte the JVM's Connect protocol (ConnectProtocol / IncrementalCooperativeConnectProtocol / ExtendedAssignment):
// sub-protocols `default` (V0, eager), `compatible` (V1, incremental cooperative) and `sessioned` (V2, V1 plus
// session keys), the leader's assignors, and the member loop (join, sync, heartbeat, leave).
package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ProtocolType is the JoinGroup protocol type of Connect worker groups.
const ProtocolType = "connect"

// Connect sub-protocol versions and their JoinGroup protocol names.
const (
	V0 int16 = 0 // "default": eager
	V1 int16 = 1 // "compatible": incremental cooperative
	V2 int16 = 2 // "sessioned": incremental cooperative + session keys
)

// ConnectorTask is the task id that stands for the connector instance itself.
const ConnectorTask int32 = -1

// Assignment error codes.
const (
	NoError        int16 = 0
	ConfigMismatch int16 = 1
)

// ProtocolName returns the JoinGroup protocol name of a version.
func ProtocolName(v int16) string {
	switch v {
	case V0:
		return "default"
	case V1:
		return "compatible"
	default:
		return "sessioned"
	}
}

// ProtocolVersion maps a JoinGroup protocol name to its version.
func ProtocolVersion(name string) (int16, error) {
	switch name {
	case "default":
		return V0, nil
	case "compatible":
		return V1, nil
	case "sessioned":
		return V2, nil
	}
	return 0, fmt.Errorf("group: unknown connect protocol %q", name)
}

// ProtocolsFor returns the versions a worker with connect.protocol=mode offers, in preference order.
func ProtocolsFor(mode string) ([]int16, error) {
	switch strings.ToLower(mode) {
	case "eager":
		return []int16{V0}, nil
	case "compatible":
		return []int16{V1, V0}, nil
	case "sessioned", "":
		return []int16{V2, V1, V0}, nil
	}
	return nil, fmt.Errorf("group: invalid connect.protocol %q (eager, compatible, sessioned)", mode)
}

// TaskID names a task (the JVM's ConnectorTaskId).
type TaskID struct {
	Connector string
	Task      int32
}

func (t TaskID) String() string { return fmt.Sprintf("%s-%d", t.Connector, t.Task) }

// Less orders task ids like the JVM's ConnectorTaskId.compareTo (connector, then task).
func (t TaskID) Less(o TaskID) bool {
	if t.Connector != o.Connector {
		return t.Connector < o.Connector
	}
	return t.Task < o.Task
}

// Assignment is a worker's assignment. For V0 Connectors/Tasks is the full set; for V1/V2 they hold only newly
// assigned work and Revoked* what to stop, and Delay asks the member to rejoin after that many milliseconds.
type Assignment struct {
	Version           int16
	Error             int16
	Leader            string
	LeaderURL         string
	Offset            int64
	Connectors        []string
	Tasks             []TaskID
	RevokedConnectors []string
	RevokedTasks      []TaskID
	Delay             int32
}

// IsEmpty reports whether the assignment holds no work at all (assigned or revoked).
func (a *Assignment) IsEmpty() bool {
	return a == nil || (len(a.Connectors) == 0 && len(a.Tasks) == 0 && len(a.RevokedConnectors) == 0 && len(a.RevokedTasks) == 0)
}

// WorkerState is a member's JoinGroup metadata. Assignment (V1/V2 only) is the member's current full
// assignment; nil when empty.
type WorkerState struct {
	Version    int16
	URL        string
	Offset     int64
	Assignment *Assignment
}

// ---- wire helpers (Kafka protocol types: big-endian, int16-length strings, int32-count arrays) ----

type writer struct{ b []byte }

func (w *writer) i16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) i32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) i64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) str(s string) {
	w.i16(int16(len(s)))
	w.b = append(w.b, s...)
}

// ErrShort is returned for truncated input.
var ErrShort = errors.New("group: truncated connect protocol message")

type reader struct {
	b   []byte
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if len(r.b) < n {
		r.err = ErrShort
		return false
	}
	return true
}
func (r *reader) i16() int16 {
	if !r.need(2) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b))
	r.b = r.b[2:]
	return v
}
func (r *reader) i32() int32 {
	if !r.need(4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}
func (r *reader) i64() int64 {
	if !r.need(8) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}
func (r *reader) str() string {
	n := r.i16()
	if n < 0 {
		if r.err == nil {
			r.err = errors.New("group: null string in connect protocol message")
		}
		return ""
	}
	if !r.need(int(n)) {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// connectorAssignments groups connectors (task -1) and tasks per connector the way the JVM's asMap does:
// connectors first (in order, deduplicated), then tasks in order, each appended to its connector's entry.
type connEntry struct {
	name  string
	tasks []int32
}

func groupAssignment(connectors []string, tasks []TaskID) []connEntry {
	var out []connEntry
	idx := map[string]int{}
	get := func(c string) *connEntry {
		i, ok := idx[c]
		if !ok {
			i = len(out)
			idx[c] = i
			out = append(out, connEntry{name: c})
		}
		return &out[i]
	}
	seen := map[string]bool{}
	for _, c := range connectors {
		if seen[c] {
			continue
		}
		seen[c] = true
		e := get(c)
		e.tasks = append(e.tasks, ConnectorTask)
	}
	for _, t := range tasks {
		e := get(t.Connector)
		e.tasks = append(e.tasks, t.Task)
	}
	return out
}

func (w *writer) entries(es []connEntry) {
	w.i32(int32(len(es)))
	for _, e := range es {
		w.str(e.name)
		w.i32(int32(len(e.tasks)))
		for _, t := range e.tasks {
			w.i32(t)
		}
	}
}

// more reports whether an optional trailing field is there: the JVM reads every version with the V1 layouts,
// whose fields after the config offset may be missing at the end of a message but not cut short.
func (r *reader) more() bool { return r.err == nil && len(r.b) > 0 }

// entries reads a nullable array of connectors and their (not nullable) task arrays; null reads as no work.
func (r *reader) entries() (conns []string, tasks []TaskID) {
	n := r.i32()
	if n < 0 {
		return nil, nil
	}
	for i := int32(0); i < n && r.err == nil; i++ {
		c := r.str()
		m := r.i32()
		if m < 0 && r.err == nil {
			r.err = errors.New("group: null task array in connect protocol message")
		}
		for j := int32(0); j < m && r.err == nil; j++ {
			t := r.i32()
			if t == ConnectorTask {
				conns = append(conns, c)
			} else {
				tasks = append(tasks, TaskID{c, t})
			}
		}
	}
	return conns, tasks
}

// EncodeAssignment serializes an assignment in its version's layout (header int16 version first).
func EncodeAssignment(a *Assignment) []byte {
	w := &writer{}
	w.i16(a.Version)
	w.i16(a.Error)
	w.str(a.Leader)
	w.str(a.LeaderURL)
	w.i64(a.Offset)
	w.entries(groupAssignment(a.Connectors, a.Tasks))
	if a.Version >= V1 {
		w.entries(groupAssignment(a.RevokedConnectors, a.RevokedTasks))
		w.i32(a.Delay)
	}
	return w.b
}

// DecodeAssignment parses an assignment of any version as the JVM does: with the V1 layout, the fields after
// the offset optional.
func DecodeAssignment(b []byte) (*Assignment, error) {
	r := &reader{b: b}
	a := &Assignment{Version: r.i16()}
	if r.err == nil && a.Version < 0 {
		return nil, fmt.Errorf("group: unsupported assignment version %d", a.Version)
	}
	a.Error = r.i16()
	a.Leader = r.str()
	a.LeaderURL = r.str()
	a.Offset = r.i64()
	if r.more() {
		a.Connectors, a.Tasks = r.entries()
	}
	if r.more() {
		a.RevokedConnectors, a.RevokedTasks = r.entries()
	}
	if r.more() {
		a.Delay = r.i32()
	}
	if r.err != nil {
		return nil, r.err
	}
	return a, nil
}

// EncodeMetadata serializes a member's JoinGroup metadata for ws.Version. For V1/V2 the allocation is the
// current assignment serialized at the same version, or null when it is empty.
func EncodeMetadata(ws WorkerState) []byte {
	w := &writer{}
	w.i16(ws.Version)
	w.str(ws.URL)
	w.i64(ws.Offset)
	if ws.Version >= V1 {
		if ws.Assignment == nil || ws.Assignment.IsEmpty() {
			w.i32(-1)
		} else {
			a := *ws.Assignment
			a.Version = ws.Version
			ab := EncodeAssignment(&a)
			w.i32(int32(len(ab)))
			w.b = append(w.b, ab...)
		}
	}
	return w.b
}

// DecodeMetadata parses JoinGroup member metadata of any version as the JVM does: with the V1 layout, the
// allocation optional.
func DecodeMetadata(b []byte) (*WorkerState, error) {
	r := &reader{b: b}
	ws := &WorkerState{Version: r.i16()}
	if r.err == nil && ws.Version < 0 {
		return nil, fmt.Errorf("group: unsupported subscription version %d", ws.Version)
	}
	ws.URL = r.str()
	ws.Offset = r.i64()
	if r.more() {
		n := r.i32()
		if n >= 0 && r.need(int(n)) {
			a, err := DecodeAssignment(r.b[:n])
			if err != nil {
				return nil, err
			}
			r.b = r.b[n:]
			ws.Assignment = a
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return ws, nil
}

// ConnectorsAndTasks is a set of connectors and tasks (the JVM's WorkerCoordinator.ConnectorsAndTasks).
type ConnectorsAndTasks struct {
	Connectors []string
	Tasks      []TaskID
}

// Sorted returns a copy with connectors and tasks sorted, duplicates removed.
func (c ConnectorsAndTasks) Sorted() ConnectorsAndTasks {
	cs := map[string]bool{}
	ts := map[TaskID]bool{}
	var out ConnectorsAndTasks
	for _, x := range c.Connectors {
		if !cs[x] {
			cs[x] = true
			out.Connectors = append(out.Connectors, x)
		}
	}
	for _, x := range c.Tasks {
		if !ts[x] {
			ts[x] = true
			out.Tasks = append(out.Tasks, x)
		}
	}
	sort.Strings(out.Connectors)
	sort.Slice(out.Tasks, func(i, j int) bool { return out.Tasks[i].Less(out.Tasks[j]) })
	return out
}

// IsEmpty reports no connectors and no tasks.
func (c ConnectorsAndTasks) IsEmpty() bool { return len(c.Connectors) == 0 && len(c.Tasks) == 0 }
