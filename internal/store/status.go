package store

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/state"
)

// Status-topic key prefixes (KafkaStatusBackingStore).
const (
	StatusConnectorPrefix = "status-connector-"
	StatusTaskPrefix      = "status-task-"
	StatusTopicPrefix     = "status-topic-"
)

// Status is a connector or task status record.
type Status struct {
	State      state.State `json:"state"`
	Trace      *string     `json:"trace"`
	WorkerID   string      `json:"worker_id"`
	Generation int32       `json:"generation"`
	// Version is the plugin's version() (KIP-891): JVM workers 4.1+ always write the key, null when unknown
	// (UNASSIGNED); records from older workers have none (nil).
	Version *string `json:"version"`
}

// TopicStatus is a topic-tracking record (KIP-558).
type TopicStatus struct {
	Topic     string `json:"name"`
	Connector string `json:"connector"`
	Task      int    `json:"task"`
	Discover  int64  `json:"discoverTimestamp"`
}

type topicValue struct {
	Topic TopicStatus `json:"topic"`
}

// recordSender writes one record and waits for its acknowledgement (*Log).
type recordSender interface {
	Send(key string, value []byte) (int32, int64, error)
}

// StatusStore reads and writes the status topic.
//
// Connector and task records are fenced by the group generation they were written in: a record older than
// the one held is ignored when read, and a worker does not write one (whoever wrote the newer record, itself
// included). An evicted worker's late RUNNING or UNASSIGNED therefore never hides the new owner's state,
// whatever order the writes reach the topic in. The JVM's putSafe only fences UNASSIGNED, and only against
// other workers' records.
type StatusStore struct {
	log recordSender

	mu         sync.RWMutex
	connectors map[string]*entry
	tasks      map[state.TaskID]*entry
	topics     map[string]map[string]TopicStatus // connector -> topic -> record
}

// entry is a held status; superseded records no longer fence (they predate a restart of the group's
// generations, see SupersedeAbove).
type entry struct {
	st         Status
	superseded bool
}

// fences says whether e keeps out a record of generation gen.
func (e *entry) fences(gen int32) bool {
	return e != nil && !e.superseded && gen < e.st.Generation
}

// NewStatusStore returns an empty store; pass Apply as the log's apply function and SetLog the log.
func NewStatusStore() *StatusStore {
	return &StatusStore{connectors: map[string]*entry{}, tasks: map[state.TaskID]*entry{}, topics: map[string]map[string]TopicStatus{}}
}

// SetLog attaches the log used for writes.
func (s *StatusStore) SetLog(l *Log) { s.log = l }

// SupersedeAbove is called with the generation of each assignment this worker receives. A held record of a
// later generation cannot come from the current group (the group cannot move past a generation without this
// member): the group was recreated and its generations started again (all workers were gone long enough for
// the coordinator to drop it). Such records stop fencing, so that the new generations' states show.
func (s *StatusStore) SupersedeAbove(generation int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.connectors {
		if e.st.Generation > generation {
			e.superseded = true
		}
	}
	for _, e := range s.tasks {
		if e.st.Generation > generation {
			e.superseded = true
		}
	}
}

// Apply consumes one status-topic record.
func (s *StatusStore) Apply(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case strings.HasPrefix(r.Key, StatusConnectorPrefix):
		name := r.Key[len(StatusConnectorPrefix):]
		if r.Value == nil {
			delete(s.connectors, name)
			return
		}
		var st Status
		if json.Unmarshal(r.Value, &st) == nil && !s.connectors[name].fences(st.Generation) {
			s.connectors[name] = &entry{st: st}
		}
	case strings.HasPrefix(r.Key, StatusTaskPrefix):
		id, ok := parseTaskKey(r.Key[len(StatusTaskPrefix):])
		if !ok {
			return
		}
		if r.Value == nil {
			delete(s.tasks, id)
			return
		}
		var st Status
		if json.Unmarshal(r.Value, &st) == nil && !s.tasks[id].fences(st.Generation) {
			s.tasks[id] = &entry{st: st}
		}
	case strings.HasPrefix(r.Key, StatusTopicPrefix):
		// status-topic-<topic>:connector-<connector>
		rest := r.Key[len(StatusTopicPrefix):]
		i := strings.Index(rest, ":connector-")
		if i < 0 {
			return
		}
		topic, conn := rest[:i], rest[i+len(":connector-"):]
		if r.Value == nil {
			if m := s.topics[conn]; m != nil {
				delete(m, topic)
			}
			return
		}
		var v topicValue
		if json.Unmarshal(r.Value, &v) != nil {
			return
		}
		if s.topics[conn] == nil {
			s.topics[conn] = map[string]TopicStatus{}
		}
		s.topics[conn][topic] = v.Topic
	}
}

func statusValue(st Status) []byte {
	if st.State == state.Destroyed {
		return nil
	}
	return mustJSON(st)
}

// writable is the write rule: never over a record of a later generation (see StatusStore); a safe write (the
// JVM's putSafe, used for UNASSIGNED) also never over another worker's record of the same generation.
func writable(prev *entry, st Status, safeWrite bool) bool {
	if st.State == state.Destroyed || prev == nil || prev.superseded {
		return true
	}
	if st.Generation < prev.st.Generation {
		return false
	}
	return !safeWrite || prev.st.WorkerID == st.WorkerID || st.Generation > prev.st.Generation
}

func (s *StatusStore) writableConnector(name string, st Status, safeWrite bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return writable(s.connectors[name], st, safeWrite)
}

func (s *StatusStore) writableTask(id state.TaskID, st Status, safeWrite bool) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return writable(s.tasks[id], st, safeWrite)
}

// PutConnector writes a connector status (DESTROYED = tombstone) unless a later generation's record is held;
// safeWrite is the JVM's putSafe (UNASSIGNED).
func (s *StatusStore) PutConnector(name string, st Status, safeWrite bool) error {
	if !s.writableConnector(name, st, safeWrite) {
		return nil
	}
	_, _, err := s.log.Send(StatusConnectorPrefix+name, statusValue(st))
	if err == nil {
		s.applyLocal(StatusConnectorPrefix+name, st)
	}
	return err
}

// PutTask writes a task status under the same rules as PutConnector.
func (s *StatusStore) PutTask(id state.TaskID, st Status, safeWrite bool) error {
	if !s.writableTask(id, st, safeWrite) {
		return nil
	}
	key := fmt.Sprintf("%s%s-%d", StatusTaskPrefix, id.Connector, id.Task)
	_, _, err := s.log.Send(key, statusValue(st))
	if err == nil {
		s.applyLocal(key, st)
	}
	return err
}

// applyLocal makes our own write visible at once (the log will replay the same value).
func (s *StatusStore) applyLocal(key string, st Status) {
	s.Apply(Record{Key: key, Value: statusValue(st)})
}

// PutTopic records that a connector's task consumes from a topic.
func (s *StatusStore) PutTopic(connector, topic string, task int, now time.Time) error {
	s.mu.RLock()
	_, known := s.topics[connector][topic]
	s.mu.RUnlock()
	if known {
		return nil
	}
	key := StatusTopicPrefix + topic + ":connector-" + connector
	v := mustJSON(topicValue{TopicStatus{Topic: topic, Connector: connector, Task: task, Discover: now.UnixMilli()}})
	if _, _, err := s.log.Send(key, v); err != nil {
		return err
	}
	s.Apply(Record{Key: key, Value: v})
	return nil
}

// DeleteTopics writes tombstones for all of a connector's topic records (PUT /connectors/{n}/topics/reset).
func (s *StatusStore) DeleteTopics(connector string) error {
	for _, t := range s.Topics(connector) {
		key := StatusTopicPrefix + t + ":connector-" + connector
		if _, _, err := s.log.Send(key, nil); err != nil {
			return err
		}
		s.Apply(Record{Key: key})
	}
	return nil
}

// Connector returns a connector's status, nil if unknown.
func (s *StatusStore) Connector(name string) *Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.connectors[name]; e != nil {
		c := e.st
		return &c
	}
	return nil
}

// Task returns a task's status, nil if unknown.
func (s *StatusStore) Task(id state.TaskID) *Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.tasks[id]; e != nil {
		c := e.st
		return &c
	}
	return nil
}

// Tasks returns the statuses of a connector's tasks by task number.
func (s *StatusStore) Tasks(connector string) map[int]Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[int]Status{}
	for id, e := range s.tasks {
		if id.Connector == connector {
			out[id.Task] = e.st
		}
	}
	return out
}

// Topics returns a connector's active topics, sorted.
func (s *StatusStore) Topics(connector string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []string{}
	for t := range s.topics[connector] {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
