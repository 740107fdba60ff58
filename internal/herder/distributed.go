package herder

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/store"
	"github.com/connectd/connectd/internal/worker"
)

// Distributed is the distributed herder: membership in the Connect worker group (internal/group), cluster state
// in the JVM-format internal topics (internal/store), and the local worker running what the leader assigns.
// REST reads are served from the local snapshot; leader-only writes return *NotLeaderError for forwarding.
type Distributed struct {
	cfg     *DistributedConfig
	url     string // advertised REST URL, e.g. http://127.0.0.1:8083/
	brokers []string
	sc      *sarama.Config

	w         *worker.Worker
	validator *Validator
	configs   *store.ConfigStore
	statuses  *store.StatusStore
	configLog *store.Log
	statusLog *store.Log
	member    *group.Member
	clusterID string

	mu         sync.Mutex
	generation int32
	ready      bool
	running    map[string]bool                    // connectors running here
	tasks      map[state.TaskID]map[string]string // tasks running here -> their config
	restarts   map[state.TaskID]int               // automatic restart attempts
	ops        chan func()
	opMu       sync.Mutex // held by every herder operation and group callback: one at a time
	stopping   bool       // set under opMu by Stop: no new work is started
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	httpClient *http.Client
}

// NewDistributed prepares a distributed herder. The worker must be created with this herder as its state
// listener (worker.New(cfg, reg, d)), then attached with SetWorker, before Start.
func NewDistributed(cfg *DistributedConfig, advertisedURL string, brokers []string, sc *sarama.Config) *Distributed {
	return &Distributed{cfg: cfg, url: advertisedURL, brokers: brokers, sc: sc, generation: -1,
		running: map[string]bool{}, tasks: map[state.TaskID]map[string]string{}, restarts: map[state.TaskID]int{},
		ops: make(chan func(), 256), httpClient: &http.Client{Timeout: 10 * time.Second}}
}

// SetAdvertisedURL sets the REST URL members publish (known once the REST server is bound); before Start.
func (d *Distributed) SetAdvertisedURL(u string) {
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	d.url = u
}

// SetWorker attaches the local worker.
func (d *Distributed) SetWorker(w *worker.Worker) {
	d.w = w
	d.validator = &Validator{Registry: w.Registry(), OverridePolicy: w.Config().OverridePolicy}
}

// Start creates or checks the internal topics, reads them to the end, and joins the group.
func (d *Distributed) Start(ctx context.Context) error {
	aclient, err := kafka.NewClient(d.brokers, d.sc) // explains a refused SASL mechanism, unlike sarama
	if err != nil {
		return err
	}
	admin, err := sarama.NewClusterAdminFromClient(aclient) // closing admin closes aclient
	if err != nil {
		aclient.Close()
		return err
	}
	for _, spec := range []store.TopicSpec{d.cfg.ConfigTopic, d.cfg.OffsetTopic, d.cfg.StatusTopic} {
		if err := store.EnsureTopic(admin, spec); err != nil {
			admin.Close()
			return err
		}
	}
	admin.Close()
	d.configs = store.NewConfigStore(d)
	if d.configLog, err = store.NewLog(d.brokers, d.sc, d.cfg.ConfigTopic.Name, d.configs.Apply); err != nil {
		return err
	}
	d.configs.SetLog(d.configLog)
	d.statuses = store.NewStatusStore()
	if d.statusLog, err = store.NewLog(d.brokers, d.sc, d.cfg.StatusTopic.Name, d.statuses.Apply); err != nil {
		return err
	}
	d.statuses.SetLog(d.statusLog)
	if err := d.statusLog.Start(ctx); err != nil {
		return fmt.Errorf("reading %s: %w", d.cfg.StatusTopic.Name, err)
	}
	if err := d.configLog.Start(ctx); err != nil {
		return fmt.Errorf("reading %s: %w", d.cfg.ConfigTopic.Name, err)
	}
	d.configs.MarkStarted()
	if id, err := d.w.ClusterID(); err == nil {
		d.clusterID = id
	}
	gc := *d.sc
	gc.Net.ReadTimeout = d.cfg.RebalanceTimeout + 10*time.Second
	gclient, err := kafka.NewClient(d.brokers, &gc)
	if err != nil {
		return err
	}
	d.member, err = group.NewMember(gclient, group.Config{GroupID: d.cfg.GroupID, SessionTimeout: d.cfg.SessionTimeout,
		RebalanceTimeout: d.cfg.RebalanceTimeout, HeartbeatInterval: d.cfg.HeartbeatInterval, MaxDelay: d.cfg.MaxDelay,
		UnsyncBackoff: d.cfg.UnsyncBackoff, Protocol: d.cfg.Protocol}, d)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	d.wg.Add(2)
	go func() { defer d.wg.Done(); _ = d.member.Run(rctx); gclient.Close() }()
	go func() { defer d.wg.Done(); d.loop(rctx) }()
	return nil
}

// Stop leaves the group (its work is reassigned after the delay) and stops everything local.
func (d *Distributed) Stop() {
	// stop local work first (final offset commits), then leave the group so that nobody else starts our tasks
	// while they still run here, as the JVM herder halts before leaving
	d.opMu.Lock()
	d.stopping = true
	d.mu.Lock()
	var local group.ConnectorsAndTasks
	for n := range d.running {
		local.Connectors = append(local.Connectors, n)
	}
	for id := range d.tasks {
		local.Tasks = append(local.Tasks, group.TaskID{Connector: id.Connector, Task: int32(id.Task)})
	}
	d.mu.Unlock()
	d.revoke(local)
	d.opMu.Unlock()
	if d.cancel != nil {
		d.cancel()
		d.wg.Wait()
	}
	d.w.Stop()
	if d.configLog != nil {
		d.configLog.Close()
	}
	if d.statusLog != nil {
		d.statusLog.Close()
	}
}

// loop runs herder operations one at a time (the JVM's herder thread).
func (d *Distributed) loop(ctx context.Context) {
	keyCheck := time.NewTicker(time.Minute) // the leader rotates the session key when it expires
	defer keyCheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keyCheck.C:
			d.enqueue(d.ensureSessionKey)
		case op := <-d.ops:
			d.opMu.Lock()
			if !d.stopping {
				op()
			}
			d.opMu.Unlock()
		}
	}
}

func (d *Distributed) enqueue(op func()) {
	select {
	case d.ops <- op:
	default:
		go func() { d.ops <- op }()
	}
}

// ---- group.Handler ----

func (d *Distributed) State() (string, int64) { return d.url, d.configs.Offset() }

func (d *Distributed) CatchUp(offset int64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.SyncTimeout)
	defer cancel()
	if d.configs.Offset() >= offset {
		return true
	}
	_ = d.configLog.ReadToEnd(ctx)
	return d.configs.Offset() >= offset
}

func (d *Distributed) LeaderSnapshot(maxOffset int64) (group.ConfigSnapshot, bool) {
	ok := d.CatchUp(maxOffset)
	snap := d.configs.Snapshot()
	gs := group.ConfigSnapshot{Offset: snap.Offset, TaskCounts: map[string]int{}}
	for _, n := range snap.ConnectorNames() {
		gs.TaskCounts[n] = snap.TaskCounts[n]
	}
	if ok {
		d.enqueue(d.ensureSessionKey)
	}
	return gs, ok
}

// Revoke is the group callback; it runs exclusive of herder operations.
func (d *Distributed) Revoke(c group.ConnectorsAndTasks) {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	slog.Info("revoking", "connectors", c.Connectors, "tasks", fmt.Sprint(c.Tasks))
	d.revoke(c)
}

func (d *Distributed) revoke(c group.ConnectorsAndTasks) {
	var ids []state.TaskID
	for _, t := range c.Tasks {
		ids = append(ids, state.TaskID{Connector: t.Connector, Task: int(t.Task)})
	}
	d.w.StopTasks(ids)
	d.mu.Lock()
	for _, id := range ids {
		delete(d.tasks, id)
	}
	for _, n := range c.Connectors {
		delete(d.running, n)
	}
	d.mu.Unlock()
	for _, n := range c.Connectors {
		d.w.StopConnector(n)
	}
}

// Assigned is the group callback; it runs exclusive of herder operations.
func (d *Distributed) Assigned(a *group.Assignment, full group.ConnectorsAndTasks, gen int32, isLeader bool) {
	d.opMu.Lock()
	defer d.opMu.Unlock()
	if d.stopping {
		return
	}
	d.mu.Lock()
	d.generation = gen
	d.ready = true
	d.mu.Unlock()
	slog.Info("rebalance done", "generation", gen, "leader", isLeader, "protocol", a.Version, "assigned", fmt.Sprint(a.Connectors, a.Tasks),
		"revoked", fmt.Sprint(a.RevokedConnectors, a.RevokedTasks), "delay", a.Delay, "running", fmt.Sprint(full.Connectors, full.Tasks))
	snap := d.configs.Snapshot()
	// start everything assigned that is not running here (V0 hands the full set each time)
	for _, n := range full.Connectors {
		d.mu.Lock()
		run := d.running[n]
		d.mu.Unlock()
		if !run {
			d.startConnector(snap, n)
		}
	}
	for _, t := range full.Tasks {
		id := state.TaskID{Connector: t.Connector, Task: int(t.Task)}
		d.mu.Lock()
		_, run := d.tasks[id]
		d.mu.Unlock()
		if !run {
			d.startTask(snap, id)
		}
	}
}

func (d *Distributed) startConnector(snap *store.Snapshot, name string) {
	props, ok := snap.Connectors[name]
	if !ok {
		return
	}
	target := snap.TargetState(name)
	if err := d.w.StartConnector(name, props, target, func() { d.enqueue(func() { d.reconfigure(name) }) }); err != nil {
		slog.Error("connector failed to start", "connector", name, "error", err)
		return
	}
	d.mu.Lock()
	d.running[name] = true
	d.mu.Unlock()
	d.enqueue(func() { d.reconfigure(name) })
}

func (d *Distributed) startTask(snap *store.Snapshot, id state.TaskID) {
	conn, ok := snap.Connectors[id.Connector]
	if !ok || id.Task >= snap.TaskCounts[id.Connector] || snap.TargetState(id.Connector) == state.Stopped {
		return // a STOPPED connector runs no tasks (its owner is about to write an empty task set)
	}
	tc := snap.TaskConfigs[id]
	d.mu.Lock()
	d.tasks[id] = tc
	d.mu.Unlock()
	if err := d.w.StartTask(id, conn, tc, snap.TargetState(id.Connector)); err != nil {
		slog.Error("task failed to start", "task", id.String(), "error", err)
	}
}

// reconfigure runs on the connector's owner: regenerate task configs and have the leader write them if they
// changed (an empty set while STOPPED, as the JVM does).
func (d *Distributed) reconfigure(name string) {
	d.mu.Lock()
	run := d.running[name]
	d.mu.Unlock()
	if !run {
		return
	}
	snap := d.configs.Snapshot()
	props, ok := snap.Connectors[name]
	if !ok {
		return
	}
	var cfgs []map[string]string
	if snap.TargetState(name) != state.Stopped {
		var err error
		if cfgs, err = d.w.ConnectorTaskConfigs(name, TasksMax(props)); err != nil {
			slog.Error("task config generation failed", "connector", name, "error", err)
			return
		}
		if tc := jvmTaskClass(d.w, props); tc != "" {
			for _, c := range cfgs {
				c["task.class"] = tc
			}
		}
	}
	if sameTaskConfigs(cfgs, snap.Tasks(name)) && !snap.Inconsistent[name] {
		if _, committed := snap.TaskCounts[name]; committed || len(cfgs) > 0 {
			return
		}
	}
	if err := d.writeTaskConfigs(name, cfgs); err != nil {
		slog.Warn("writing task configs failed, retrying", "connector", name, "error", err)
		time.AfterFunc(time.Second, func() { d.enqueue(func() { d.reconfigure(name) }) })
	}
}

// jvmTaskClass is the JVM task class of the connector's plugin when it declares one (connect.JVMTaskClasser).
func jvmTaskClass(w *worker.Worker, props map[string]string) string {
	p, ok := w.Registry().LookupType(props["connector.class"], connect.PluginSink)
	if !ok {
		return ""
	}
	if tc, ok := p.New().(connect.JVMTaskClasser); ok {
		return tc.TaskClass()
	}
	return ""
}

// sameTaskConfigs compares generated and stored task configs, ignoring task.class: connectd does not use it,
// and task configs written by a JVM worker carry the JVM's task class, which must not be rewritten (a JVM
// worker in the same group, or one taking the cluster back, has to be able to load it).
func sameTaskConfigs(gen, stored []map[string]string) bool {
	if len(gen) != len(stored) {
		return false
	}
	for i := range gen {
		a, b := maps.Clone(gen[i]), maps.Clone(stored[i])
		delete(a, "task.class")
		delete(b, "task.class")
		if !maps.Equal(a, b) {
			return false
		}
	}
	return true
}

func (d *Distributed) isLeader() (bool, string) {
	if d.member == nil {
		return false, ""
	}
	_, url, self := d.member.Leader()
	return self, url
}

func (d *Distributed) writeTaskConfigs(name string, cfgs []map[string]string) error {
	if self, leaderURL := d.isLeader(); !self {
		if leaderURL == "" {
			return errors.New("no leader known")
		}
		return d.forwardTaskConfigs(leaderURL, name, cfgs)
	}
	if cfgs == nil {
		cfgs = []map[string]string{}
	}
	return d.configs.PutTaskConfigs(name, cfgs)
}

// forwardTaskConfigs is the JVM's internal POST /connectors/{n}/tasks?forward=false to the leader, signed
// with the session key (X-Connect-Authorization = base64(HMAC-SHA256(key, body))).
func (d *Distributed) forwardTaskConfigs(leaderURL, name string, cfgs []map[string]string) error {
	if cfgs == nil {
		cfgs = []map[string]string{}
	}
	body, _ := json.Marshal(cfgs)
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(leaderURL, "/")+"/connectors/"+name+"/tasks?forward=false", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if k := d.configs.Snapshot().SessionKey; k != nil {
		m := hmac.New(sha256.New, k.Key)
		m.Write(body)
		req.Header.Set("X-Connect-Authorization", base64.StdEncoding.EncodeToString(m.Sum(nil)))
		req.Header.Set("X-Connect-Request-Signature-Algorithm", "HmacSHA256")
	}
	resp, err := d.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("leader answered %s", resp.Status)
	}
	return nil
}

// ensureSessionKey has the leader publish a session key when none exists or it expired (sessioned protocol).
func (d *Distributed) ensureSessionKey() {
	if self, _ := d.isLeader(); !self || d.member.ProtocolVersion() < group.V2 {
		return
	}
	k := d.configs.Snapshot().SessionKey
	if k != nil && time.Since(k.Created) < d.cfg.KeyTTL {
		return
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := d.configs.PutSessionKey(store.SessionKey{Key: key, Algorithm: "HmacSHA256", Created: time.Now()}); err != nil {
		slog.Warn("writing the session key failed", "error", err)
	}
}

// ---- store.ConfigListener (called from the config log's goroutine) ----

func (d *Distributed) ConnectorConfigUpdated(name string, removed bool) {
	d.enqueue(func() {
		d.mu.Lock()
		run := d.running[name]
		d.mu.Unlock()
		if removed {
			if run {
				d.revoke(group.ConnectorsAndTasks{Connectors: []string{name}})
			}
			var ids []group.TaskID
			for _, id := range d.localTasks(name) {
				ids = append(ids, group.TaskID{Connector: name, Task: int32(id.Task)})
			}
			d.revoke(group.ConnectorsAndTasks{Tasks: ids})
			if self, _ := d.isLeader(); self {
				d.destroyStatuses(name)
			}
		} else if run {
			d.w.StopConnector(name)
			d.mu.Lock()
			delete(d.running, name)
			d.mu.Unlock()
			d.startConnector(d.configs.Snapshot(), name)
		}
		if d.member != nil {
			d.member.RequestRejoin()
		}
	})
}

// destroyStatuses writes DESTROYED (tombstones) for a deleted connector's status records, as the JVM leader does.
func (d *Distributed) destroyStatuses(name string) {
	_ = d.statuses.PutConnector(name, d.status(state.Destroyed, "", nil), false)
	for i := range d.statuses.Tasks(name) {
		_ = d.statuses.PutTask(state.TaskID{Connector: name, Task: i}, d.status(state.Destroyed, "", nil), false)
	}
}

func (d *Distributed) localTasks(name string) []state.TaskID {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []state.TaskID
	for id := range d.tasks {
		if id.Connector == name {
			out = append(out, id)
		}
	}
	return out
}

func (d *Distributed) TaskConfigsUpdated(name string, count int) {
	d.enqueue(func() {
		// restart local tasks of the connector whose config changed; drop those beyond the new count
		snap := d.configs.Snapshot()
		for _, id := range d.localTasks(name) {
			d.mu.Lock()
			old := d.tasks[id]
			d.mu.Unlock()
			if id.Task < count && maps.Equal(old, snap.TaskConfigs[id]) {
				continue
			}
			d.w.StopTasks([]state.TaskID{id})
			d.mu.Lock()
			delete(d.tasks, id)
			d.mu.Unlock()
			if id.Task < count {
				d.startTask(snap, id)
			}
		}
		if d.member != nil {
			d.member.RequestRejoin()
		}
	})
}

func (d *Distributed) TargetStateChanged(name string) {
	d.enqueue(func() {
		t := d.configs.Snapshot().TargetState(name)
		d.mu.Lock()
		run := d.running[name]
		d.mu.Unlock()
		if t == state.Stopped {
			var ids []group.TaskID
			for _, id := range d.localTasks(name) {
				ids = append(ids, group.TaskID{Connector: name, Task: int32(id.Task)})
			}
			d.revoke(group.ConnectorsAndTasks{Tasks: ids})
		}
		if run || t != state.Stopped {
			d.w.SetTargetState(name, t)
		}
		if run {
			d.reconfigure(name)
		}
	})
}

func (d *Distributed) RestartRequested(r store.RestartRequest) {
	d.enqueue(func() {
		snap := d.configs.Snapshot()
		d.mu.Lock()
		run := d.running[r.Connector]
		d.mu.Unlock()
		if run {
			cs := d.statuses.Connector(r.Connector)
			if !r.OnlyFailed || (cs != nil && cs.State == state.Failed) {
				d.w.StopConnector(r.Connector)
				d.mu.Lock()
				delete(d.running, r.Connector)
				d.mu.Unlock()
				d.startConnector(snap, r.Connector)
			}
		}
		if r.IncludeTasks {
			for _, id := range d.localTasks(r.Connector) {
				ts := d.statuses.Task(id)
				if r.OnlyFailed && (ts == nil || ts.State != state.Failed) {
					continue
				}
				d.restartLocalTask(snap, id)
			}
		}
	})
}

func (d *Distributed) SessionKeyUpdated(store.SessionKey) {}

// LoggingLevelUpdated applies a cluster-wide logger level read from the config topic (written by
// any worker for PUT /admin/loggers/{ns}?scope=cluster), as the JVM's onLoggingLevelUpdate.
func (d *Distributed) LoggingLevelUpdated(namespace, level string) {
	if _, err := logging.Default.SetLevel(namespace, level); err != nil {
		slog.Warn("ignoring cluster logger level", "namespace", namespace, "level", level, "error", err)
	}
}

func (d *Distributed) restartLocalTask(snap *store.Snapshot, id state.TaskID) {
	d.w.StopTasks([]state.TaskID{id})
	d.mu.Lock()
	delete(d.tasks, id)
	d.mu.Unlock()
	d.startTask(snap, id)
}

// ---- state.Listener (the worker reports here; statuses go to the status topic with our generation) ----

func (d *Distributed) status(s state.State, trace string, version func() *string) store.Status {
	d.mu.Lock()
	gen := d.generation
	d.mu.Unlock()
	st := store.Status{State: s, WorkerID: d.w.ID(), Generation: gen, Version: statusVersion(s, version).Ptr()}
	if trace != "" {
		st.Trace = &trace
	}
	return st
}

func (d *Distributed) ConnectorState(name string, s state.State, trace string) {
	st := d.status(s, trace, func() *string { return d.w.ConnectorVersion(name) })
	if err := d.statuses.PutConnector(name, st, s == state.Unassigned); err != nil {
		slog.Warn("writing connector status failed", "connector", name, "error", err)
	}
}

func (d *Distributed) TaskState(id state.TaskID, s state.State, trace string) {
	d.mu.Lock()
	_, local := d.tasks[id]
	attempt := d.restarts[id]
	if s == state.Running {
		delete(d.restarts, id)
	}
	d.mu.Unlock()
	if s == state.Failed && local {
		// automatic restart with exponential backoff, announced in the status trace
		delay := d.cfg.RestartBackoffMin << attempt
		if delay > d.cfg.RestartBackoffMax || delay <= 0 {
			delay = d.cfg.RestartBackoffMax
		}
		d.mu.Lock()
		d.restarts[id] = attempt + 1
		d.mu.Unlock()
		trace = fmt.Sprintf("%s\nconnectd: automatic restart attempt %d in %d ms", trace, attempt+1, delay.Milliseconds())
		time.AfterFunc(delay, func() {
			d.enqueue(func() {
				d.mu.Lock()
				_, still := d.tasks[id]
				d.mu.Unlock()
				if still {
					d.restartLocalTask(d.configs.Snapshot(), id)
				}
			})
		})
	}
	if err := d.statuses.PutTask(id, d.status(s, trace, func() *string { return d.w.TaskVersion(id) }), s == state.Unassigned); err != nil {
		slog.Warn("writing task status failed", "task", id.String(), "error", err)
	}
}

func (d *Distributed) TopicActive(connector, topic string, task int) {
	if err := d.statuses.PutTopic(connector, topic, task, time.Now()); err != nil {
		slog.Warn("writing topic status failed", "connector", connector, "error", err)
	}
}

// ---- Herder ----

func (d *Distributed) KafkaClusterID() string { return d.clusterID }

func (d *Distributed) Healthy(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.ready {
		return ErrNotReady
	}
	return nil
}

func (d *Distributed) notLeader(ctx context.Context) error {
	self, url := d.isLeader()
	// during a rebalance the leader is briefly unknown: wait a bounded time rather than answer 409 at once
	for wait := time.Now().Add(5 * time.Second); url == "" && time.Now().Before(wait) && ctx.Err() == nil; {
		time.Sleep(50 * time.Millisecond)
		self, url = d.isLeader()
	}
	if self {
		return nil
	}
	if url == "" {
		return &RestError{Status: 409, Message: "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.", Kind: ErrRebalancing}
	}
	return &NotLeaderError{LeaderURL: url}
}

// awaitOffset waits until the config store has read what we just wrote (the change is accepted).
func (d *Distributed) readBack(ctx context.Context) error {
	return d.configLog.ReadToEnd(ctx)
}

func (d *Distributed) Connectors(ctx context.Context) ([]string, error) {
	return d.configs.Snapshot().ConnectorNames(), nil
}

func (d *Distributed) connector(name string) (*store.Snapshot, map[string]string, error) {
	snap := d.configs.Snapshot()
	c, ok := snap.Connectors[name]
	if !ok {
		return nil, nil, NotFound("Connector %s not found", name)
	}
	return snap, c, nil
}

func (d *Distributed) ConnectorInfo(ctx context.Context, name string) (*ConnectorInfo, error) {
	snap, c, err := d.connector(name)
	if err != nil {
		return nil, err
	}
	info := &ConnectorInfo{Name: name, Config: maps.Clone(c), Tasks: []ConnectorTaskID{}, Type: "sink"}
	for i := 0; i < snap.TaskCounts[name]; i++ {
		info.Tasks = append(info.Tasks, ConnectorTaskID{Connector: name, Task: i})
	}
	return info, nil
}

func (d *Distributed) ConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	_, c, err := d.connector(name)
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
	_, exists := d.configs.Snapshot().Connectors[name]
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
	_, c, err := d.connector(name)
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
	if _, _, err := d.connector(name); err != nil {
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
	snap := d.configs.Snapshot()
	if _, ok := snap.Connectors[name]; !ok {
		return nil, NotFound("No status found for connector %s", name)
	}
	info := &ConnectorStateInfo{Name: name, Connector: d.toAbstract(d.statuses.Connector(name)), Tasks: []TaskState{}, Type: "sink"}
	for i := 0; i < snap.TaskCounts[name]; i++ {
		info.Tasks = append(info.Tasks, TaskState{ID: i, AbstractState: d.toAbstract(d.statuses.Task(ConnectorTaskID{Connector: name, Task: i}))})
	}
	return info, nil
}

func (d *Distributed) TaskStatus(ctx context.Context, id ConnectorTaskID) (*TaskState, error) {
	st := d.statuses.Task(id)
	if st == nil {
		return nil, NotFound("No status found for task %s", id)
	}
	return &TaskState{ID: id.Task, AbstractState: d.toAbstract(st)}, nil
}

func (d *Distributed) TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error) {
	snap, _, err := d.connector(name)
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
	if _, _, err := d.connector(name); err != nil {
		return err
	}
	return d.configs.PutTaskConfigs(name, configs)
}

// SessionKey serves the REST layer's signature check.
func (d *Distributed) SessionKey() ([]byte, []string, bool) {
	if d.member == nil || d.member.ProtocolVersion() < group.V2 {
		return nil, nil, false
	}
	if k := d.configs.Snapshot().SessionKey; k != nil {
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
	snap := d.configs.Snapshot()
	if _, ok := snap.Connectors[id.Connector]; !ok || id.Task < 0 || id.Task >= snap.TaskCounts[id.Connector] {
		return NotFound("Unknown task: %s", id)
	}
	d.mu.Lock()
	_, local := d.tasks[id]
	d.mu.Unlock()
	if local {
		done := make(chan struct{})
		d.enqueue(func() { d.restartLocalTask(d.configs.Snapshot(), id); close(done) })
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
	if _, _, err := d.connector(name); err != nil {
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
	_, c, err := d.connector(name)
	if err != nil {
		return nil, err
	}
	return SinkOffsets(d.w, d.w.ConsumerGroup(name, c))
}

func (d *Distributed) stoppedConnector(name string) (map[string]string, error) {
	snap, c, err := d.connector(name)
	if err != nil {
		return nil, err
	}
	if snap.TargetState(name) != TargetStopped {
		return nil, notStoppedError(name)
	}
	return c, nil
}

func (d *Distributed) AlterConnectorOffsets(ctx context.Context, name string, offsets ConnectorOffsets) (string, error) {
	c, err := d.stoppedConnector(name)
	if err != nil {
		return "", err
	}
	return AlterSinkOffsets(d.w, name, c, offsets)
}

func (d *Distributed) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	c, err := d.stoppedConnector(name)
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
