// Package state holds the small vocabulary shared by the herders and the worker (target states, reported
// states, task ids) so that the worker does not depend on the herder.
package state

import "fmt"

// Target is what the user asked a connector to be (config topic `state.v2`).
type Target string

const (
	Started Target = "STARTED"
	Paused  Target = "PAUSED"
	Stopped Target = "STOPPED"
)

// State is a reported connector or task state.
type State string

const (
	Unassigned State = "UNASSIGNED"
	Running    State = "RUNNING"
	PausedS    State = "PAUSED"
	Failed     State = "FAILED"
	Restarting State = "RESTARTING"
	StoppedS   State = "STOPPED"
	Destroyed  State = "DESTROYED"
)

// TaskID names a task, JSON as {"connector":"n","task":0}.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func (id TaskID) String() string { return fmt.Sprintf("%s-%d", id.Connector, id.Task) }

// Listener receives status changes from the worker (the herder persists and serves them).
type Listener interface {
	ConnectorState(name string, s State, trace string)
	TaskState(id TaskID, s State, trace string)
}

// TopicListener is told when a connector's task first consumes from a topic (topic tracking, KIP-558).
type TopicListener interface {
	TopicActive(connector, topic string, task int)
}
