// Package worker runs what the herder assigns: connector instances and sink tasks (the JVM's Worker and
// WorkerSinkTask). It holds no cluster state: the herder tells it what to start, stop, pause and resume.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/metrics"
	"github.com/connectd/connectd/internal/state"
)

// Worker runs connectors and tasks on this process.
type Worker struct {
	cfg      *Config
	reg      *connect.Registry
	listener state.Listener
	id       string

	mu         sync.Mutex
	connectors map[string]*connectorRunner
	tasks      map[state.TaskID]*sinkTask

	shared connect.SharedValues // what its connectors and tasks share (connect.WorkerValues)
}

// New creates a worker. The listener receives every connector and task state change.
func New(cfg *Config, reg *connect.Registry, listener state.Listener) *Worker {
	raw := cfg.raw
	if raw == nil {
		raw = cfg.Props
	}
	slog.Info("WorkerConfig values", "config", FormatConfig(RedactConfig(raw, nil)),
		"config_providers", strings.Join(cfg.Providers.Providers(), ","))
	return &Worker{cfg: cfg, reg: reg, listener: listener, id: cfg.WorkerID(),
		connectors: map[string]*connectorRunner{}, tasks: map[state.TaskID]*sinkTask{}}
}

// ID is the worker id shown in status (advertised host:port).
func (w *Worker) ID() string { return w.id }

// Config is the worker configuration.
func (w *Worker) Config() *Config { return w.cfg }

// ResolveConfig resolves the config provider references of a connector or task config (the JVM's
// WorkerConfigTransformer); the result is only handed to plugins, never stored or shown.
func (w *Worker) ResolveConfig(props map[string]string) (map[string]string, error) {
	return w.cfg.Providers.Transform(props)
}

// Registry is the plugin registry the worker instantiates from.
func (w *Worker) Registry() *connect.Registry { return w.reg }

type connectorRunner struct {
	name      string
	conn      connect.SinkConnector
	plugin    *connect.Plugin
	props     map[string]string // as stored: provider references unresolved
	target    state.Target
	started   bool
	onReconf  func()
	failedErr error
	version   string // conn.Version(), read once at instantiation as the JVM's WorkerConnector does

	resolvedTasksMax string // tasks.max as the connector was last started with
}

// referencedTasksMax is tasks.max as resolved at the connector's start, when the stored value is a reference.
func (r *connectorRunner) referencedTasksMax() (int, bool) {
	if !configprovider.HasReference(r.props["tasks.max"]) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(r.resolvedTasksMax))
	return n, err == nil && n >= 1
}

type connectorCtx struct {
	pluginRuntime
	w *Worker
	r *connectorRunner
}

func (c *connectorCtx) RequestTaskReconfiguration() {
	if c.r.onReconf != nil {
		go c.r.onReconf()
	}
}

func (c *connectorCtx) RaiseError(err error) {
	c.w.listener.ConnectorState(c.r.name, state.Failed, Trace(err))
}

// ConnectorVersion is the version() of the connector instance this worker runs, nil when it runs none (the
// JVM's Worker.connectorVersion, shown in status bodies and status records since KIP-891).
func (w *Worker) ConnectorVersion(name string) *string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.connectors[name]; r != nil {
		v := r.version
		return &v
	}
	return nil
}

// TaskVersion is the version() of the task instance this worker runs, nil when it runs none (the JVM's
// Worker.taskVersion).
func (w *Worker) TaskVersion(id state.TaskID) *string {
	w.mu.Lock()
	st := w.tasks[id]
	w.mu.Unlock()
	if st == nil || st.task == nil {
		return nil
	}
	v := st.task.Version()
	return &v
}

// StartConnector starts (or, for PAUSED/STOPPED targets, only records) a connector instance. onReconfigure
// is called when the connector asks for its task configs to be regenerated.
func (w *Worker) StartConnector(name string, props map[string]string, target state.Target, onReconfigure func()) error {
	w.mu.Lock()
	if _, ok := w.connectors[name]; ok {
		w.mu.Unlock()
		return fmt.Errorf("connector %s is already running on this worker", name)
	}
	conn, plugin, err := w.reg.NewSinkConnector(props["connector.class"])
	if err != nil {
		w.mu.Unlock()
		w.listener.ConnectorState(name, state.Failed, Trace(err))
		return err
	}
	r := &connectorRunner{name: name, conn: conn, plugin: plugin, props: props, target: target, onReconf: onReconfigure,
		version: conn.Version()}
	w.connectors[name] = r
	w.mu.Unlock()
	conn.Initialize(&connectorCtx{w: w, r: r})
	return w.applyConnectorTarget(r, target)
}

func (w *Worker) applyConnectorTarget(r *connectorRunner, target state.Target) error {
	r.target = target
	switch target {
	case state.Stopped:
		if r.started {
			r.started = false
			if err := r.conn.Stop(); err != nil {
				slog.Warn("stopping connector", "connector", r.name, "error", err)
			}
		}
		w.listener.ConnectorState(r.name, state.StoppedS, "")
		return nil
	default:
		if !r.started {
			// Resolved at every start: a restart picks up rotated secrets.
			props, err := w.ResolveConfig(r.props)
			if err == nil {
				slog.Info("SinkConnectorConfig values", "connector", r.name,
					"config", FormatConfig(RedactConfig(r.props, []*connect.ConfigDef{r.conn.ConfigDef()})))
				r.resolvedTasksMax = props["tasks.max"]
				err = r.conn.Start(props)
			}
			if err != nil {
				r.failedErr = err
				w.listener.ConnectorState(r.name, state.Failed, Trace(fmt.Errorf("Failed to start connector %s: %w", r.name, err)))
				return err
			}
			r.started, r.failedErr = true, nil
		}
		note := ""
		if n, ok := r.conn.(connect.StatusNoter); ok {
			note = n.StatusNote()
		}
		if target == state.Paused {
			w.listener.ConnectorState(r.name, state.PausedS, note)
		} else {
			w.listener.ConnectorState(r.name, state.Running, note)
		}
	}
	return nil
}

// ConnectorTaskConfigs asks a started connector for its task configs; each gets task.class and the topics
// keys, as the JVM adds them. The connector generates them from its resolved config; every key the stored
// connector config sets with a provider reference gets the reference back (the JVM's reverseTransform),
// so that task configs are stored and shown with references, not with what they resolve to.
func (w *Worker) ConnectorTaskConfigs(name string, maxTasks int) ([]map[string]string, error) {
	w.mu.Lock()
	r := w.connectors[name]
	w.mu.Unlock()
	if r == nil {
		return nil, fmt.Errorf("connector %s is not running on this worker", name)
	}
	if !r.started {
		if r.failedErr != nil {
			return nil, r.failedErr
		}
		return nil, nil
	}
	if n, ok := r.referencedTasksMax(); ok {
		maxTasks = n // the herder read the stored tasks.max, a reference
	}
	if limit := w.cfg.TasksMaxLimit; limit > 0 && maxTasks > limit { // stored before the limit was set
		return nil, fmt.Errorf("connector %s asks for tasks.max=%d, more than this worker's %s=%d", name, maxTasks, TasksMaxPerWorkerKey, limit)
	}
	cfgs, err := r.conn.TaskConfigs(maxTasks)
	if err != nil {
		return nil, err
	}
	if len(cfgs) > maxTasks {
		return nil, fmt.Errorf("connector %s generated %d task configs, more than tasks.max=%d", name, len(cfgs), maxTasks)
	}
	taskClass := taskClassOf(r.conn, r.plugin)
	out := make([]map[string]string, len(cfgs))
	for i, c := range cfgs {
		m := make(map[string]string, len(c)+2)
		for k, v := range c {
			m[k] = v
		}
		m["task.class"] = taskClass
		if v, ok := r.props["topics"]; ok {
			m["topics"] = v
		}
		if v, ok := r.props["topics.regex"]; ok {
			m["topics.regex"] = v
		}
		out[i] = m
	}
	return configprovider.ReverseTransform(r.props, out), nil
}

// StopConnector stops and forgets a connector instance (its tasks are stopped separately).
func (w *Worker) StopConnector(name string) {
	w.mu.Lock()
	r := w.connectors[name]
	delete(w.connectors, name)
	w.mu.Unlock()
	if r != nil && r.started {
		if err := r.conn.Stop(); err != nil {
			slog.Warn("stopping connector", "connector", name, "error", err)
		}
	}
}

// SetTargetState pauses, resumes or stops a connector and pauses or resumes its tasks.
func (w *Worker) SetTargetState(name string, target state.Target) {
	w.mu.Lock()
	r := w.connectors[name]
	var ts []*sinkTask
	for id, t := range w.tasks {
		if id.Connector == name {
			ts = append(ts, t)
		}
	}
	w.mu.Unlock()
	if r != nil && r.target != target {
		_ = w.applyConnectorTarget(r, target)
	}
	if target == state.Stopped {
		return // the herder stops the tasks
	}
	for _, t := range ts {
		t.sendTarget(target)
	}
}

// StartTask starts a sink task with its connector's and its own config.
func (w *Worker) StartTask(id state.TaskID, connProps, taskProps map[string]string, target state.Target) error {
	st, err := w.newSinkTask(id, connProps, taskProps, target)
	if err != nil {
		w.listener.TaskState(id, state.Failed, Trace(err))
		return err
	}
	w.mu.Lock()
	if _, dup := w.tasks[id]; dup {
		w.mu.Unlock()
		return fmt.Errorf("task %s is already running on this worker", id)
	}
	w.tasks[id] = st
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	st.cancel = func() {
		cancel() // the consumer leaves the group; the revocation makes the final commit
	}
	go st.run(ctx)
	return nil
}

func (w *Worker) newSinkTask(id state.TaskID, rawConnProps, rawTaskProps map[string]string, target state.Target) (*sinkTask, error) {
	connProps, err := w.ResolveConfig(rawConnProps)
	if err != nil {
		return nil, fmt.Errorf("resolving the config of connector %s: %w", id.Connector, err)
	}
	taskProps, err := w.ResolveConfig(rawTaskProps)
	if err != nil {
		return nil, fmt.Errorf("resolving the config of task %s: %w", id, err)
	}
	conn, plugin, err := w.reg.NewSinkConnector(connProps["connector.class"])
	if err != nil {
		return nil, err
	}
	slog.Info("TaskConfig values", "task", id.String(),
		"config", FormatConfig(RedactConfig(rawTaskProps, []*connect.ConfigDef{conn.ConfigDef()})))
	st := &sinkTask{
		id: id, w: w, task: conn.NewTask(), taskProps: taskProps, connProps: connProps,
		taskClass: taskClassOf(conn, plugin),
		log:       slog.With("connector", id.Connector, "task", id.Task),
		targetCh:  make(chan state.Target, 1), commitReq: make(chan struct{}, 1), noteReq: make(chan struct{}, 1),
		events: make(chan groupEvent), batches: make(chan *batch), done: make(chan struct{}),
		cancelled: make(chan struct{}), loopDone: make(chan struct{}), rebalanceWanted: make(chan struct{}, 1),
		assignment: map[connect.TopicPartition]bool{}, current: map[connect.TopicPartition]int64{}, pending: map[connect.TopicPartition]int64{},
		lastCommitted: map[connect.TopicPartition]int64{}, taskPaused: map[connect.TopicPartition]bool{},
		stashed: map[connect.TopicPartition][]*batch{}, pendingSeeks: map[connect.TopicPartition]int64{},
		seekEpoch: map[connect.TopicPartition]uint64{},
		raw:       map[rawKey]*kgo.Record{}, target: target,
	}
	if w.cfg.TopicTracking {
		st.activeTopics = map[string]bool{}
	}
	if st.keyConv, st.keyConvClass, err = w.converter(connProps, "key.converter", true); err != nil {
		return nil, err
	}
	if st.valConv, st.valConvClass, err = w.converter(connProps, "value.converter", false); err != nil {
		return nil, err
	}
	if st.hdrConv, st.hdrConvClass, err = w.headerConverter(connProps); err != nil {
		return nil, err
	}
	if st.chain, err = buildTransformChain(w.reg, connProps); err != nil {
		return nil, err
	}
	if st.errs, err = newErrorHandler(id.Connector, id.Task, connProps, w.cfg.ClientProps("producer")); err != nil {
		return nil, err
	}
	st.metrics = metrics.ForTask(id.Connector, id.Task)
	st.errs.metrics = st.metrics
	topics := taskProps["topics"]
	if topics == "" {
		topics = connProps["topics"]
	}
	st.topics = splitList(topics)
	if re := firstNonEmpty(taskProps["topics.regex"], connProps["topics.regex"]); re != "" {
		if st.topicsRegex, err = regexp.Compile("^(?:" + re + ")$"); err != nil {
			return nil, fmt.Errorf("invalid topics.regex %q: %w", re, err)
		}
	}
	if len(st.topics) == 0 && st.topicsRegex == nil {
		return nil, &connect.ConfigError{Message: "Must configure one of topics or topics.regex"}
	}
	return st, nil
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}

// converter instantiates the connector's converter if it names one, else the worker's (JVM precedence).
func (w *Worker) converter(connProps map[string]string, key string, isKey bool) (connect.Converter, string, error) {
	class, props := connProps[key], connect.WithPrefix(connProps, key+".")
	if class == "" {
		class, props = w.cfg.Props[key], connect.WithPrefix(w.cfg.Props, key+".")
	}
	if class == "" {
		return nil, "", &connect.ConfigError{Message: fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", key)}
	}
	c, err := w.reg.NewConverter(class)
	if err != nil {
		return nil, "", err
	}
	if err := c.Configure(props, isKey); err != nil {
		return nil, "", fmt.Errorf("configuring %s %s: %w", key, class, err)
	}
	return c, w.className(class), nil
}

// className is the full class name of a plugin named by class or alias (for error context).
func (w *Worker) className(name string) string {
	if p, ok := w.reg.Lookup(name); ok {
		return p.Class
	}
	return name
}

func (w *Worker) headerConverter(connProps map[string]string) (connect.HeaderConverter, string, error) {
	class, props := connProps["header.converter"], connect.WithPrefix(connProps, "header.converter.")
	if class == "" {
		class, props = w.cfg.Props["header.converter"], connect.WithPrefix(w.cfg.Props, "header.converter.")
	}
	if class == "" {
		class = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
	}
	c, err := w.reg.NewHeaderConverter(class)
	if err != nil {
		return nil, "", err
	}
	if err := c.Configure(props); err != nil {
		return nil, "", fmt.Errorf("configuring header.converter %s: %w", class, err)
	}
	return c, w.className(class), nil
}

// StopTasks stops tasks concurrently with one graceful deadline for all (task.shutdown.graceful.timeout.ms);
// tasks still running then are cancelled (their final commit skipped) and abandoned.
func (w *Worker) StopTasks(ids []state.TaskID) {
	w.mu.Lock()
	var ts []*sinkTask
	for _, id := range ids {
		if t, ok := w.tasks[id]; ok {
			ts = append(ts, t)
			delete(w.tasks, id)
		}
	}
	w.mu.Unlock()
	for _, t := range ts {
		t.cancel()
	}
	deadline := time.After(w.cfg.GracefulShutdown)
	for _, t := range ts {
		select {
		case <-t.done:
		case <-deadline:
			for _, t2 := range ts {
				select {
				case <-t2.done:
				default:
					close(t2.cancelled)
					slog.Warn("graceful stop of task timed out; cancelling it", "task", t2.id.String())
				}
			}
			return
		}
	}
}

// Tasks lists the ids of tasks running here, sorted.
func (w *Worker) Tasks() []state.TaskID {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]state.TaskID, 0, len(w.tasks))
	for id := range w.tasks {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Connector != out[j].Connector {
			return out[i].Connector < out[j].Connector
		}
		return out[i].Task < out[j].Task
	})
	return out
}

// TasksOf lists the ids of a connector's tasks running here.
func (w *Worker) TasksOf(name string) []state.TaskID {
	var out []state.TaskID
	for _, id := range w.Tasks() {
		if id.Connector == name {
			out = append(out, id)
		}
	}
	return out
}

// Connectors lists the connectors instantiated here.
func (w *Worker) Connectors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.connectors))
	for n := range w.connectors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Stop stops everything (tasks with the graceful deadline, then connectors).
func (w *Worker) Stop() {
	w.StopTasks(w.Tasks())
	for _, n := range w.Connectors() {
		w.StopConnector(n)
	}
}

func (w *Worker) topicActive(connector, topic string, task int) {
	if tl, ok := w.listener.(state.TopicListener); ok {
		tl.TopicActive(connector, topic, task)
	}
}

// ConsumerGroup is the sink connector's consumer group (consumer.override.group.id wins, then the worker's
// consumer.group.id, else connect-<name>). connProps may be the stored config: a reference in the group id
// is resolved.
func (w *Worker) ConsumerGroup(name string, connProps map[string]string) string {
	if g := connProps["consumer.override.group.id"]; g != "" {
		if configprovider.HasReference(g) {
			if r, err := w.ResolveConfig(map[string]string{"g": g}); err == nil {
				g = r["g"]
			}
		}
		return g
	}
	if g := w.cfg.Props["consumer.group.id"]; g != "" {
		return g
	}
	return "connect-" + name
}

// IsSinkConnector reports whether the class names a sink connector this runtime can run.
func (w *Worker) IsSinkConnector(class string) bool {
	p, ok := w.reg.Lookup(class)
	return ok && p.Type == connect.PluginSink
}

// taskClassOf names a connector's task class as the JVM would (DLQ headers, task.class).
func taskClassOf(conn connect.SinkConnector, plugin *connect.Plugin) string {
	if tc, ok := conn.(connect.JVMTaskClasser); ok {
		return tc.TaskClass()
	}
	return plugin.Class + "$Task"
}

// sendTarget hands the task its new target state without blocking (the latest one wins): the herder must not
// wait on a task that is busy in put() or retrying.
func (st *sinkTask) sendTarget(t state.Target) {
	for {
		select {
		case st.targetCh <- t:
			return
		default:
		}
		select {
		case <-st.targetCh: // drop the stale one
		default:
		}
	}
}
