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

// StatusStore reads and writes the status topic.
type StatusStore struct {
	log *Log

	mu         sync.RWMutex
	connectors map[string]*Status
	tasks      map[state.TaskID]*Status
	topics     map[string]map[string]TopicStatus // connector -> topic -> record
}

// NewStatusStore returns an empty store; pass Apply as the log's apply function and SetLog the log.
func NewStatusStore() *StatusStore {
	return &StatusStore{connectors: map[string]*Status{}, tasks: map[state.TaskID]*Status{}, topics: map[string]map[string]TopicStatus{}}
}

// SetLog attaches the log used for writes.
func (s *StatusStore) SetLog(l *Log) { s.log = l }

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
		if json.Unmarshal(r.Value, &st) == nil {
			s.connectors[name] = &st
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
		if json.Unmarshal(r.Value, &st) == nil {
			s.tasks[id] = &st
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

// safe is the JVM's putSafe rule: write only if there is no previous value, the same worker wrote it, or the
// new generation is at least the previous one.
func safe(prev *Status, st Status) bool {
	return prev == nil || prev.WorkerID == st.WorkerID || st.Generation >= prev.Generation
}

// PutConnector writes a connector status (DESTROYED = tombstone); safe applies the generation rule.
func (s *StatusStore) PutConnector(name string, st Status, safeWrite bool) error {
	s.mu.RLock()
	prev := s.connectors[name]
	s.mu.RUnlock()
	if safeWrite && !safe(prev, st) {
		return nil
	}
	_, _, err := s.log.Send(StatusConnectorPrefix+name, statusValue(st))
	if err == nil {
		s.applyLocal(StatusConnectorPrefix+name, st)
	}
	return err
}

// PutTask writes a task status.
func (s *StatusStore) PutTask(id state.TaskID, st Status, safeWrite bool) error {
	s.mu.RLock()
	prev := s.tasks[id]
	s.mu.RUnlock()
	if safeWrite && !safe(prev, st) {
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
	if st := s.connectors[name]; st != nil {
		c := *st
		return &c
	}
	return nil
}

// Task returns a task's status, nil if unknown.
func (s *StatusStore) Task(id state.TaskID) *Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if st := s.tasks[id]; st != nil {
		c := *st
		return &c
	}
	return nil
}

// Tasks returns the statuses of a connector's tasks by task number.
func (s *StatusStore) Tasks(connector string) map[int]Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[int]Status{}
	for id, st := range s.tasks {
		if id.Connector == connector {
			out[id.Task] = *st
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
