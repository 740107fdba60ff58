package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/state"
)

// Config-topic key prefixes, exactly the JVM's (KafkaConfigBackingStore).
const (
	ConnectorPrefix   = "connector-"
	TaskPrefix        = "task-"
	CommitPrefix      = "commit-"
	TargetStatePrefix = "target-state-"
	RestartPrefix     = "restart-connector-"
	SessionKeyKey     = "session-key"
	LoggerPrefix      = "logger-cluster-"
	FencingPrefix     = "tasks-fencing-"
)

// RestartRequest is a `restart-connector-<n>` record.
type RestartRequest struct {
	Connector    string
	IncludeTasks bool
	OnlyFailed   bool
}

// SessionKey is the `session-key` record.
type SessionKey struct {
	Key       []byte
	Algorithm string
	Created   time.Time
}

// Snapshot is a consistent view of the config topic (the JVM's ClusterConfigState).
type Snapshot struct {
	Offset       int64 // next offset to read
	Connectors   map[string]map[string]string
	TargetStates map[string]state.Target
	TaskConfigs  map[state.TaskID]map[string]string
	TaskCounts   map[string]int
	// Inconsistent connectors have task records without a matching commit; they get no tasks until fixed.
	Inconsistent map[string]bool
	SessionKey   *SessionKey
}

// ConnectorNames returns the connector names, sorted.
func (s *Snapshot) ConnectorNames() []string {
	out := make([]string, 0, len(s.Connectors))
	for n := range s.Connectors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TargetState is a connector's target state (absent record = STARTED).
func (s *Snapshot) TargetState(name string) state.Target {
	if t, ok := s.TargetStates[name]; ok {
		return t
	}
	return state.Started
}

// Tasks returns the committed task configs of a connector in task order.
func (s *Snapshot) Tasks(name string) []map[string]string {
	n := s.TaskCounts[name]
	out := make([]map[string]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s.TaskConfigs[state.TaskID{Connector: name, Task: i}])
	}
	return out
}

// ConfigListener hears about config-topic changes as they are read (from the log's goroutine).
type ConfigListener interface {
	ConnectorConfigUpdated(name string, removed bool)
	TaskConfigsUpdated(name string, count int)
	TargetStateChanged(name string)
	RestartRequested(r RestartRequest)
	SessionKeyUpdated(k SessionKey)
}

// LoggerLevelListener is implemented by config listeners that apply cluster-wide logger levels
// (`logger-cluster-<ns>` records, PUT /admin/loggers/{ns}?scope=cluster).
type LoggerLevelListener interface {
	LoggingLevelUpdated(namespace, level string)
}

// ConfigStore is the config topic's reader and writer.
type ConfigStore struct {
	log      *Log
	listener ConfigListener
	// taskWrites serializes task-config writes, so that two sets for one connector never interleave
	// (the leader writes for forwards arriving concurrently on REST goroutines and for its own connectors).
	taskWrites sync.Mutex

	mu           sync.RWMutex
	offset       int64
	connectors   map[string]map[string]string
	targets      map[string]state.Target
	tasks        map[state.TaskID]map[string]string
	counts       map[string]int
	deferred     map[string]map[int]map[string]string
	inconsistent map[string]bool
	sessionKey   *SessionKey
	started      bool
}

// NewConfigStore wires a store to a log; pass the store's Apply as the log's apply function.
func NewConfigStore(listener ConfigListener) *ConfigStore {
	return &ConfigStore{listener: listener, offset: -1, connectors: map[string]map[string]string{},
		targets: map[string]state.Target{}, tasks: map[state.TaskID]map[string]string{}, counts: map[string]int{},
		deferred: map[string]map[int]map[string]string{}, inconsistent: map[string]bool{}}
}

// SetLog attaches the log used for writes.
func (s *ConfigStore) SetLog(l *Log) { s.log = l }

// MarkStarted ends replay: restart requests read before it are ignored, as the JVM ignores them at startup.
func (s *ConfigStore) MarkStarted() {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
}

// Offset is the next config-topic offset to read (-1 when nothing was read yet).
func (s *ConfigStore) Offset() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.offset
}

// Snapshot copies the current state.
func (s *ConfigStore) Snapshot() *Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap := &Snapshot{Offset: s.offset, Connectors: map[string]map[string]string{}, TargetStates: map[string]state.Target{},
		TaskConfigs: map[state.TaskID]map[string]string{}, TaskCounts: map[string]int{}, Inconsistent: map[string]bool{}}
	for k, v := range s.connectors {
		snap.Connectors[k] = copyMap(v)
	}
	for k, v := range s.targets {
		snap.TargetStates[k] = v
	}
	for k, v := range s.tasks {
		snap.TaskConfigs[k] = copyMap(v)
	}
	for k, v := range s.counts {
		snap.TaskCounts[k] = v
	}
	for k := range s.inconsistent {
		snap.Inconsistent[k] = true
	}
	if s.sessionKey != nil {
		k := *s.sessionKey
		snap.SessionKey = &k
	}
	return snap
}

// SessionKey is the current session key (nil if none), without copying the whole state.
func (s *ConfigStore) SessionKey() *SessionKey {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.sessionKey == nil {
		return nil
	}
	k := *s.sessionKey
	return &k
}

// Connector is one connector's config (a copy) and committed task count, without copying the whole state
// as Snapshot does (REST listings ask for every connector in turn).
func (s *ConfigStore) Connector(name string) (props map[string]string, tasks int, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.connectors[name]
	if !ok {
		return nil, 0, false
	}
	return copyMap(c), s.counts[name], true
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

type propsValue struct {
	Properties map[string]string `json:"properties"`
}

type commitValue struct {
	Tasks int `json:"tasks"`
}

type targetValue struct {
	State   string `json:"state"`
	StateV2 string `json:"state.v2,omitempty"`
}

type restartValue struct {
	IncludeTasks bool `json:"include-tasks"`
	OnlyFailed   bool `json:"only-failed"`
}

type sessionKeyValue struct {
	Key       string `json:"key"`
	Algorithm string `json:"algorithm"`
	Created   int64  `json:"creation-timestamp"`
}

// parseTaskKey splits `task-<connector>-<n>` at the last '-' as the JVM's String.split does (trailing '-'
// ignored), with n an int.
func parseTaskKey(rest string) (state.TaskID, bool) {
	rest = strings.TrimRight(rest, "-")
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return state.TaskID{}, false
	}
	n, err := strconv.ParseInt(rest[i+1:], 10, 32)
	if err != nil {
		return state.TaskID{}, false
	}
	return state.TaskID{Connector: rest[:i], Task: int(n)}, true
}

// Apply consumes one config-topic record (the log's apply function).
func (s *ConfigStore) Apply(r Record) {
	var notify func()
	s.mu.Lock()
	s.offset = r.Offset + 1
	key := r.Key
	switch {
	case strings.HasPrefix(key, ConnectorPrefix):
		name := key[len(ConnectorPrefix):]
		if r.Value == nil {
			delete(s.connectors, name)
			delete(s.targets, name)
			for id := range s.tasks {
				if id.Connector == name {
					delete(s.tasks, id)
				}
			}
			delete(s.counts, name)
			delete(s.deferred, name)
			delete(s.inconsistent, name)
			notify = func() { s.listener.ConnectorConfigUpdated(name, true) }
			break
		}
		var v propsValue
		if json.Unmarshal(r.Value, &v) != nil || v.Properties == nil {
			break
		}
		s.connectors[name] = v.Properties
		notify = func() { s.listener.ConnectorConfigUpdated(name, false) }
	case strings.HasPrefix(key, TaskPrefix):
		id, ok := parseTaskKey(key[len(TaskPrefix):])
		if !ok || r.Value == nil {
			break
		}
		var v propsValue
		if json.Unmarshal(r.Value, &v) != nil || v.Properties == nil {
			break
		}
		if s.deferred[id.Connector] == nil {
			s.deferred[id.Connector] = map[int]map[string]string{}
		}
		s.deferred[id.Connector][id.Task] = v.Properties
	case strings.HasPrefix(key, CommitPrefix):
		name := key[len(CommitPrefix):]
		var v commitValue
		if r.Value == nil || json.Unmarshal(r.Value, &v) != nil || v.Tasks < 0 {
			break
		}
		d := s.deferred[name]
		complete := true
		for i := 0; i < v.Tasks && complete; i++ {
			if _, ok := d[i]; !ok {
				if _, had := s.tasks[state.TaskID{Connector: name, Task: i}]; !had {
					complete = false
				}
			}
		}
		if !complete {
			s.inconsistent[name] = true
		} else {
			for id := range s.tasks {
				if id.Connector == name && id.Task >= v.Tasks {
					delete(s.tasks, id)
				}
			}
			for i, p := range d {
				if i < v.Tasks {
					s.tasks[state.TaskID{Connector: name, Task: i}] = p
				}
			}
			s.counts[name] = v.Tasks
			delete(s.inconsistent, name)
		}
		delete(s.deferred, name)
		n := v.Tasks
		notify = func() { s.listener.TaskConfigsUpdated(name, n) }
	case strings.HasPrefix(key, TargetStatePrefix):
		name := key[len(TargetStatePrefix):]
		if r.Value == nil {
			delete(s.targets, name)
		} else {
			var v targetValue
			if json.Unmarshal(r.Value, &v) != nil {
				break
			}
			t := v.StateV2
			if t == "" {
				t = v.State
			}
			tg := state.Target(t)
			if tg != state.Started && tg != state.Paused && tg != state.Stopped {
				break // an unknown state is ignored, as the JVM does
			}
			s.targets[name] = tg
		}
		notify = func() { s.listener.TargetStateChanged(name) }
	case strings.HasPrefix(key, RestartPrefix):
		name := key[len(RestartPrefix):]
		var v restartValue
		if r.Value == nil || json.Unmarshal(r.Value, &v) != nil || !s.started {
			break
		}
		notify = func() {
			s.listener.RestartRequested(RestartRequest{Connector: name, IncludeTasks: v.IncludeTasks, OnlyFailed: v.OnlyFailed})
		}
	case strings.HasPrefix(key, LoggerPrefix):
		// as the JVM: only levels written after this worker started apply (older ones are history)
		ns := key[len(LoggerPrefix):]
		var v struct {
			Level string `json:"level"`
		}
		if r.Value == nil || json.Unmarshal(r.Value, &v) != nil || v.Level == "" || !s.started {
			break
		}
		if ll, ok := s.listener.(LoggerLevelListener); ok {
			notify = func() { ll.LoggingLevelUpdated(ns, v.Level) }
		}
	case key == SessionKeyKey:
		var v sessionKeyValue
		if r.Value == nil || json.Unmarshal(r.Value, &v) != nil {
			break
		}
		k, err := base64.StdEncoding.DecodeString(v.Key)
		if err != nil {
			break
		}
		sk := SessionKey{Key: k, Algorithm: v.Algorithm, Created: time.UnixMilli(v.Created)}
		s.sessionKey = &sk
		notify = func() { s.listener.SessionKeyUpdated(sk) }
	}
	s.mu.Unlock()
	if notify != nil && s.listener != nil {
		notify()
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TargetStateValue is the JSON of a `target-state-<n>` record: the legacy `state` writes STOPPED as PAUSED.
func TargetStateValue(t state.Target) []byte {
	legacy := t
	if t == state.Stopped {
		legacy = state.Paused
	}
	return mustJSON(targetValue{State: string(legacy), StateV2: string(t)})
}

// PutConnectorConfig writes `target-state-<n>` (when target is not empty) and then `connector-<n>`.
func (s *ConfigStore) PutConnectorConfig(name string, props map[string]string, target state.Target) error {
	var recs []Record
	if target != "" {
		recs = append(recs, Record{Key: TargetStatePrefix + name, Value: TargetStateValue(target)})
	}
	recs = append(recs, Record{Key: ConnectorPrefix + name, Value: mustJSON(propsValue{props})})
	return s.log.SendAll(recs)
}

// RemoveConnectorConfig writes the `connector-<n>` and `target-state-<n>` tombstones.
func (s *ConfigStore) RemoveConnectorConfig(name string) error {
	return s.log.SendAll([]Record{{Key: ConnectorPrefix + name}, {Key: TargetStatePrefix + name}})
}

// PutTaskConfigs writes every `task-<n>-<i>` then `commit-<n>` (leader only), in one batch, waiting for the
// acknowledgement until ctx ends.
func (s *ConfigStore) PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	s.taskWrites.Lock()
	defer s.taskWrites.Unlock()
	var recs []Record
	for i, c := range configs {
		recs = append(recs, Record{Key: fmt.Sprintf("%s%s-%d", TaskPrefix, name, i), Value: mustJSON(propsValue{c})})
	}
	recs = append(recs, Record{Key: CommitPrefix + name, Value: mustJSON(commitValue{len(configs)})})
	return s.log.SendAllContext(ctx, recs)
}

// PutTargetState writes `target-state-<n>` (any worker may).
func (s *ConfigStore) PutTargetState(name string, t state.Target) error {
	_, _, err := s.log.Send(TargetStatePrefix+name, TargetStateValue(t))
	return err
}

// PutRestartRequest writes `restart-connector-<n>` (leader only).
func (s *ConfigStore) PutRestartRequest(r RestartRequest) error {
	_, _, err := s.log.Send(RestartPrefix+r.Connector, mustJSON(restartValue{r.IncludeTasks, r.OnlyFailed}))
	return err
}

// PutSessionKey writes `session-key` (leader only).
func (s *ConfigStore) PutSessionKey(k SessionKey) error {
	_, _, err := s.log.Send(SessionKeyKey, mustJSON(sessionKeyValue{Key: base64.StdEncoding.EncodeToString(k.Key),
		Algorithm: k.Algorithm, Created: k.Created.UnixMilli()}))
	return err
}

// PutLoggerLevel writes `logger-cluster-<ns>` (any worker may).
func (s *ConfigStore) PutLoggerLevel(namespace, level string) error {
	_, _, err := s.log.Send(LoggerPrefix+namespace, mustJSON(map[string]string{"level": level}))
	return err
}
