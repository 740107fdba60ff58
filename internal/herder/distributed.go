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
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

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
//
// Herder work (starting and stopping connectors and tasks, regenerating and forwarding task configs) runs on
// one goroutine, fed by a queue. The group member runs on its own: it only hands assignments and revocations
// over and never waits for herder work, so heartbeats go out whatever the herder is doing.
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

	// mu guards the fields below; it is never held across I/O (the group member takes it).
	mu           sync.Mutex
	generation   int32                              // of the assignment applied last; written into statuses
	assigned     group.ConnectorsAndTasks           // what the group gave this worker (minus revocations)
	ready        bool                               // the first assignment was applied
	running      map[string]bool                    // connectors running here
	tasks        map[state.TaskID]map[string]string // tasks running here -> their config
	restarts     map[state.TaskID]int               // automatic restart attempts
	forwarding   map[string]bool                    // task configs being sent to the leader, per connector
	forwardAgain map[string]bool                    // regenerate once the send in flight ends
	stopping     bool                               // set by Stop: no new work is started

	q            *opQueue
	started      chan struct{} // closed once the config topic was read: REST reads wait for it
	loopCancel   context.CancelFunc
	loopDone     chan struct{}
	memberCancel context.CancelFunc
	memberDone   chan struct{}
	httpClient   *http.Client // task-config forwards to the leader, with the forward timeout
}

// ioTimeout bounds the herder goroutine's own waits: a forward to the leader, the leader's task-config write.
// A third of the session timeout, so that a herder stuck on a slow leader or broker still answers group events
// (revocations) long before anyone waits on them for a session timeout. REST requests wait for their writes
// under the request's own timeout instead.
func (d *Distributed) ioTimeout() time.Duration {
	t := d.cfg.SessionTimeout / 3
	if t <= 0 {
		t = 3 * time.Second
	}
	return t
}

// NewDistributed prepares a distributed herder. The worker must be created with this herder as its state
// listener (worker.New(cfg, reg, d)), then attached with SetWorker, before Start.
func NewDistributed(cfg *DistributedConfig, advertisedURL string, brokers []string, sc *sarama.Config) *Distributed {
	d := &Distributed{cfg: cfg, url: advertisedURL, brokers: brokers, sc: sc, generation: -1,
		running: map[string]bool{}, tasks: map[state.TaskID]map[string]string{}, restarts: map[state.TaskID]int{},
		forwarding: map[string]bool{}, forwardAgain: map[string]bool{}, q: newOpQueue(), started: make(chan struct{})}
	d.httpClient = &http.Client{Timeout: d.ioTimeout()}
	// the stores exist from the start: REST calls made while the worker starts wait for them to be read
	d.configs = store.NewConfigStore(d)
	d.statuses = store.NewStatusStore()
	return d
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
		if err := store.EnsureTopic(ctx, admin, spec); err != nil {
			admin.Close()
			return err
		}
	}
	admin.Close()
	if d.configLog, err = store.NewLog(d.brokers, d.sc, d.cfg.ConfigTopic.Name, d.configs.Apply); err != nil {
		return err
	}
	d.configs.SetLog(d.configLog)
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
	close(d.started)
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
		UnsyncBackoff: d.cfg.UnsyncBackoff, Protocol: d.cfg.Protocol, PeerProbeInterval: d.cfg.PeerProbeInterval}, d)
	if err != nil {
		return err
	}
	lctx, lcancel := context.WithCancel(context.Background())
	d.loopCancel, d.loopDone = lcancel, make(chan struct{})
	go d.loop(lctx)
	mctx, mcancel := context.WithCancel(context.Background())
	d.memberCancel, d.memberDone = mcancel, make(chan struct{})
	go func() { defer close(d.memberDone); _ = d.member.Run(mctx); gclient.Close() }()
	return nil
}

// Stop stops everything local and then leaves the group (its work is reassigned after the delay): local work
// first (final offset commits), so that nobody else starts our tasks while they still run here, as the JVM
// herder halts before leaving.
func (d *Distributed) Stop() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	if d.loopCancel != nil {
		d.loopCancel()
		<-d.loopDone // the operation under way ends; nothing queued runs any more
	}
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
	if d.memberCancel != nil {
		d.memberCancel()
		<-d.memberDone
	}
	d.w.Stop()
	if d.configLog != nil {
		d.configLog.Close()
	}
	if d.statusLog != nil {
		d.statusLog.Close()
	}
}

func (d *Distributed) isStopping() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stopping
}

// loop runs herder operations one at a time (the JVM's herder thread), membership events first.
func (d *Distributed) loop(ctx context.Context) {
	defer close(d.loopDone)
	keyCheck := time.NewTicker(time.Minute) // the leader rotates the session key when it expires
	defer keyCheck.Stop()
	for ctx.Err() == nil {
		if op, ok := d.q.pop(); ok {
			if !d.isStopping() {
				op()
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-d.q.signal:
		case <-keyCheck.C:
			d.q.push("session-key", d.ensureSessionKey)
		}
	}
}

// enqueue queues a herder operation; a keyed one runs once however often it is queued while pending.
func (d *Distributed) enqueue(key string, op func()) { d.q.push(key, op) }

// requestReconfigure has the connector's task configs regenerated (and written if they changed).
func (d *Distributed) requestReconfigure(name string) {
	d.enqueue("reconfigure/"+name, func() { d.reconfigure(name) })
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
		d.enqueue("session-key", d.ensureSessionKey)
	}
	return gs, ok
}

// Revoke is the group callback (member goroutine): the work stops being ours at once (nothing of it is started
// again), and the herder stops it in order with its other work; done closes when it is stopped.
func (d *Distributed) Revoke(c group.ConnectorsAndTasks, lost bool) <-chan struct{} {
	d.mu.Lock()
	if lost {
		d.assigned = group.ConnectorsAndTasks{}
	} else {
		d.assigned = without(d.assigned, c)
	}
	d.mu.Unlock()
	done := make(chan struct{})
	d.q.pushUrgent(func() {
		slog.Info("revoking", "connectors", c.Connectors, "tasks", fmt.Sprint(c.Tasks), "membership_lost", lost)
		d.revoke(c)
		close(done)
	})
	return done
}

// without is a minus b.
func without(a, b group.ConnectorsAndTasks) group.ConnectorsAndTasks {
	gone := map[string]bool{}
	for _, n := range b.Connectors {
		gone[n] = true
	}
	goneTasks := map[group.TaskID]bool{}
	for _, t := range b.Tasks {
		goneTasks[t] = true
	}
	var out group.ConnectorsAndTasks
	for _, n := range a.Connectors {
		if !gone[n] {
			out.Connectors = append(out.Connectors, n)
		}
	}
	for _, t := range a.Tasks {
		if !goneTasks[t] {
			out.Tasks = append(out.Tasks, t)
		}
	}
	return out
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

// Assigned is the group callback (member goroutine): the assignment is applied by the herder goroutine.
func (d *Distributed) Assigned(a *group.Assignment, full group.ConnectorsAndTasks, gen int32, isLeader bool) {
	d.statuses.SupersedeAbove(gen)
	d.mu.Lock()
	d.assigned = full
	d.mu.Unlock()
	d.q.pushUrgent(func() { d.applyAssignment(a, full, gen, isLeader) })
}

// applyAssignment starts what the assignment gives this worker and is not running here. An assignment whose
// generation is no longer the member's (a newer one is on its way, or the membership was lost) is skipped:
// its work may belong to someone else by now.
func (d *Distributed) applyAssignment(a *group.Assignment, full group.ConnectorsAndTasks, gen int32, isLeader bool) {
	if !d.member.IsCurrent(gen) {
		slog.Info("skipping an outdated assignment", "generation", gen)
		return
	}
	d.mu.Lock()
	d.generation = gen
	d.ready = true
	d.mu.Unlock()
	slog.Info("rebalance done", "generation", gen, "leader", isLeader, "protocol", a.Version, "assigned", fmt.Sprint(a.Connectors, a.Tasks),
		"revoked", fmt.Sprint(a.RevokedConnectors, a.RevokedTasks), "delay", a.Delay, "running", fmt.Sprint(full.Connectors, full.Tasks))
	snap := d.configs.Snapshot()
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

// owns says whether the current assignment holds the connector (task < 0) or the task, and the membership is
// current: only then may it be started here.
func (d *Distributed) owns(connector string, task int) bool {
	d.mu.Lock()
	gen, a := d.generation, d.assigned
	d.mu.Unlock()
	if d.member == nil || !d.member.IsCurrent(gen) {
		return false
	}
	if task < 0 {
		return slices.Contains(a.Connectors, connector)
	}
	return slices.Contains(a.Tasks, group.TaskID{Connector: connector, Task: int32(task)})
}

func (d *Distributed) startConnector(snap *store.Snapshot, name string) {
	props, ok := snap.Connectors[name]
	if !ok || !d.owns(name, -1) {
		return
	}
	target := snap.TargetState(name)
	if err := d.w.StartConnector(name, props, target, func() { d.requestReconfigure(name) }); err != nil {
		slog.Error("connector failed to start", "connector", name, "error", err)
		return
	}
	d.mu.Lock()
	d.running[name] = true
	d.mu.Unlock()
	d.requestReconfigure(name)
}

func (d *Distributed) startTask(snap *store.Snapshot, id state.TaskID) {
	conn, ok := snap.Connectors[id.Connector]
	if !ok || id.Task >= snap.TaskCounts[id.Connector] || snap.TargetState(id.Connector) == state.Stopped {
		return // a STOPPED connector runs no tasks (its owner is about to write an empty task set)
	}
	if !d.owns(id.Connector, id.Task) {
		return
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
	}
	if sameTaskConfigs(cfgs, snap.Tasks(name)) && !snap.Inconsistent[name] {
		if _, committed := snap.TaskCounts[name]; committed || len(cfgs) > 0 {
			return
		}
	}
	d.writeTaskConfigs(name, cfgs)
}

// sameTaskConfigs compares generated and stored task configs, ignoring task.class: connectd does not use it,
// and task configs written by a JVM worker carry the JVM's task class, which must not be rewritten (a JVM
// worker in the same group, or one taking the cluster back, has to be able to load it).
func sameTaskConfigs(gen, stored []map[string]string) bool {
	if len(gen) != len(stored) {
		return false
	}
	for i := range gen {
		if staleTaskClass(gen[i]["task.class"], stored[i]["task.class"]) {
			return false
		}
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

// writeTaskConfigs has the leader write a connector's task configs: directly when this worker leads, else
// forwarded in the background, so that the herder goes on with other connectors meanwhile (one forward in
// flight per connector; a regeneration asked for during it runs after it). Failures are retried after a second.
func (d *Distributed) writeTaskConfigs(name string, cfgs []map[string]string) {
	if cfgs == nil {
		cfgs = []map[string]string{}
	}
	retry := func(err error) {
		slog.Warn("writing task configs failed, retrying", "connector", name, "error", err)
		time.AfterFunc(time.Second, func() { d.requestReconfigure(name) })
	}
	self, leaderURL := d.isLeader()
	if self {
		ctx, cancel := context.WithTimeout(context.Background(), d.ioTimeout())
		defer cancel()
		if err := d.configs.PutTaskConfigs(ctx, name, cfgs); err != nil {
			retry(err)
		}
		return
	}
	if leaderURL == "" {
		retry(errors.New("no leader known"))
		return
	}
	d.mu.Lock()
	if d.forwarding[name] {
		d.forwardAgain[name] = true
		d.mu.Unlock()
		return
	}
	d.forwarding[name] = true
	d.mu.Unlock()
	key := d.configs.Snapshot().SessionKey
	go func() {
		err := d.forwardTaskConfigs(leaderURL, name, cfgs, key)
		d.mu.Lock()
		again := d.forwardAgain[name]
		delete(d.forwarding, name)
		delete(d.forwardAgain, name)
		d.mu.Unlock()
		switch {
		case err != nil:
			retry(err)
		case again:
			d.requestReconfigure(name)
		}
	}()
}

// forwardTaskConfigs is the JVM's internal POST /connectors/{n}/tasks?forward=false to the leader, signed
// with the session key (X-Connect-Authorization = base64(HMAC-SHA256(key, body))), bounded by ioTimeout.
func (d *Distributed) forwardTaskConfigs(leaderURL, name string, cfgs []map[string]string, key *store.SessionKey) error {
	body, _ := json.Marshal(cfgs)
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(leaderURL, "/")+"/connectors/"+url.PathEscape(name)+"/tasks?forward=false", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != nil {
		m := hmac.New(sha256.New, key.Key)
		m.Write(body)
		req.Header.Set("X-Connect-Authorization", base64.StdEncoding.EncodeToString(m.Sum(nil)))
		req.Header.Set("X-Connect-Request-Signature-Algorithm", "HmacSHA256")
	}
	resp, err := d.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body) // lets the connection be reused
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
	d.enqueue("", func() {
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
	d.enqueue("", func() {
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
	d.enqueue("", func() {
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
	d.enqueue("", func() {
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
			d.enqueue("restart/"+id.String(), func() {
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

// staleTaskClass reports a stored task class that connectd itself wrote before its plugins declared the JVM's
// task class (`<connector class>$Task`, which no JVM worker can load): such task configs are rewritten once.
// A class written by a JVM worker is left alone.
func staleTaskClass(generated, stored string) bool {
	return generated != "" && stored != generated && strings.HasSuffix(stored, "$Task")
}
