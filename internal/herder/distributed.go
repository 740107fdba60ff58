package herder

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/kafka"
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
	cfg   *DistributedConfig
	url   string            // advertised REST URL, e.g. http://127.0.0.1:8083/
	props map[string]string // the worker's Kafka client properties (JVM keys)

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
	forwarding   map[string]bool                    // task configs being written or sent to the leader, per connector
	forwardAgain map[string]bool                    // regenerate once the send in flight ends
	sends        sync.WaitGroup                     // task-config sends in flight (each bounded by ioTimeout)
	assignable   map[string]int                     // connectors read from the config topic -> committed task count
	stopping     bool                               // set by Stop: no new work is started

	q            *opQueue
	statusQ      *opQueue // connector status writes, in order (writeStatuses)
	statusCancel context.CancelFunc
	statusDone   chan struct{}
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

// leaveWait bounds how long a stopping worker waits for its local work before it leaves the group:
// scheduled.rebalance.max.delay.ms (the time the leader then holds the work before anyone else gets it),
// at least one second.
func (d *Distributed) leaveWait() time.Duration {
	return max(d.cfg.MaxDelay, time.Second)
}

// NewDistributed prepares a distributed herder. The worker must be created with this herder as its state
// listener (worker.New(cfg, reg, d)), then attached with SetWorker, before Start.
func NewDistributed(cfg *DistributedConfig, advertisedURL string, props map[string]string) *Distributed {
	d := &Distributed{cfg: cfg, url: advertisedURL, props: props, generation: -1,
		running: map[string]bool{}, tasks: map[state.TaskID]map[string]string{}, restarts: map[state.TaskID]int{},
		forwarding: map[string]bool{}, forwardAgain: map[string]bool{}, assignable: map[string]int{}, q: newOpQueue(), statusQ: newOpQueue(), started: make(chan struct{})}
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
	d.validator = NewValidator(w)
}

// Start creates or checks the internal topics, reads them to the end, and joins the group.
func (d *Distributed) Start(ctx context.Context) error {
	admin, err := kafka.Open(ctx, d.props) // explains a refused SASL mechanism
	if err != nil {
		return err
	}
	for _, spec := range []store.TopicSpec{d.cfg.ConfigTopic, d.cfg.OffsetTopic, d.cfg.StatusTopic} {
		if err := store.EnsureTopic(ctx, admin, spec); err != nil {
			admin.Close()
			return err
		}
	}
	admin.Close()
	if d.configLog, err = store.NewLog(d.props, d.cfg.ConfigTopic.Name, d.configs.Apply); err != nil {
		return err
	}
	d.configs.SetLog(d.configLog)
	if d.statusLog, err = store.NewLog(d.props, d.cfg.StatusTopic.Name, d.statuses.Apply); err != nil {
		return err
	}
	d.statuses.SetLog(d.statusLog)
	if err := d.statusLog.Start(ctx); err != nil {
		return fmt.Errorf("reading %s: %w", d.cfg.StatusTopic.Name, err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	d.statusCancel, d.statusDone = scancel, make(chan struct{})
	go d.writeStatuses(sctx)
	if err := d.configLog.Start(ctx); err != nil {
		return fmt.Errorf("reading %s: %w", d.cfg.ConfigTopic.Name, err)
	}
	d.configs.MarkStarted()
	if id, err := d.w.ClusterID(); err == nil {
		d.clusterID = id
	}
	// the JVM's worker group member names itself connect-<n> unless client.id is set, and its member ids
	// (connect-1-<uuid>) are what operators see in the group's description
	gprops := maps.Clone(d.props)
	if gprops["client.id"] == "" {
		gprops["client.id"] = "connect-1"
	}
	gclient, err := kafka.Open(ctx, gprops)
	if err != nil {
		return err
	}
	d.member, err = group.NewMember(gclient, group.Config{GroupID: d.cfg.GroupID, SessionTimeout: d.cfg.SessionTimeout,
		RebalanceTimeout: d.cfg.RebalanceTimeout, HeartbeatInterval: d.cfg.HeartbeatInterval, MaxDelay: d.cfg.MaxDelay,
		UnsyncBackoff: d.cfg.UnsyncBackoff, Protocol: d.cfg.Protocol, PeerProbeInterval: d.cfg.PeerProbeInterval}, d)
	if err != nil {
		gclient.Close()
		return err
	}
	close(d.started) // REST calls go on: the config topic is read and the member exists (leader lookups)
	lctx, lcancel := context.WithCancel(context.Background())
	d.loopCancel, d.loopDone = lcancel, make(chan struct{})
	go d.loop(lctx)
	mctx, mcancel := context.WithCancel(context.Background())
	d.memberCancel, d.memberDone = mcancel, make(chan struct{})
	go func() { defer close(d.memberDone); _ = d.member.Run(mctx); gclient.Close() }()
	return nil
}

// Stop stops everything local and leaves the group (its work is reassigned after the delay). Local work is
// stopped first (final offset commits), so that nobody else starts our tasks while they still run here, as
// the JVM herder halts before leaving; but the group is left after leaveWait at the latest, so that a task
// slow to stop (a long put or flush) does not hold up the rebalance. A task whose consumer waits in its
// consumer group's join is woken out of it by its stop and leaves that group at once.
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
	stopped := make(chan struct{})
	go func() { defer close(stopped); d.revoke(local) }()
	wait := time.NewTimer(d.leaveWait())
	select {
	case <-stopped:
	case <-wait.C:
		slog.Info("leaving the group while local work still stops", "waited", d.leaveWait())
	}
	wait.Stop()
	if d.memberCancel != nil {
		d.memberCancel()
		<-d.memberDone
	}
	<-stopped // each task's graceful stop is bounded by task.shutdown.graceful.timeout.ms
	d.w.Stop()
	d.sends.Wait() // before the config log closes
	if d.statusCancel != nil {
		d.statusCancel()
		<-d.statusDone // queued statuses are written before the log closes
	}
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
	defer d.q.close()                       // nothing is queued or kept once the loop ends
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

func (d *Distributed) isLeader() (bool, string) {
	if d.member == nil {
		return false, ""
	}
	_, url, self := d.member.Leader()
	return self, url
}
