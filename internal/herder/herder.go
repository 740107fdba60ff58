// Package herder holds the cluster state machine seam: what connectors exist, their configs, target states,
// task configs and statuses. The REST layer talks only to the Herder interface; the standalone herder keeps
// state in memory, the distributed herder in the JVM-format internal topics. The herder decides, the worker runs.
package herder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/connectd/connectd/internal/state"
)

// TargetState is what the user asked a connector to be (config topic `state.v2`).
type TargetState = state.Target

const (
	TargetStarted = state.Started
	TargetPaused  = state.Paused
	TargetStopped = state.Stopped
)

// State is a reported connector or task state.
type State = state.State

const (
	StateUnassigned = state.Unassigned
	StateRunning    = state.Running
	StatePaused     = state.PausedS
	StateFailed     = state.Failed
	StateRestarting = state.Restarting
	StateStopped    = state.StoppedS
	StateDestroyed  = state.Destroyed
)

// ConnectorTaskID names a task, JSON as {"connector":"n","task":0}.
type ConnectorTaskID = state.TaskID

// ConnectorInfo is the JVM's ConnectorInfo body.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []ConnectorTaskID `json:"tasks"`
	Type   string            `json:"type"`
}

// AbstractState is the state of a connector or task in status bodies.
type AbstractState struct {
	State    State  `json:"state"`
	WorkerID string `json:"worker_id"`
	// Version is the running plugin's version() (KIP-891, JVM 4.1+): null when unknown, e.g. UNASSIGNED.
	Version PluginVersion `json:"version,omitzero"`
	Trace   string        `json:"trace,omitempty"` // after version, in the JVM's order
}

// undefinedPluginVersion is the JVM's PluginDesc.UNDEFINED_VERSION, which its NoVersionFilter leaves out.
const undefinedPluginVersion = "undefined"

// PluginVersion is the "version" of a connector or task status. Like the JVM's ConnectorStateInfo (Jackson
// JsonInclude.CUSTOM with PluginInfo.NoVersionFilter) it is written as null when unknown (the zero value),
// as a string otherwise, and left out only when it is "undefined".
type PluginVersion struct{ v *string }

// VersionOf returns a known version.
func VersionOf(v string) PluginVersion { return PluginVersion{v: &v} }

// VersionPtr converts a nil-able version (nil = unknown).
func VersionPtr(v *string) PluginVersion {
	if v == nil {
		return PluginVersion{}
	}
	return VersionOf(*v)
}

// Get returns the version and whether it is known.
func (p PluginVersion) Get() (string, bool) {
	if p.v == nil {
		return "", false
	}
	return *p.v, true
}

// Ptr returns the version as a nil-able string (nil = unknown).
func (p PluginVersion) Ptr() *string {
	if p.v == nil {
		return nil
	}
	v := *p.v
	return &v
}

// IsZero reports whether the field is left out of JSON (omitzero): only for "undefined".
func (p PluginVersion) IsZero() bool { return p.v != nil && *p.v == undefinedPluginVersion }

func (p PluginVersion) MarshalJSON() ([]byte, error) {
	if p.v == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*p.v)
}

func (p *PluginVersion) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		p.v = nil
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.v = &v
	return nil
}

func (p PluginVersion) String() string {
	if p.v == nil {
		return "<nil>"
	}
	return *p.v
}

// TaskState is one task's status.
type TaskState struct {
	ID int `json:"id"`
	AbstractState
}

// ConnectorStateInfo is the JVM's ConnectorStateInfo body.
type ConnectorStateInfo struct {
	Name      string        `json:"name"`
	Connector AbstractState `json:"connector"`
	Tasks     []TaskState   `json:"tasks"`
	Type      string        `json:"type"`
}

// TaskInfo is one element of GET /connectors/{n}/tasks.
type TaskInfo struct {
	ID     ConnectorTaskID   `json:"id"`
	Config map[string]string `json:"config"`
}

// RestartRequest is POST /connectors/{n}/restart's flags.
type RestartRequest struct {
	Connector    string
	IncludeTasks bool
	OnlyFailed   bool
}

// ConnectorOffset is one entry of the offsets body: partition {"kafka_topic","kafka_partition"} and offset
// {"kafka_offset"} (null offset = reset, in PATCH).
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// ConnectorOffsets is the body of GET/PATCH /connectors/{n}/offsets.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// ConfigInfos is the body of config/validate.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// ConfigInfo pairs a key definition with its validated value.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigKeyInfo is the JVM's ConfigKeyInfo (also the body of GET /connector-plugins/{p}/config).
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	OrderInGroup  int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// ConfigValueInfo is the JVM's ConfigValueInfo.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// PluginInfo is one element of GET /connector-plugins.
type PluginInfo struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

// Herder is everything the REST layer may ask of the cluster. Methods block until the change is accepted
// (standalone: applied; distributed: written to the config topic and read back) or ctx ends.
type Herder interface {
	// Connectors lists connector names, sorted.
	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (*ConnectorInfo, error)
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	// PutConnectorConfig creates (created=true) or replaces a connector config. initial applies only on create.
	PutConnectorConfig(ctx context.Context, name string, config map[string]string, initial TargetState, allowReplace bool) (info *ConnectorInfo, created bool, err error)
	// PatchConnectorConfig merges patch into the config; a nil value deletes the key.
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*ConnectorInfo, error)
	DeleteConnector(ctx context.Context, name string) error
	ConnectorStatus(ctx context.Context, name string) (*ConnectorStateInfo, error)
	TaskStatus(ctx context.Context, id ConnectorTaskID) (*TaskState, error)
	TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error)
	// RestartConnector restarts the connector instance only (no flags: 204).
	RestartConnector(ctx context.Context, name string) error
	// RestartConnectorAndTasks handles the flagged restart (202 with the planned states).
	RestartConnectorAndTasks(ctx context.Context, req RestartRequest) (*ConnectorStateInfo, error)
	RestartTask(ctx context.Context, id ConnectorTaskID) error
	PauseConnector(ctx context.Context, name string) error
	ResumeConnector(ctx context.Context, name string) error
	StopConnector(ctx context.Context, name string) error
	// ConnectorActiveTopics is GET /connectors/{n}/topics (nil map entry when unknown).
	ConnectorActiveTopics(ctx context.Context, name string) ([]string, error)
	ResetConnectorActiveTopics(ctx context.Context, name string) error
	ConnectorOffsets(ctx context.Context, name string) (*ConnectorOffsets, error)
	// AlterConnectorOffsets / ResetConnectorOffsets return the REST message.
	AlterConnectorOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error)
	ResetConnectorOffsets(ctx context.Context, name string) (string, error)
	// ValidateConnectorConfig validates without creating (PUT /connector-plugins/{p}/config/validate).
	ValidateConnectorConfig(ctx context.Context, config map[string]string) (*ConfigInfos, error)
	// Healthy returns nil when the herder finished startup and answers requests.
	Healthy(ctx context.Context) error
	// KafkaClusterID is shown by GET /.
	KafkaClusterID() string
}

// Error kinds the REST layer maps to status codes; wrap them with fmt.Errorf("...: %w") or use the types.
var (
	ErrNotFound      = errors.New("not found")        // 404
	ErrAlreadyExists = errors.New("already exists")   // 409
	ErrBadRequest    = errors.New("bad request")      // 400
	ErrConflict      = errors.New("conflict")         // 409
	ErrForbidden     = errors.New("forbidden")        // 403
	ErrNotReady      = errors.New("not ready")        // 503
	ErrRebalancing   = errors.New("rebalance needed") // 409 or 500 (GETs)
)

// RestError carries an exact status and message for the JVM's error body {"error_code","message"}.
type RestError struct {
	Status  int
	Message string
	Kind    error // one of the Err* kinds, for errors.Is
}

func (e *RestError) Error() string { return e.Message }
func (e *RestError) Unwrap() error { return e.Kind }

// NotFound builds a 404 with the JVM's message.
func NotFound(format string, args ...any) error {
	return &RestError{Status: 404, Message: fmt.Sprintf(format, args...), Kind: ErrNotFound}
}

// BadRequest builds a 400.
func BadRequest(format string, args ...any) error {
	return &RestError{Status: 400, Message: fmt.Sprintf(format, args...), Kind: ErrBadRequest}
}

// AlreadyExists builds a 409.
func AlreadyExists(format string, args ...any) error {
	return &RestError{Status: 409, Message: fmt.Sprintf(format, args...), Kind: ErrAlreadyExists}
}

// Conflict builds a 409.
func Conflict(format string, args ...any) error {
	return &RestError{Status: 409, Message: fmt.Sprintf(format, args...), Kind: ErrConflict}
}

// Forbidden builds a 403.
func Forbidden(format string, args ...any) error {
	return &RestError{Status: 403, Message: fmt.Sprintf(format, args...), Kind: ErrForbidden}
}

// NotLeaderError asks the REST layer to forward the request to the leader's URL (distributed mode).
type NotLeaderError struct{ LeaderURL string }

func (e *NotLeaderError) Error() string {
	return "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
}

// LeaderAwaiter is implemented by a herder in a group (distributed mode): when the leader a request was
// forwarded to refuses connections (its process is gone), the REST layer waits for its successor instead of
// failing the request.
type LeaderAwaiter interface {
	// AwaitLeaderChange waits until the group's leader is another than the one at url and returns whether
	// this worker now leads and the leader's URL; leaderURL is "" when ctx ended first.
	AwaitLeaderChange(ctx context.Context, url string) (self bool, leaderURL string)
}

// Optional interfaces a Herder may implement; the REST layer checks for them with a type assertion.

// TaskConfigPutter accepts task configs sent by another worker (internal POST /connectors/{n}/tasks). Only the
// distributed herder implements it; without it the REST layer answers 500 like the JVM's standalone herder.
// Return *NotLeaderError when this worker is not the leader.
type TaskConfigPutter interface {
	PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error
}

// SessionKeySource gives the REST layer what it needs to verify internal request signatures
// (X-Connect-Authorization, HMAC over the raw body). required=false (connect.protocol below sessioned) turns the
// check off; key is nil until a session key was read from the config topic; algorithms are the accepted
// verification algorithms (inter.worker.verification.algorithms, e.g. ["HmacSHA256"]).
type SessionKeySource interface {
	SessionKey() (key []byte, algorithms []string, required bool)
}

// ClusterLoggerSetter writes a cluster-wide logger level (PUT /admin/loggers/{l}?scope=cluster), i.e. the
// `logger-cluster-<ns>` config-topic record. Without it the level is applied to this worker only (standalone).
type ClusterLoggerSetter interface {
	SetClusterLoggerLevel(ctx context.Context, namespace, level string) error
}

// StageReporter describes what the herder thread is doing, for the JVM's timeout messages
// ("Request timed out. The worker is currently <description>, which began at <started>.").
// completed is zero while the stage runs. ok=false when nothing is known.
type StageReporter interface {
	CurrentStage() (description string, started, completed time.Time, ok bool)
}
