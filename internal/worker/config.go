package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/configprovider"
)

// PprofEnableKey (connectd's own worker key) serves Go's runtime profiles at /debug/pprof/ on the REST
// listeners, behind the REST authentication. Off by default.
const PprofEnableKey = "connectd.debug.pprof.enable"

// ScratchDirKey (connectd's own worker key) is the directory of the temporary files the worker and its
// plugins write (docs/DEPLOY.md lists them). Unset, it is scratchSubdir beside the standalone offsets
// file (offset.storage.file.filename), else the system's temporary directory (os.TempDir).
const ScratchDirKey = "connectd.scratch.dir"

// scratchSubdir is the default scratch directory's name in the worker's data directory.
const scratchSubdir = "scratch"

// connectd's own worker keys of the reconcile schedule (docs/RECONCILE.md): the reconcile properties files,
// as `connectd reconcile` takes them, compared every interval (0: only on POST /connectd/reconcile).
const (
	ReconcileConfigsKey  = "connectd.reconcile.configs"
	ReconcileIntervalKey = "connectd.reconcile.interval.ms"
	ReconcileTimeoutKey  = "connectd.reconcile.timeout.ms"
	reconcilePrefix      = "connectd.reconcile."
)

// connectd's own worker keys of the REST server under hostile load (docs/SECURITY.md): a connection idle this
// long is closed (Jetty's idle timeout, which also bounds each read of a request), and at most this many
// connections are open at once (-1: half the process's file-handle limit, the rest kept for Kafka clients).
const (
	RESTIdleTimeoutKey    = "connectd.rest.idle.timeout.ms"
	RESTMaxConnectionsKey = "connectd.rest.max.connections"
)

// TasksMaxPerWorkerKey (connectd's own worker key) bounds tasks.max of every connector this worker accepts:
// each task holds a consumer with its connections, so one request for 100,000 tasks would exhaust the
// process's file handles.
const TasksMaxPerWorkerKey = "connectd.tasks.max.limit"

// RetentionRequiredKey (connectd's own worker key) is the replay window the topics that sink connectors consume
// must keep: a topic whose retention.ms is shorter gets a warning and connectd_sink_topic_retention_short=1.
// 0 leaves the check to the metric connectd_sink_topic_retention_seconds alone.
const RetentionRequiredKey = "connectd.topic.retention.required.ms"

// DefaultTasksMaxPerWorker is generous: far more tasks than one worker runs well.
const DefaultTasksMaxPerWorker = 1000

// WorkerConfigDef lists the worker keys we read, with the JVM's defaults.
func WorkerConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "bootstrap.servers", Type: connect.ConfigList, Default: "localhost:9092", Importance: connect.High}).
		Define(connect.ConfigKey{Name: "key.converter", Type: connect.ConfigClass, Default: connect.NoDefault, Importance: connect.High}).
		Define(connect.ConfigKey{Name: "value.converter", Type: connect.ConfigClass, Default: connect.NoDefault, Importance: connect.High}).
		Define(connect.ConfigKey{Name: "header.converter", Type: connect.ConfigClass, Default: "org.apache.kafka.connect.storage.SimpleHeaderConverter", Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "offset.flush.interval.ms", Type: connect.ConfigLong, Default: int64(60000), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "offset.flush.timeout.ms", Type: connect.ConfigLong, Default: int64(5000), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "task.shutdown.graceful.timeout.ms", Type: connect.ConfigLong, Default: int64(5000), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "listeners", Type: connect.ConfigList, Default: "http://:8083", Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "rest.advertised.host.name", Type: connect.ConfigString, Default: "", Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "rest.advertised.port", Type: connect.ConfigInt, Default: nil, Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "rest.advertised.listener", Type: connect.ConfigString, Default: "", Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "connector.client.config.override.policy", Type: connect.ConfigString, Default: "All", Validator: connect.In("All", "None", "Principal"), Importance: connect.Medium}).
		Define(connect.ConfigKey{Name: "topic.tracking.enable", Type: connect.ConfigBoolean, Default: true, Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "topic.tracking.allow.reset", Type: connect.ConfigBoolean, Default: true, Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "offset.storage.file.filename", Type: connect.ConfigString, Default: "", Importance: connect.Low}).
		Define(connect.ConfigKey{Name: "group.id", Type: connect.ConfigString, Default: "", Importance: connect.High}).
		Define(connect.ConfigKey{Name: PprofEnableKey, Type: connect.ConfigBoolean, Default: false, Importance: connect.Low}).
		Define(connect.ConfigKey{Name: ScratchDirKey, Type: connect.ConfigString, Default: "", Importance: connect.Low}).
		Define(connect.ConfigKey{Name: ReconcileConfigsKey, Type: connect.ConfigList, Default: "", Importance: connect.Low}).
		Define(connect.ConfigKey{Name: ReconcileIntervalKey, Type: connect.ConfigLong, Default: int64(300000), Validator: connect.AtLeast(0), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: ReconcileTimeoutKey, Type: connect.ConfigLong, Default: int64(1800000), Validator: connect.AtLeast(0), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: RESTIdleTimeoutKey, Type: connect.ConfigLong, Default: int64(30000), Validator: connect.AtLeast(1), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: RESTMaxConnectionsKey, Type: connect.ConfigInt, Default: -1, Validator: connect.AtLeast(-1), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: TasksMaxPerWorkerKey, Type: connect.ConfigInt, Default: DefaultTasksMaxPerWorker, Validator: connect.AtLeast(1), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: RetentionRequiredKey, Type: connect.ConfigLong, Default: int64(0), Validator: connect.AtLeast(0), Importance: connect.Low}).
		Define(connect.ConfigKey{Name: configprovider.ProvidersKey, Type: connect.ConfigList, Default: "", Importance: connect.Low})
}

// Config is a parsed worker configuration.
type Config struct {
	// Props are the worker properties with their config provider references resolved.
	Props map[string]string
	// Providers resolves references in connector configs (nil when config.providers is unset).
	Providers              *configprovider.Transformer
	raw                    map[string]string
	OffsetFlushInterval    time.Duration
	OffsetFlushTimeout     time.Duration
	GracefulShutdown       time.Duration
	OverridePolicy         string
	TopicTracking          bool
	TopicTrackingReset     bool
	Listeners              []string
	AdvertisedHost         string
	AdvertisedPort         int
	AdvertisedListenerType string
	// Pprof serves /debug/pprof/ (PprofEnableKey).
	Pprof bool
	// ReconcileConfigs are the reconcile properties files the worker compares on a schedule (ReconcileConfigsKey).
	ReconcileConfigs []string
	// ReconcileInterval is the time between scheduled reconcile runs; 0: runs only when asked.
	ReconcileInterval time.Duration
	// ReconcileTimeout bounds one pair's run (ReconcileTimeoutKey); 0: unbounded.
	ReconcileTimeout time.Duration
	// ScratchDir is the directory of temporary files (ScratchDirKey, or its default); PrepareScratchDir
	// makes it. ScratchDirSet: it was configured or derived from the data directory, not os.TempDir.
	ScratchDir    string
	ScratchDirSet bool
	// RESTIdleTimeout closes idle REST connections (RESTIdleTimeoutKey).
	RESTIdleTimeout time.Duration
	// RESTMaxConnections caps open REST connections (RESTMaxConnectionsKey); -1: half the file-handle limit.
	RESTMaxConnections int
	// TasksMaxLimit bounds the tasks.max connectors may ask for (TasksMaxPerWorkerKey).
	TasksMaxLimit int
	// RetentionRequired is the replay window consumed topics must keep (RetentionRequiredKey); 0: no warning.
	RetentionRequired time.Duration
	// Distributed is set by the distributed runner (tasks of a connector may run in several processes).
	Distributed bool
}

// ParseConfig validates worker properties. Like the JVM's WorkerConfig, it instantiates the config
// providers the properties declare (a class this worker does not implement is an error) and resolves
// their references in the worker properties themselves.
func ParseConfig(props map[string]string) (*Config, error) {
	providers, err := configprovider.FromWorkerConfig(props)
	if err != nil {
		return nil, err
	}
	resolved, err := providers.Transform(props)
	if err != nil {
		return nil, fmt.Errorf("resolving config provider references in the worker config: %w", err)
	}
	def := WorkerConfigDef()
	c, err := def.Parse(resolved)
	if err != nil {
		return nil, err
	}
	// Unknown keys are ignored as the JVM ignores them, except under our own reconcile prefix: a misspelt
	// key there would silently leave a table pair unchecked.
	for k := range resolved {
		if _, known := def.Key(k); strings.HasPrefix(k, reconcilePrefix) && !known {
			return nil, fmt.Errorf("unknown worker key %s (the reconcile schedule takes %s, %s and %s)", k, ReconcileConfigsKey, ReconcileIntervalKey, ReconcileTimeoutKey)
		}
	}
	wc := &Config{
		Props:                  resolved,
		Providers:              providers,
		raw:                    props,
		OffsetFlushInterval:    time.Duration(c.Long("offset.flush.interval.ms")) * time.Millisecond,
		OffsetFlushTimeout:     time.Duration(c.Long("offset.flush.timeout.ms")) * time.Millisecond,
		GracefulShutdown:       time.Duration(c.Long("task.shutdown.graceful.timeout.ms")) * time.Millisecond,
		OverridePolicy:         c.String("connector.client.config.override.policy"),
		TopicTracking:          c.Bool("topic.tracking.enable"),
		TopicTrackingReset:     c.Bool("topic.tracking.allow.reset"),
		Listeners:              c.List("listeners"),
		AdvertisedHost:         c.String("rest.advertised.host.name"),
		AdvertisedListenerType: c.String("rest.advertised.listener"),
		Pprof:                  c.Bool(PprofEnableKey),
		ReconcileConfigs:       c.List(ReconcileConfigsKey),
		ReconcileInterval:      time.Duration(c.Long(ReconcileIntervalKey)) * time.Millisecond,
		ReconcileTimeout:       time.Duration(c.Long(ReconcileTimeoutKey)) * time.Millisecond,
		RESTIdleTimeout:        time.Duration(c.Long(RESTIdleTimeoutKey)) * time.Millisecond,
		RESTMaxConnections:     c.Int(RESTMaxConnectionsKey),
		TasksMaxLimit:          c.Int(TasksMaxPerWorkerKey),
		RetentionRequired:      time.Duration(c.Long(RetentionRequiredKey)) * time.Millisecond,
	}
	if p, ok := c.Get("rest.advertised.port").(int); ok {
		wc.AdvertisedPort = p
	}
	switch dir, offsets := c.String(ScratchDirKey), c.String("offset.storage.file.filename"); {
	case dir != "":
		wc.ScratchDir, wc.ScratchDirSet = dir, true
	case offsets != "":
		wc.ScratchDir, wc.ScratchDirSet = filepath.Join(filepath.Dir(offsets), scratchSubdir), true
	default:
		wc.ScratchDir = os.TempDir()
	}
	return wc, nil
}

// PrepareScratchDir makes the scratch directory and checks that a file can be written in it, so that a
// read-only or missing directory is reported at start, not at a connector's first record.
func (c *Config) PrepareScratchDir() error {
	if err := os.MkdirAll(c.ScratchDir, 0o700); err != nil {
		return fmt.Errorf("scratch directory (%s): %w", ScratchDirKey, err)
	}
	f, err := os.CreateTemp(c.ScratchDir, "connectd-probe-*")
	if err != nil {
		return fmt.Errorf("scratch directory (%s): %w", ScratchDirKey, err)
	}
	_ = f.Close()
	return os.Remove(f.Name())
}

// ClientProps returns the worker-level properties for one client role: the bare connection keys
// (bootstrap.servers, security.*, sasl.*, ssl.*) overlaid with "<role>." prefixed keys.
func (c *Config) ClientProps(role string) map[string]string {
	out := c.BaseClientProps()
	for k, v := range connect.WithPrefix(c.Props, role+".") {
		out[k] = v
	}
	return out
}

// BaseClientProps are the worker-level Kafka client settings shared by every client role.
func (c *Config) BaseClientProps() map[string]string {
	out := map[string]string{}
	for k, v := range c.Props {
		if k == "bootstrap.servers" || strings.HasPrefix(k, "security.") || strings.HasPrefix(k, "sasl.") ||
			strings.HasPrefix(k, "ssl.") || k == "client.dns.lookup" || k == "metadata.max.age.ms" || k == "request.timeout.ms" {
			out[k] = v
		}
	}
	return out
}

// WorkerID is the advertised host:port of the REST listener, as the JVM reports in status.
func (c *Config) WorkerID() string {
	host, port := c.AdvertisedHost, c.AdvertisedPort
	l := "http://:8083"
	if len(c.Listeners) > 0 {
		l = c.Listeners[0]
	}
	l = l[strings.Index(l, "://")+3:]
	lh, lp := l, "8083"
	if i := strings.LastIndexByte(l, ':'); i >= 0 {
		lh, lp = l[:i], l[i+1:]
	}
	if host == "" {
		host = lh
	}
	if host == "" || host == "0.0.0.0" {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	if port == 0 {
		return host + ":" + lp
	}
	return fmt.Sprintf("%s:%d", host, port)
}
