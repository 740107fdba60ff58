package herder

// The distributed herder's REST side (the Herder interface): reads from the local snapshot of the config and
// status topics, leader-only writes answered with *NotLeaderError for forwarding.

import (
	"context"
	"maps"
	"time"

	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/store"
)

func (d *Distributed) KafkaClusterID() string { return d.clusterID }

func (d *Distributed) Healthy(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ready {
		return ErrNotReady
	}
	return nil
}

// awaitStarted waits until the config topic has been read (REST calls that arrive while the worker starts wait
// for it, as the JVM queues them for its herder thread; the request timeout still applies).
func (d *Distributed) awaitStarted(ctx context.Context) error {
	select {
	case <-d.started:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// snapshot is the config snapshot once the worker has read the config topic.
func (d *Distributed) snapshot(ctx context.Context) (*store.Snapshot, error) {
	if err := d.awaitStarted(ctx); err != nil {
		return nil, err
	}
	return d.configs.Snapshot(), nil
}

func (d *Distributed) notLeader(ctx context.Context) error {
	if err := d.awaitStarted(ctx); err != nil {
		return err
	}
	// until the first rebalance completes the leader is unknown: wait a bounded time rather than answer 409
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	self, url := d.awaitLeader(wctx)
	if self {
		return nil
	}
	if url == "" {
		return &RestError{Status: 409, Message: "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.", Kind: ErrRebalancing}
	}
	return &NotLeaderError{LeaderURL: url}
}

// awaitLeader returns whether this worker leads and the leader's URL, waiting (until ctx ends) while no
// leader is known.
func (d *Distributed) awaitLeader(ctx context.Context) (bool, string) {
	for {
		changed := d.member.LeaderChanged() // taken before reading, so that no change is missed
		if self, url := d.isLeader(); self || url != "" {
			return self, url
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, ""
		}
	}
}

// AwaitLeaderChange implements LeaderAwaiter: the members probe the leader and remove it once its REST
// listener refuses connections (group/probe.go), and the next completed rebalance names its successor.
func (d *Distributed) AwaitLeaderChange(ctx context.Context, gone string) (bool, string) {
	if d.member == nil {
		return false, ""
	}
	for {
		changed := d.member.LeaderChanged() // taken before reading, so that no change is missed
		if self, url := d.isLeader(); self || (url != "" && url != gone) {
			return self, url
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, ""
		}
	}
}

// readBack waits until the config store has read what this worker just wrote (the change is accepted), as
// the JVM's store reads its log to the end after a write.
func (d *Distributed) readBack(ctx context.Context) error {
	return d.configLog.ReadWritten(ctx)
}

func (d *Distributed) Connectors(ctx context.Context) ([]string, error) {
	snap, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return snap.ConnectorNames(), nil
}

func (d *Distributed) connector(ctx context.Context, name string) (*store.Snapshot, map[string]string, error) {
	snap, err := d.snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, ok := snap.Connectors[name]
	if !ok {
		return nil, nil, NotFound("Connector %s not found", name)
	}
	return snap, c, nil
}

func (d *Distributed) ConnectorInfo(ctx context.Context, name string) (*ConnectorInfo, error) {
	if err := d.awaitStarted(ctx); err != nil {
		return nil, err
	}
	c, n, ok := d.configs.Connector(name)
	if !ok {
		return nil, NotFound("Connector %s not found", name)
	}
	info := &ConnectorInfo{Name: name, Config: c, Tasks: []ConnectorTaskID{}, Type: "sink"}
	for i := 0; i < n; i++ {
		info.Tasks = append(info.Tasks, ConnectorTaskID{Connector: name, Task: i})
	}
	return info, nil
}

func (d *Distributed) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	_, c, err := d.connector(ctx, name)
	if err != nil {
		return nil, err
	}
	return maps.Clone(c), nil
}

func (d *Distributed) ValidateConnectorConfig(ctx context.Context, config map[string]string) (*ConfigInfos, error) {
	return validateResolved(d.w, d.validator, config)
}

func (d *Distributed) PutConnectorConfig(ctx context.Context, name string, config map[string]string, initial TargetState, allowReplace bool) (*ConnectorInfo, bool, error) {
	infos, err := validateResolved(d.w, d.validator, config)
	if err != nil {
		return nil, false, err
	}
	if err := ValidationError(infos); err != nil {
		return nil, false, err
	}
	if err := d.notLeader(ctx); err != nil {
		return nil, false, err
	}
	_, _, exists := d.configs.Connector(name) // notLeader waited for the config topic
	if exists && !allowReplace {
		return nil, false, AlreadyExists("Connector %s already exists", name)
	}
	target := state.Target("")
	if !exists && initial != "" {
		target = initial
	}
	if err := d.configs.PutConnectorConfig(name, config, target); err != nil {
		return nil, false, err
	}
	if err := d.readBack(ctx); err != nil {
		return nil, false, err
	}
	info, err := d.ConnectorInfo(ctx, name)
	return info, !exists, err
}

func (d *Distributed) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*ConnectorInfo, error) {
	_, c, err := d.connector(ctx, name)
	if err != nil {
		return nil, err
	}
	merged := maps.Clone(c)
	for k, v := range patch {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = *v
		}
	}
	info, _, err := d.PutConnectorConfig(ctx, name, merged, "", true)
	return info, err
}

func (d *Distributed) DeleteConnector(ctx context.Context, name string) error {
	if _, _, err := d.connector(ctx, name); err != nil {
		return err
	}
	if err := d.notLeader(ctx); err != nil {
		return err
	}
	if err := d.configs.RemoveConnectorConfig(name); err != nil {
		return err
	}
	return d.readBack(ctx)
}

func (d *Distributed) toAbstract(st *store.Status) AbstractState {
	if st == nil {
		return AbstractState{State: StateUnassigned, WorkerID: d.w.ID()}
	}
	as := AbstractState{State: st.State, WorkerID: st.WorkerID, Version: VersionPtr(st.Version)}
	if st.Trace != nil {
		as.Trace = *st.Trace
	}
	return as
}

func (d *Distributed) ConnectorStatus(ctx context.Context, name string) (*ConnectorStateInfo, error) {
	if err := d.awaitStarted(ctx); err != nil {
		return nil, err
	}
	_, n, ok := d.configs.Connector(name)
	if !ok {
		return nil, NotFound("No status found for connector %s", name)
	}
	info := &ConnectorStateInfo{Name: name, Connector: d.toAbstract(d.statuses.Connector(name)), Tasks: []TaskState{}, Type: "sink"}
	for i := 0; i < n; i++ {
		info.Tasks = append(info.Tasks, TaskState{ID: i, AbstractState: d.toAbstract(d.statuses.Task(ConnectorTaskID{Connector: name, Task: i}))})
	}
	return info, nil
}

func (d *Distributed) TaskStatus(ctx context.Context, id ConnectorTaskID) (*TaskState, error) {
	if err := d.awaitStarted(ctx); err != nil {
		return nil, err
	}
	st := d.statuses.Task(id)
	if st == nil {
		return nil, NotFound("No status found for task %s", id)
	}
	return &TaskState{ID: id.Task, AbstractState: d.toAbstract(st)}, nil
}

func (d *Distributed) TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error) {
	snap, _, err := d.connector(ctx, name)
	if err != nil {
		return nil, err
	}
	out := []TaskInfo{}
	for i, tc := range snap.Tasks(name) {
		out = append(out, TaskInfo{ID: ConnectorTaskID{Connector: name, Task: i}, Config: maps.Clone(tc)})
	}
	return out, nil
}

// PutTaskConfigs is the leader's side of the internal task-config forward.
func (d *Distributed) PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	if err := d.notLeader(ctx); err != nil {
		return err
	}
	if _, _, ok := d.configs.Connector(name); !ok { // notLeader waited for the config topic
		return NotFound("Connector %s not found", name)
	}
	return d.configs.PutTaskConfigs(ctx, name, configs)
}

// SessionKey serves the REST layer's signature check.
func (d *Distributed) SessionKey() ([]byte, []string, bool) {
	if d.member == nil || d.member.ProtocolVersion() < group.V2 {
		return nil, nil, false
	}
	if k := d.configs.SessionKey(); k != nil {
		return k.Key, []string{"HmacSHA256"}, true
	}
	return nil, []string{"HmacSHA256"}, true
}

// SetClusterLoggerLevel writes logger-cluster-<ns>.
func (d *Distributed) SetClusterLoggerLevel(ctx context.Context, namespace, level string) error {
	return d.configs.PutLoggerLevel(namespace, level)
}

func (d *Distributed) RestartConnector(ctx context.Context, name string) error {
	_, err := d.RestartConnectorAndTasks(ctx, RestartRequest{Connector: name})
	return err
}

// RestartConnectorAndTasks writes a restart-connector-<n> record (leader only); the owners act on it.
func (d *Distributed) RestartConnectorAndTasks(ctx context.Context, req RestartRequest) (*ConnectorStateInfo, error) {
	cur, err := d.ConnectorStatus(ctx, req.Connector)
	if err != nil {
		return nil, NotFound("Unknown connector: %s", req.Connector)
	}
	if err := d.notLeader(ctx); err != nil {
		return nil, err
	}
	plan := *cur
	plan.Tasks = append([]TaskState(nil), cur.Tasks...)
	if !req.OnlyFailed || cur.Connector.State == StateFailed {
		plan.Connector.State, plan.Connector.Trace = StateRestarting, ""
	}
	for i, t := range plan.Tasks {
		if req.IncludeTasks && (!req.OnlyFailed || t.State == StateFailed) {
			plan.Tasks[i].State, plan.Tasks[i].Trace = StateRestarting, ""
		}
	}
	if err := d.configs.PutRestartRequest(store.RestartRequest{Connector: req.Connector, IncludeTasks: req.IncludeTasks, OnlyFailed: req.OnlyFailed}); err != nil {
		return nil, err
	}
	return &plan, d.readBack(ctx)
}

// RestartTask restarts a task on its owner: here if it runs here, else the request goes to the owner.
func (d *Distributed) RestartTask(ctx context.Context, id ConnectorTaskID) error {
	snap, err := d.snapshot(ctx)
	if err != nil {
		return err
	}
	if _, ok := snap.Connectors[id.Connector]; !ok {
		return NotFound("Unknown connector: %s", id.Connector)
	}
	if id.Task < 0 || id.Task >= snap.TaskCounts[id.Connector] {
		return NotFound("Unknown task: %s", id)
	}
	d.mu.Lock()
	_, local := d.tasks[id]
	d.mu.Unlock()
	if local {
		done := make(chan struct{})
		d.enqueue("", func() { d.restartLocalTask(d.configs.Snapshot(), id); close(done) })
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	st := d.statuses.Task(id)
	if st == nil || st.WorkerID == "" || st.WorkerID == d.w.ID() {
		return &RestError{Status: 409, Message: "Cannot complete request because of a conflicting operation (e.g. worker rebalance)", Kind: ErrRebalancing}
	}
	return &NotLeaderError{LeaderURL: "http://" + st.WorkerID + "/"}
}

func (d *Distributed) setTarget(ctx context.Context, name string, t TargetState) error {
	if _, _, err := d.connector(ctx, name); err != nil {
		return NotFound("Unknown connector %s", name)
	}
	if err := d.configs.PutTargetState(name, t); err != nil {
		return err
	}
	return d.readBack(ctx)
}

func (d *Distributed) PauseConnector(ctx context.Context, name string) error {
	return d.setTarget(ctx, name, TargetPaused)
}
func (d *Distributed) ResumeConnector(ctx context.Context, name string) error {
	return d.setTarget(ctx, name, TargetStarted)
}
func (d *Distributed) StopConnector(ctx context.Context, name string) error {
	return d.setTarget(ctx, name, TargetStopped)
}

func (d *Distributed) ConnectorActiveTopics(ctx context.Context, name string) ([]string, error) {
	if !d.w.Config().TopicTracking {
		return nil, Forbidden("Topic tracking is disabled.")
	}
	return d.statuses.Topics(name), nil
}

func (d *Distributed) ResetConnectorActiveTopics(ctx context.Context, name string) error {
	if !d.w.Config().TopicTracking {
		return Forbidden("Topic tracking is disabled.")
	}
	if !d.w.Config().TopicTrackingReset {
		return Forbidden("Topic tracking reset is disabled.")
	}
	return d.statuses.DeleteTopics(name)
}

func (d *Distributed) ConnectorOffsets(ctx context.Context, name string) (*ConnectorOffsets, error) {
	_, c, err := d.connector(ctx, name)
	if err != nil {
		return nil, err
	}
	return SinkOffsets(d.w, d.w.ConsumerGroup(name, c))
}

func (d *Distributed) stoppedConnector(ctx context.Context, name string) (map[string]string, error) {
	snap, c, err := d.connector(ctx, name)
	if err != nil {
		return nil, err
	}
	if snap.TargetState(name) != TargetStopped {
		return nil, notStoppedError(name)
	}
	return c, nil
}

func (d *Distributed) AlterConnectorOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error) {
	c, err := d.stoppedConnector(ctx, name)
	if err != nil {
		return "", err
	}
	return AlterSinkOffsets(d.w, name, c, offsets)
}

func (d *Distributed) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	c, err := d.stoppedConnector(ctx, name)
	if err != nil {
		return "", err
	}
	return ResetSinkOffsets(d.w, name, c)
}

var (
	_ Herder           = (*Distributed)(nil)
	_ TaskConfigPutter = (*Distributed)(nil)
	_ SessionKeySource = (*Distributed)(nil)
	_ state.Listener   = (*Distributed)(nil)
	_ group.Handler    = (*Distributed)(nil)
)
