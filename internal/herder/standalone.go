package herder

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"sync"

	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/worker"
)

// Standalone keeps cluster state in memory and runs everything on its one worker (connectd standalone and
// dev mode). Connector configs come from the command line or REST; offsets live in the consumer groups.
type Standalone struct {
	w         *worker.Worker
	validator *Validator

	mu         sync.Mutex
	connectors map[string]*standaloneConnector
	status     *StatusTracker
	clusterID  string
	ready      bool
}

type standaloneConnector struct {
	config      map[string]string
	target      TargetState
	taskConfigs []map[string]string
}

// NewStandalone creates a standalone herder. The worker must report states to StatusListener().
func NewStandalone(w *worker.Worker, status *StatusTracker) *Standalone {
	status.SetVersions(w)
	return &Standalone{
		w:          w,
		validator:  NewValidator(w),
		connectors: map[string]*standaloneConnector{},
		status:     status,
	}
}

// Start marks the herder ready (and reads the cluster id for GET /).
func (h *Standalone) Start(ctx context.Context) error {
	id, err := h.w.ClusterID()
	if err != nil {
		slog.Warn("could not read the Kafka cluster id", "error", err)
	}
	h.mu.Lock()
	h.clusterID, h.ready = id, true
	h.mu.Unlock()
	return nil
}

// Stop stops all connectors and tasks.
func (h *Standalone) Stop() { h.w.Stop() }

func (h *Standalone) KafkaClusterID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.clusterID
}

func (h *Standalone) Healthy(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.ready {
		return ErrNotReady
	}
	return nil
}

func (h *Standalone) Connectors(ctx context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.connectors))
	for n := range h.connectors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (h *Standalone) info(name string, c *standaloneConnector) *ConnectorInfo {
	info := &ConnectorInfo{Name: name, Config: maps.Clone(c.config), Tasks: []ConnectorTaskID{}, Type: "sink"}
	for i := range c.taskConfigs {
		info.Tasks = append(info.Tasks, ConnectorTaskID{Connector: name, Task: i})
	}
	return info
}

func (h *Standalone) get(name string) (*standaloneConnector, error) {
	c, ok := h.connectors[name]
	if !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	return c, nil
}

func (h *Standalone) ConnectorInfo(ctx context.Context, name string) (*ConnectorInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	return h.info(name, c), nil
}

func (h *Standalone) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	return maps.Clone(c.config), nil
}

func (h *Standalone) ValidateConnectorConfig(ctx context.Context, config map[string]string) (*ConfigInfos, error) {
	return validateResolved(h.w, h.validator, config)
}

func (h *Standalone) PutConnectorConfig(ctx context.Context, name string, config map[string]string, initial TargetState, allowReplace bool) (*ConnectorInfo, bool, error) {
	infos, err := validateResolved(h.w, h.validator, config)
	if err != nil {
		return nil, false, err
	}
	if err := ValidationError(infos); err != nil {
		return nil, false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	existing, exists := h.connectors[name]
	if exists && !allowReplace {
		return nil, false, AlreadyExists("Connector %s already exists", name)
	}
	target := TargetStarted
	if exists {
		target = existing.target
		h.stopConnectorLocked(name, existing)
	} else if initial != "" {
		target = initial
	}
	c := &standaloneConnector{config: maps.Clone(config), target: target}
	h.connectors[name] = c
	h.startConnectorLocked(name, c)
	return h.info(name, c), !exists, nil
}

func (h *Standalone) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*ConnectorInfo, error) {
	h.mu.Lock()
	c, err := h.get(name)
	if err != nil {
		h.mu.Unlock()
		return nil, err
	}
	merged := maps.Clone(c.config)
	h.mu.Unlock()
	for k, v := range patch {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = *v
		}
	}
	info, _, err := h.PutConnectorConfig(ctx, name, merged, "", true)
	return info, err
}

// startConnectorLocked starts the connector instance and its tasks according to the target state.
func (h *Standalone) startConnectorLocked(name string, c *standaloneConnector) {
	if err := pinError(h.w.Registry(), name, c.config); err != nil {
		slog.Error("connector failed to start", "connector", name, "error", err)
		h.status.ConnectorState(name, StateFailed, worker.Trace(err))
		return
	}
	if err := h.w.StartConnector(name, c.config, c.target, func() { h.reconfigure(name) }); err != nil {
		slog.Error("connector failed to start", "connector", name, "error", err)
		return
	}
	if c.target != TargetStarted {
		// StandaloneHerder.updateConnectorTasks: a connector created paused or stopped gets its tasks when resumed
		c.taskConfigs = nil
		return
	}
	h.generateAndStartTasksLocked(name, c)
}

func (h *Standalone) generateAndStartTasksLocked(name string, c *standaloneConnector) {
	cfgs, err := h.w.ConnectorTaskConfigs(name, TasksMax(c.config))
	if err != nil {
		h.status.ConnectorState(name, StateFailed, worker.Trace(err))
		return
	}
	c.taskConfigs = cfgs
	for i, tc := range cfgs {
		id := ConnectorTaskID{Connector: name, Task: i}
		if err := h.w.StartTask(id, c.config, tc, c.target); err != nil {
			slog.Error("task failed to start", "task", id.String(), "error", err)
		}
	}
}

func (h *Standalone) stopConnectorLocked(name string, c *standaloneConnector) {
	h.w.StopTasks(h.w.TasksOf(name))
	h.w.StopConnector(name)
}

// reconfigure regenerates task configs when the connector asks; tasks restart only if they changed.
func (h *Standalone) reconfigure(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok || c.target != TargetStarted {
		return
	}
	cfgs, err := h.w.ConnectorTaskConfigs(name, TasksMax(c.config))
	if err != nil || equalConfigs(cfgs, c.taskConfigs) {
		return
	}
	h.w.StopTasks(h.w.TasksOf(name))
	c.taskConfigs = cfgs
	for i, tc := range cfgs {
		_ = h.w.StartTask(ConnectorTaskID{Connector: name, Task: i}, c.config, tc, c.target)
	}
}

func equalConfigs(a, b []map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !maps.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func (h *Standalone) DeleteConnector(ctx context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return err
	}
	h.stopConnectorLocked(name, c)
	delete(h.connectors, name)
	h.status.Forget(name)
	return nil
}

func (h *Standalone) ConnectorStatus(ctx context.Context, name string) (*ConnectorStateInfo, error) {
	h.mu.Lock()
	c, ok := h.connectors[name]
	var ntasks int
	if ok {
		ntasks = len(c.taskConfigs)
	}
	h.mu.Unlock()
	if !ok {
		return nil, NotFound("No status found for connector %s", name)
	}
	return h.status.ConnectorStateInfo(name, ntasks)
}

func (h *Standalone) TaskStatus(ctx context.Context, id ConnectorTaskID) (*TaskState, error) {
	ts, ok := h.status.Task(id)
	if !ok {
		return nil, NotFound("No status found for task %s", id)
	}
	return &ts, nil
}

func (h *Standalone) TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, err := h.get(name)
	if err != nil {
		return nil, err
	}
	out := []TaskInfo{}
	for i, tc := range c.taskConfigs {
		out = append(out, TaskInfo{ID: ConnectorTaskID{Connector: name, Task: i}, Config: maps.Clone(tc)})
	}
	return out, nil
}

func (h *Standalone) RestartConnector(ctx context.Context, name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok {
		return NotFound("Unknown connector: %s", name)
	}
	h.w.StopConnector(name)
	if err := h.w.StartConnector(name, c.config, c.target, func() { h.reconfigure(name) }); err != nil {
		return fmt.Errorf("restarting connector %s: %w", name, err)
	}
	return nil
}

// RestartConnectorAndTasks answers with the plan (targets RESTARTING) and restarts them right away.
func (h *Standalone) RestartConnectorAndTasks(ctx context.Context, req RestartRequest) (*ConnectorStateInfo, error) {
	h.mu.Lock()
	c, ok := h.connectors[req.Connector]
	if !ok {
		h.mu.Unlock()
		return nil, NotFound("Unknown connector: %s", req.Connector)
	}
	ntasks := len(c.taskConfigs)
	h.mu.Unlock()
	cur, err := h.status.ConnectorStateInfo(req.Connector, ntasks)
	if err != nil {
		return nil, err
	}
	plan := *cur
	plan.Tasks = append([]TaskState(nil), cur.Tasks...)
	restartConn := !req.OnlyFailed || cur.Connector.State == StateFailed
	if restartConn {
		plan.Connector.State = StateRestarting
	}
	var restartTasks []ConnectorTaskID
	for i, t := range plan.Tasks {
		if req.IncludeTasks && (!req.OnlyFailed || t.State == StateFailed) {
			plan.Tasks[i].State = StateRestarting
			plan.Tasks[i].Trace = ""
			restartTasks = append(restartTasks, ConnectorTaskID{Connector: req.Connector, Task: t.ID})
		}
	}
	if restartConn {
		plan.Connector.Trace = ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if restartConn {
		h.status.ConnectorState(req.Connector, StateRestarting, "")
	}
	for _, id := range restartTasks {
		h.status.TaskState(id, StateRestarting, "")
	}
	if restartConn {
		h.w.StopConnector(req.Connector)
		if err := h.w.StartConnector(req.Connector, c.config, c.target, func() { h.reconfigure(req.Connector) }); err != nil {
			slog.Error("connector restart failed", "connector", req.Connector, "error", err)
		}
	}
	if len(restartTasks) > 0 {
		h.w.StopTasks(restartTasks)
		for _, id := range restartTasks {
			if id.Task < len(c.taskConfigs) {
				_ = h.w.StartTask(id, c.config, c.taskConfigs[id.Task], c.target)
			}
		}
	}
	return &plan, nil
}

func (h *Standalone) RestartTask(ctx context.Context, id ConnectorTaskID) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A missing connector answers as DistributedHerder.restartTask (StandaloneHerder's answer is overwritten by a
	// 500 when it fails to start the task it does not have); a missing task as StandaloneHerder.restartTask.
	c, ok := h.connectors[id.Connector]
	if !ok {
		return NotFound("Unknown connector: %s", id.Connector)
	}
	if id.Task < 0 || id.Task >= len(c.taskConfigs) {
		return NotFound("Task %s not found", id)
	}
	h.w.StopTasks([]ConnectorTaskID{id})
	return h.w.StartTask(id, c.config, c.taskConfigs[id.Task], c.target)
}

func (h *Standalone) setTarget(name string, t TargetState) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok {
		return NotFound("Unknown connector %s", name)
	}
	prev := c.target
	c.target = t
	switch {
	case t == TargetStopped:
		h.w.StopTasks(h.w.TasksOf(name))
		c.taskConfigs = nil
		h.w.SetTargetState(name, t)
	case prev == TargetStopped || (t == TargetStarted && c.taskConfigs == nil):
		h.w.SetTargetState(name, t)
		if t == TargetStarted {
			h.generateAndStartTasksLocked(name, c)
		}
	default:
		h.w.SetTargetState(name, t)
	}
	return nil
}

func (h *Standalone) PauseConnector(ctx context.Context, name string) error {
	return h.setTarget(name, TargetPaused)
}
func (h *Standalone) ResumeConnector(ctx context.Context, name string) error {
	return h.setTarget(name, TargetStarted)
}
func (h *Standalone) StopConnector(ctx context.Context, name string) error {
	return h.setTarget(name, TargetStopped)
}

func (h *Standalone) ConnectorActiveTopics(ctx context.Context, name string) ([]string, error) {
	if !h.w.Config().TopicTracking {
		return nil, Forbidden("Topic tracking is disabled.")
	}
	return h.status.ActiveTopics(name), nil
}

func (h *Standalone) ResetConnectorActiveTopics(ctx context.Context, name string) error {
	if !h.w.Config().TopicTracking {
		return Forbidden("Topic tracking is disabled.")
	}
	if !h.w.Config().TopicTrackingReset {
		return Forbidden("Topic tracking reset is disabled.")
	}
	h.status.ResetTopics(name)
	return nil
}

func (h *Standalone) connectorForOffsets(name string) (*standaloneConnector, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.connectors[name]
	if !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	return c, nil
}

func (h *Standalone) ConnectorOffsets(ctx context.Context, name string) (*ConnectorOffsets, error) {
	c, err := h.connectorForOffsets(name)
	if err != nil {
		return nil, err
	}
	return SinkOffsets(h.w, h.w.ConsumerGroup(name, c.config))
}

func (h *Standalone) AlterConnectorOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error) {
	c, err := h.connectorForOffsets(name)
	if err != nil {
		return "", err
	}
	if c.target != TargetStopped {
		return "", notStoppedError(name)
	}
	return AlterSinkOffsets(h.w, name, c.config, offsets)
}

func (h *Standalone) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	c, err := h.connectorForOffsets(name)
	if err != nil {
		return "", err
	}
	if c.target != TargetStopped {
		return "", notStoppedError(name)
	}
	return ResetSinkOffsets(h.w, name, c.config)
}

var _ state.Listener = (*StatusTracker)(nil)
