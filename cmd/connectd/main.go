// Command connectd is a Kafka Connect-compatible sink worker. Subcommands mirror the JVM scripts:
//
//	connectd standalone worker.properties [connector.properties ...]
//	connectd distributed worker.properties
//	connectd dev
//	connectd reconcile [reconcile.properties] [key=value ...]
//	connectd rebuild [rebuild.properties] [key=value ...]
//	connectd erase [flags] [erase.properties] [key=value ...]
//	connectd restore-drill [flags] [drill.properties] [key=value ...]
//	connectd iceberg maintain [flags] [connector.properties] [key=value ...]
//	connectd iceberg scd [flags] [connector.properties] [key=value ...]
//	connectd version
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/connectd/connectd/api"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/gcpace"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/metrics"
	"github.com/connectd/connectd/internal/plugins"
	"github.com/connectd/connectd/internal/props"
	"github.com/connectd/connectd/internal/worker"
)

// Version is set at build time (-ldflags "-X main.Version=...").
var Version = "0.1.0-dev"

// versionText is what `connectd version` prints: the release, and the Kafka Connect version and build commit
// that GET / reports.
func versionText() string {
	return fmt.Sprintf("connectd %s\nversion: %s (Kafka Connect)\ncommit: %s\n", Version, api.ConnectVersion, api.BuildCommit())
}

const usage = `usage:
  connectd standalone worker.properties [connector.properties ...]
  connectd distributed worker.properties
  connectd dev
  connectd reconcile [reconcile.properties] [key=value ...]
  connectd rebuild [rebuild.properties] [key=value ...]
  connectd erase [flags] [erase.properties] [key=value ...]
  connectd restore-drill [flags] [drill.properties] [key=value ...]
  connectd iceberg maintain [flags] [connector.properties] [key=value ...]
  connectd iceberg scd [flags] [connector.properties] [key=value ...]
  connectd config-reference CLASS | -dir DIR
  connectd version`

func main() {
	setupLogging()
	gcpace.Setup(setupMemoryLimit())
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "standalone":
		err = runStandalone(ctx, plugins.Builtin(), os.Args[2:])
	case "distributed":
		err = runDistributed(ctx, plugins.Builtin(), os.Args[2:])
	case "dev":
		err = runDev(ctx, plugins.Builtin(), os.Args[2:])
	case "reconcile":
		reconcileMain(ctx)
	case "rebuild":
		rebuildMain(ctx)
	case "erase":
		eraseMain(ctx)
	case "restore-drill":
		restoreDrillMain(ctx)
	case "iceberg":
		icebergMain(ctx)
	case "config-reference":
		err = configReferenceMain(plugins.Builtin(), os.Args[2:])
	case "version", "--version", "-v":
		fmt.Print(versionText())
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		slog.Error("connectd failed", "error", err)
		os.Exit(1)
	}
}

// setupLogging sends the worker's logs through the named loggers of /admin/loggers: the runtime logs as
// org.apache.kafka.connect.runtime, so that setting a level on it, an ancestor or the root takes effect.
func setupLogging() {
	if v := os.Getenv("CONNECTD_LOG_LEVEL"); v != "" {
		var level slog.Level
		if level.UnmarshalText([]byte(v)) == nil {
			logging.Default.Configure(logging.RootLogger, level)
		}
	}
	slog.SetDefault(logging.Default.Logger(runtimeLogger))
}

// runtimeLogger names the logger of the worker runtime, after the JVM's package.
const runtimeLogger = "org.apache.kafka.connect.runtime"

// loadWorkerProps reads the worker file and overlays CONNECT_* environment variables.
func loadWorkerProps(path string) (map[string]string, error) {
	p := map[string]string{}
	if path != "" {
		var err error
		if p, err = props.Load(path); err != nil {
			return nil, fmt.Errorf("reading worker config: %w", err)
		}
	}
	for k, v := range props.FromEnv(os.Environ()) {
		p[k] = v
	}
	return p, nil
}

// resolveListeners binds port 0 listeners to a concrete free port so that the worker id is known up front.
func resolveListeners(p map[string]string) error {
	ls := p["listeners"]
	if ls == "" {
		ls = "http://:8083"
	}
	var out []string
	for _, l := range strings.Split(ls, ",") {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, ":0") {
			host := strings.TrimSuffix(l[strings.Index(l, "://")+3:], ":0")
			lis, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				return fmt.Errorf("binding %s: %w", l, err)
			}
			port := lis.Addr().(*net.TCPAddr).Port
			lis.Close()
			l = strings.TrimSuffix(l, ":0") + ":" + strconv.Itoa(port)
		}
		out = append(out, l)
	}
	p["listeners"] = strings.Join(out, ",")
	return nil
}

// restOptions builds the REST server's options from the worker config; security settings it cannot honour
// (an unknown REST extension, unreadable key stores or JAAS files) are errors.
func restOptions(cfg *worker.Config) ([]api.Option, error) {
	security, err := api.SecurityOptions(cfg.Props, os.Getenv("KAFKA_OPTS"))
	if err != nil {
		return nil, fmt.Errorf("invalid worker config: %w", err)
	}
	opts := []api.Option{
		api.WithListeners(cfg.Listeners...),
		api.WithAdvertised(cfg.AdvertisedHost, cfg.AdvertisedPort, cfg.AdvertisedListenerType),
		api.WithVersion(api.ConnectVersion, api.BuildCommit()),
		api.WithTopicTracking(cfg.TopicTracking, cfg.TopicTrackingReset),
		api.WithCORS(cfg.Props["access.control.allow.origin"], cfg.Props["access.control.allow.methods"]),
		api.WithResponseHeaders(cfg.Props["response.http.headers.config"]),
		api.WithSinkConnectorConfigDef(herder.ConnectorConfigDef()),
		api.WithExtraHandler("/metrics", metrics.Handler()),
		api.WithIdleTimeout(cfg.RESTIdleTimeout),
		api.WithMaxConnections(cfg.RESTMaxConnections),
	}
	if cfg.Pprof {
		opts = append(opts, api.WithExtraHandler("/debug/pprof/", pprofHandler()))
	}
	return append(opts, security...), nil
}

// prepareScratch makes the scratch directory. A configured one (or one in the data directory) that cannot be
// written is an error; the system's temporary directory is only warned about, since only some plugins
// write temporary files.
func prepareScratch(cfg *worker.Config) error {
	err := cfg.PrepareScratchDir()
	if err == nil || cfg.ScratchDirSet {
		return err
	}
	slog.Warn("no usable scratch directory: the Iceberg sink will fail to spool; set "+worker.ScratchDirKey, "dir", cfg.ScratchDir, "error", err)
	return nil
}

func runStandalone(ctx context.Context, reg *connect.Registry, args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: connectd standalone worker.properties [connector.properties ...]")
	}
	wp, err := loadWorkerProps(args[0])
	if err != nil {
		return err
	}
	var connectorFiles []map[string]string
	for _, f := range args[1:] {
		cp, err := props.Load(f)
		if err != nil {
			return fmt.Errorf("reading connector config: %w", err)
		}
		connectorFiles = append(connectorFiles, cp)
	}
	return serveStandalone(ctx, reg, wp, connectorFiles, nil)
}

// serveStandalone runs a standalone herder and REST server with the plugins of reg until ctx ends. ready, if
// set, is called once the REST server answers.
func serveStandalone(ctx context.Context, reg *connect.Registry, wp map[string]string, connectors []map[string]string, ready func(h *herder.Standalone, restURL string)) error {
	start := time.Now()
	if err := resolveListeners(wp); err != nil {
		return err
	}
	cfg, err := worker.ParseConfig(wp)
	if err != nil {
		return fmt.Errorf("invalid worker config: %w", err)
	}
	if err := prepareScratch(cfg); err != nil {
		return err
	}
	ropts, err := restOptions(cfg)
	if err != nil {
		return err
	}
	sched, err := workerReconcile(cfg)
	if err != nil {
		return err
	}
	drills, err := workerRestoreDrills(cfg)
	if err != nil {
		return err
	}
	if sched != nil {
		ropts = append(ropts, api.WithReconciler(reconcileEndpoint{sched}))
	}
	ropts = append(ropts, api.WithSCDMaterializer(scdEndpoint{cfg}), api.WithRegistry(reg))
	status := herder.NewStatusTracker(cfg.WorkerID())
	w := worker.New(cfg, reg, status)
	h := herder.NewStandalone(w, status)
	srv := api.NewServer(h, ropts...)
	if err := srv.Start(); err != nil {
		return fmt.Errorf("starting REST server: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return err
	}
	slog.Info("Kafka Connect started", "worker_id", cfg.WorkerID(), "rest", srv.AdvertisedURL(), "startup", time.Since(start).Round(time.Millisecond))
	for _, cp := range connectors {
		name := strings.TrimSpace(cp["name"])
		if _, _, err := h.PutConnectorConfig(ctx, name, cp, "", true); err != nil {
			srv.Shutdown(context.Background())
			h.Stop()
			return fmt.Errorf("creating connector %s: %w", name, err)
		}
		slog.Info("created connector", "name", name)
	}
	if drills != nil {
		go drills(ctx)
	}
	if sched != nil {
		sched.Start(ctx)
	}
	if ready != nil {
		ready(h, srv.AdvertisedURL())
	}
	<-ctx.Done()
	slog.Info("Kafka Connect stopping")
	if sched != nil {
		sched.Stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	h.Stop()
	slog.Info("Kafka Connect stopped")
	return nil
}
