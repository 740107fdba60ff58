package herder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/connectd/connectd/connect"
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
	if err := h.w.StartConnector(name, c.config, c.target, func() { h.reconfigure(name) }); err != nil {
		slog.Error("connector failed to start", "connector", name, "error", err)
		return
	}
	if c.target == TargetStopped {
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
	if !ok || c.target == TargetStopped {
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
	// StandaloneHerder.restartTask's answers (the distributed herder says "Unknown task").
	c, ok := h.connectors[id.Connector]
	if !ok {
		return NotFound("Connector %s not found", id.Connector)
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
	case prev == TargetStopped:
		h.w.SetTargetState(name, t)
		h.generateAndStartTasksLocked(name, c)
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

func notStoppedError(name string) error {
	return BadRequest("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
}

// SinkOffsets reads a sink connector's consumer-group offsets in the REST shape.
func SinkOffsets(w *worker.Worker, group string) (*ConnectorOffsets, error) {
	offs, err := w.GroupOffsets(group)
	if err != nil {
		return nil, err
	}
	tps := make([]connect.TopicPartition, 0, len(offs))
	for tp := range offs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	out := &ConnectorOffsets{Offsets: []ConnectorOffset{}}
	for _, tp := range tps {
		out.Offsets = append(out.Offsets, ConnectorOffset{
			Partition: map[string]any{"kafka_topic": tp.Topic, "kafka_partition": tp.Partition},
			Offset:    map[string]any{"kafka_offset": offs[tp]},
		})
	}
	return out, nil
}

const (
	alteredMsg = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	resetMsg   = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
)

// AlterSinkOffsets validates the body and alters the group offsets (and the connector's, if it keeps its own).
// config is the stored connector config; its provider references are resolved here (the JVM passes the
// resolved config to modifyConnectorOffsets).
func AlterSinkOffsets(w *worker.Worker, name string, config map[string]string, body ConnectorOffsets) (string, error) {
	if len(body.Offsets) == 0 {
		return "", BadRequest("The offsets to be modified must not be null or empty")
	}
	config, err := w.ResolveConfig(config)
	if err != nil {
		return "", err
	}
	group := w.ConsumerGroup(name, config)
	offsets := map[connect.TopicPartition]*int64{}
	for _, o := range body.Offsets {
		topic, tok := o.Partition["kafka_topic"].(string)
		if o.Partition == nil || !tok || topic == "" {
			return "", BadRequest("Kafka topic names must be valid strings and may not be null")
		}
		part, perr := toInt64(o.Partition["kafka_partition"])
		if perr != nil {
			return "", BadRequest("Failed to parse the following Kafka partition value in the provided offsets: '%v'. Partition values for sink connectors need to be integers.", o.Partition["kafka_partition"])
		}
		tp := connect.TopicPartition{Topic: topic, Partition: int32(part)}
		if o.Offset == nil {
			offsets[tp] = nil
			continue
		}
		off, oerr := toInt64(o.Offset["kafka_offset"])
		if oerr != nil {
			return "", BadRequest("Failed to parse the following Kafka offset value in the provided offsets: '%v'. Offset values for sink connectors need to be integers.", o.Offset["kafka_offset"])
		}
		offsets[tp] = &off
	}
	empty, err := w.GroupIsEmpty(group)
	if err != nil {
		return "", err
	}
	if !empty {
		return "", fmt.Errorf("Failed to alter consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", name)
	}
	if err := w.AlterGroupOffsets(group, offsets); err != nil {
		return "", fmt.Errorf("Failed to alter consumer group offsets for connector %s: %w", name, err)
	}
	if alt, ok := newConnector(w, config).(connect.OffsetAlterer); ok {
		done, err := alt.AlterOffsets(config, offsets)
		if err != nil {
			return "", err
		}
		if done {
			return "The offsets for this connector have been altered successfully", nil
		}
	}
	return alteredMsg, nil
}

// ResetSinkOffsets deletes the connector's consumer group.
func ResetSinkOffsets(w *worker.Worker, name string, config map[string]string) (string, error) {
	config, err := w.ResolveConfig(config)
	if err != nil {
		return "", err
	}
	group := w.ConsumerGroup(name, config)
	if err := w.DeleteGroup(group); err != nil {
		return "", fmt.Errorf("Failed to reset consumer group offsets for connector %s: %w", name, err)
	}
	if alt, ok := newConnector(w, config).(connect.OffsetAlterer); ok {
		done, err := alt.AlterOffsets(config, nil)
		if err != nil {
			return "", err
		}
		if done {
			return "The offsets for this connector have been reset successfully", nil
		}
	}
	return resetMsg, nil
}

func newConnector(w *worker.Worker, config map[string]string) connect.SinkConnector {
	c, _, err := w.Registry().NewSinkConnector(config["connector.class"])
	if err != nil {
		return nil
	}
	return c
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) {
			return 0, errors.New("not an integer")
		}
		return int64(x), nil
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case string:
		return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
	}
	return 0, errors.New("not a number")
}

var _ state.Listener = (*StatusTracker)(nil)
