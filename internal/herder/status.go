package herder

import (
	"sort"
	"sync"

	"github.com/connectd/connectd/internal/state"
)

// StatusTracker keeps the latest connector and task states and active topics in memory. It is the
// worker's state.Listener in standalone mode; a persisting store can wrap it (OnChange).
type StatusTracker struct {
	workerID string
	// OnChange, if set, is called after every change (outside the lock), e.g. to persist it.
	OnConnectorChange func(name string, s AbstractState)
	OnTaskChange      func(id ConnectorTaskID, s AbstractState)
	OnTopic           func(connector, topic string, task int)

	mu         sync.Mutex
	versions   PluginVersions
	connectors map[string]AbstractState
	tasks      map[ConnectorTaskID]AbstractState
	topics     map[string]map[string]bool
}

// NewStatusTracker creates a tracker reporting workerID for local changes.
func NewStatusTracker(workerID string) *StatusTracker {
	return &StatusTracker{workerID: workerID, connectors: map[string]AbstractState{},
		tasks: map[ConnectorTaskID]AbstractState{}, topics: map[string]map[string]bool{}}
}

// PluginVersions tells which version a connector or task instance running here reports (the worker).
type PluginVersions interface {
	ConnectorVersion(name string) *string
	TaskVersion(id state.TaskID) *string
}

// statusVersion is the version a status written by this worker carries, as the JVM herder's listener asks
// its Worker: the running instance's version(), unknown (null) when it runs none. UNASSIGNED and DESTROYED
// are reported once the instance is gone, so the JVM writes them with a null version.
func statusVersion(st state.State, lookup func() *string) PluginVersion {
	if st == StateUnassigned || st == StateDestroyed || lookup == nil {
		return PluginVersion{}
	}
	return VersionPtr(lookup())
}

// SetVersions attaches the source of plugin versions (the worker); without one, versions are unknown.
func (s *StatusTracker) SetVersions(v PluginVersions) {
	s.mu.Lock()
	s.versions = v
	s.mu.Unlock()
}

func (s *StatusTracker) lookup(f func(PluginVersions) *string) func() *string {
	s.mu.Lock()
	v := s.versions
	s.mu.Unlock()
	if v == nil {
		return nil
	}
	return func() *string { return f(v) }
}

func (s *StatusTracker) ConnectorState(name string, st state.State, trace string) {
	as := AbstractState{State: st, WorkerID: s.workerID, Trace: trace,
		Version: statusVersion(st, s.lookup(func(v PluginVersions) *string { return v.ConnectorVersion(name) }))}
	s.PutConnector(name, as)
	if s.OnConnectorChange != nil {
		s.OnConnectorChange(name, as)
	}
}

func (s *StatusTracker) TaskState(id state.TaskID, st state.State, trace string) {
	as := AbstractState{State: st, WorkerID: s.workerID, Trace: trace,
		Version: statusVersion(st, s.lookup(func(v PluginVersions) *string { return v.TaskVersion(id) }))}
	s.PutTask(id, as)
	if s.OnTaskChange != nil {
		s.OnTaskChange(id, as)
	}
}

func (s *StatusTracker) TopicActive(connector, topic string, task int) {
	s.mu.Lock()
	if s.topics[connector] == nil {
		s.topics[connector] = map[string]bool{}
	}
	s.topics[connector][topic] = true
	s.mu.Unlock()
	if s.OnTopic != nil {
		s.OnTopic(connector, topic, task)
	}
}

// PutConnector sets a connector state (also used to apply states read from a status topic).
func (s *StatusTracker) PutConnector(name string, as AbstractState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if as.State == StateDestroyed {
		delete(s.connectors, name)
		return
	}
	s.connectors[name] = as
}

// PutTask sets a task state.
func (s *StatusTracker) PutTask(id ConnectorTaskID, as AbstractState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if as.State == StateDestroyed {
		delete(s.tasks, id)
		return
	}
	s.tasks[id] = as
}

// Forget drops everything known about a deleted connector.
func (s *StatusTracker) Forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.connectors, name)
	delete(s.topics, name)
	for id := range s.tasks {
		if id.Connector == name {
			delete(s.tasks, id)
		}
	}
}

// ConnectorStateInfo builds the status body; tasks beyond ntasks (stale) are left out, missing ones are
// UNASSIGNED.
func (s *StatusTracker) ConnectorStateInfo(name string, ntasks int) (*ConnectorStateInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.connectors[name]
	if !ok {
		cs = AbstractState{State: StateUnassigned, WorkerID: s.workerID}
	}
	info := &ConnectorStateInfo{Name: name, Connector: cs, Tasks: []TaskState{}, Type: "sink"}
	for i := 0; i < ntasks; i++ {
		ts, ok := s.tasks[ConnectorTaskID{Connector: name, Task: i}]
		if !ok {
			ts = AbstractState{State: StateUnassigned, WorkerID: s.workerID}
		}
		info.Tasks = append(info.Tasks, TaskState{ID: i, AbstractState: ts})
	}
	return info, nil
}

// Task returns one task's state.
func (s *StatusTracker) Task(id ConnectorTaskID) (TaskState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, ok := s.tasks[id]
	return TaskState{ID: id.Task, AbstractState: ts}, ok
}

// ActiveTopics lists the topics a connector has consumed from since the last reset, sorted.
func (s *StatusTracker) ActiveTopics(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for t := range s.topics[name] {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ResetTopics forgets a connector's active topics.
func (s *StatusTracker) ResetTopics(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.topics, name)
}
