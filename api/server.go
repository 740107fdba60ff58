// Package api is the worker's REST layer: the Kafka Connect 4.x REST API (paths, bodies, status codes and error
// messages as the JVM worker answers them), forwarding to the leader in distributed mode, and the HTTP server.
// It talks only to herder.Herder (plus the optional interfaces declared next to it).
package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

// Defaults as in the JVM's RestServer.
const (
	DefaultRequestTimeout     = 90 * time.Second
	DefaultHealthCheckTimeout = 10 * time.Second
	DefaultListener           = "http://:8083"
	gracefulShutdownTimeout   = 60 * time.Second
	maxBodyBytes              = 1 << 20 // see docs/SECURITY.md: configurations are far smaller, and a parsed body costs ~100x its size
)

// Server serves the REST API for one worker.
type Server struct {
	h        herder.Herder
	registry *connect.Registry
	loggers  *logging.Registry
	extra    map[string]http.Handler // non-JVM endpoints such as /metrics
	// reconciler serves /connectd/reconcile (nil: not configured, the path is unknown)
	reconciler Reconciler
	// scd serves POST /connectd/connectors/{connector}/scd (nil: the path is unknown)
	scd SCDMaterializer
	log *slog.Logger

	listeners      []string
	adminListeners []string // nil: admin endpoints on the main listeners; empty: disabled
	advHost        string
	advPort        int
	advProtocol    string
	serverTLS      *tls.Config // https listeners
	adminTLS       *tls.Config // https admin listeners
	clientTLS      *tls.Config // requests to other workers
	auth           *basicAuth  // nil: no authentication
	allowOrigin    string
	allowMethods   string
	headerRules    []headerRule
	requestTimeout time.Duration
	healthTimeout  time.Duration
	rebalanceWait  time.Duration
	version        string
	commit         string
	topicTracking  bool
	topicReset     bool
	client         *http.Client
	baseSinkDef    *connect.ConfigDef
	now            func() time.Time
	optErr         error
	bodies         *bodyBudget
	idleTimeout    time.Duration
	maxConns       int // < 0: defaultMaxConnections
	conns          *connLimit

	mu      sync.Mutex
	servers []*http.Server
	bound   []boundListener
	wg      sync.WaitGroup
}

type boundListener struct {
	protocol string
	host     string
	port     int
	admin    bool
	addr     net.Addr
}

// Option configures a Server.
type Option func(*Server)

// WithListeners sets `listeners` (protocol://host:port, protocol http or https).
func WithListeners(listeners ...string) Option {
	return func(s *Server) { s.listeners = listeners }
}

// WithAdminListeners sets `admin.listeners`: nil serves /admin on the main listeners, an empty non-nil slice
// disables /admin, otherwise /admin is served only on these.
func WithAdminListeners(listeners []string) Option {
	return func(s *Server) { s.adminListeners = listeners }
}

// WithAdvertised sets rest.advertised.host.name, rest.advertised.port (0 = unset) and rest.advertised.listener.
func WithAdvertised(host string, port int, protocol string) Option {
	return func(s *Server) { s.advHost, s.advPort, s.advProtocol = host, port, strings.ToLower(protocol) }
}

// WithTLS is used for https listeners (main and admin) and forwarding to https leaders.
func WithTLS(cfg *tls.Config) Option {
	return func(s *Server) { s.serverTLS, s.adminTLS, s.clientTLS = cfg, cfg, cfg }
}

// WithListenerTLS sets the TLS settings of the https listeners and of the https admin listeners.
func WithListenerTLS(main, admin *tls.Config) Option {
	return func(s *Server) { s.serverTLS, s.adminTLS = main, admin }
}

// WithClientTLS sets the TLS settings used to reach other workers over https.
func WithClientTLS(cfg *tls.Config) Option { return func(s *Server) { s.clientTLS = cfg } }

// WithBasicAuth enables BasicAuthSecurityRestExtension's authentication with the KafkaConnect section of a
// JAAS login configuration file (PropertyFileLoginModule entries).
func WithBasicAuth(jaasConfigPath string) Option {
	return func(s *Server) {
		a, err := loadBasicAuth(jaasConfigPath)
		if err != nil {
			s.optErr = err   // Start refuses to serve
			a = &basicAuth{} // and Handler, used without Start, lets no one in
		}
		s.auth = a
	}
}

// WithCORS sets access.control.allow.origin and access.control.allow.methods.
func WithCORS(allowOrigin, allowMethods string) Option {
	return func(s *Server) { s.allowOrigin, s.allowMethods = allowOrigin, allowMethods }
}

// WithResponseHeaders sets response.http.headers.config ("[action] [name]:[value]", comma separated; actions
// set, add, setDate, addDate).
func WithResponseHeaders(config string) Option {
	return func(s *Server) {
		rules, err := parseHeaderConfig(config)
		if err != nil {
			s.optErr = err
		}
		s.headerRules = rules
	}
}

// WithRequestTimeout changes the 90 s herder request timeout.
func WithRequestTimeout(d time.Duration) Option { return func(s *Server) { s.requestTimeout = d } }

// WithHealthCheckTimeout changes the 10 s /health timeout.
func WithHealthCheckTimeout(d time.Duration) Option { return func(s *Server) { s.healthTimeout = d } }

// WithRebalanceRetry makes requests that fail with herder.ErrRebalancing wait and retry for up to d before
// answering 409/500 (the JVM answers at once; 0 keeps that).
func WithRebalanceRetry(d time.Duration) Option { return func(s *Server) { s.rebalanceWait = d } }

// WithVersion sets what GET / reports.
func WithVersion(version, commit string) Option {
	return func(s *Server) { s.version, s.commit = version, commit }
}

// WithTopicTracking mirrors topic.tracking.enable and topic.tracking.allow.reset (both default true).
func WithTopicTracking(enabled, allowReset bool) Option {
	return func(s *Server) { s.topicTracking, s.topicReset = enabled, allowReset }
}

// WithExtraHandler serves h at path (GET/HEAD) on the main listeners, outside the JVM's API (e.g. /metrics); a
// path ending in "/" serves the subtree below it.
func WithExtraHandler(path string, h http.Handler) Option {
	return func(s *Server) {
		if s.extra == nil {
			s.extra = map[string]http.Handler{}
		}
		s.extra[path] = h
	}
}

// WithRegistry gives the plugins /connector-plugins lists and validates against (none without it).
func WithRegistry(r *connect.Registry) Option { return func(s *Server) { s.registry = r } }

// WithLoggers replaces logging.Default for /admin/loggers.
func WithLoggers(l *logging.Registry) Option { return func(s *Server) { s.loggers = l } }

// WithLogger sets the server's own logger.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithHTTPClient sets the client used to forward requests to the leader.
func WithHTTPClient(c *http.Client) Option { return func(s *Server) { s.client = c } }

// WithSinkConnectorConfigDef gives the framework's connector keys (the JVM's SinkConnectorConfig.configDef():
// name, connector.class, tasks.max, topics, errors.*, transforms, ...) that GET /connector-plugins/{p}/config
// appends to a sink connector's own keys.
func WithSinkConnectorConfigDef(def *connect.ConfigDef) Option {
	return func(s *Server) { s.baseSinkDef = def }
}

// NewServer builds a server; call Start to listen, or use Handler directly.
func NewServer(h herder.Herder, opts ...Option) *Server {
	s := &Server{
		h:              h,
		registry:       connect.NewRegistry(),
		loggers:        logging.Default,
		listeners:      []string{DefaultListener},
		requestTimeout: DefaultRequestTimeout,
		healthTimeout:  DefaultHealthCheckTimeout,
		version:        ConnectVersion,
		commit:         BuildCommit(),
		topicTracking:  true,
		topicReset:     true,
		now:            time.Now,
		bodies:         newBodyBudget(),
		idleTimeout:    DefaultIdleTimeout,
		maxConns:       -1,
	}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		s.log = s.loggers.Logger("org.apache.kafka.connect.runtime.rest.RestServer")
	}
	if s.auth != nil {
		for _, f := range s.auth.emptyFiles() {
			s.log.Warn(fmt.Sprintf("Credential properties file '%s' is empty; all requests will be permitted", f))
		}
	}
	if s.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if s.clientTLS != nil {
			tr.TLSClientConfig = s.clientTLS
		}
		s.client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // the JVM's client does not follow redirects
		}}
	}
	return s
}

// ConnectVersion is the Kafka Connect release whose REST API, config keys and internal topics this runtime
// matches; GET / reports it as `version`, as a JVM worker reports its own release.
const ConnectVersion = "4.3.1"

// Revision is the commit to report when the go command stamped none: it stamps vcs.revision only in a
// checkout whose .git is a directory and with -buildvcs not false, so builds from a git worktree or a copied
// source tree set it with -ldflags "-X github.com/connectd/connectd/api.Revision=$(git rev-parse HEAD)"
// (make connectd does).
var Revision string

// BuildCommit is the commit the binary was built from, as GET / reports it: the first 16 hex digits of the
// VCS revision the go command stamped (else of Revision), like the JVM's commit id, or "unknown".
func BuildCommit() string {
	var settings []debug.BuildSetting
	if bi, ok := debug.ReadBuildInfo(); ok {
		settings = bi.Settings
	}
	return commitID(settings, Revision)
}

func commitID(settings []debug.BuildSetting, fallback string) string {
	for _, kv := range settings {
		if kv.Key == "vcs.revision" && len(kv.Value) >= 16 {
			return kv.Value[:16]
		}
	}
	if len(fallback) >= 16 {
		return fallback[:16]
	}
	return "unknown"
}

var listenerPattern = regexp.MustCompile(`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)`)

func parseListener(l string) (protocol, host string, port int, err error) {
	m := listenerPattern.FindStringSubmatch(l)
	if m == nil || m[0] != l {
		return "", "", 0, fmt.Errorf("Listener doesn't have the right format (protocol://hostname:port).")
	}
	protocol = strings.ToLower(m[1])
	if protocol != "http" && protocol != "https" {
		return "", "", 0, fmt.Errorf("Listener protocol must be either \"http\" or \"https\".")
	}
	port, err = strconv.Atoi(m[3])
	if err != nil || port < 0 || port > 65535 {
		return "", "", 0, fmt.Errorf("Listener doesn't have the right format (protocol://hostname:port).")
	}
	return protocol, m[2], port, nil
}

// Handler is the main listeners' handler (with /admin and /connectd/reconcile unless admin listeners are
// configured).
func (s *Server) Handler() http.Handler {
	return recoverPanics(s.log, s.wrap(s.router(true, s.adminListeners == nil)))
}

// AdminHandler serves only /admin and /connectd/reconcile (for separate admin listeners).
func (s *Server) AdminHandler() http.Handler {
	return recoverPanics(s.log, s.wrap(s.router(false, true)))
}

// Start binds every listener and serves in the background.
func (s *Server) Start() error {
	if s.optErr != nil {
		return s.optErr
	}
	type spec struct {
		l     string
		admin bool
	}
	var specs []spec
	for _, l := range s.listeners {
		specs = append(specs, spec{l, false})
	}
	for _, l := range s.adminListeners {
		specs = append(specs, spec{l, true})
	}
	main, admin := s.Handler(), s.AdminHandler()
	maxConns := s.maxConns
	if maxConns < 0 {
		maxConns = defaultMaxConnections()
	}
	s.conns = newConnLimit(maxConns) // one cap over every listener: they share the file handles
	for _, sp := range specs {
		protocol, host, port, err := parseListener(sp.l)
		if err != nil {
			s.closeAll()
			return err
		}
		tlsConfig := s.serverTLS
		if sp.admin {
			tlsConfig = s.adminTLS
		}
		if protocol == "https" && tlsConfig == nil {
			s.closeAll()
			return fmt.Errorf("listener %s: https needs a TLS configuration (ssl.keystore.location)", sp.l)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			s.closeAll()
			return fmt.Errorf("Unable to initialize REST server: %w", err)
		}
		if protocol == "https" {
			ln = tls.NewListener(ln, tlsConfig)
		}
		h := main
		if sp.admin {
			h = admin
		}
		// Connection-level errors (failed TLS handshakes) are logged at debug, as Jetty does.
		// Jetty's idle timeout closes a connection without a request and bounds a stalled read of one.
		srv := &http.Server{Handler: h, ReadHeaderTimeout: s.idleTimeout, ReadTimeout: s.idleTimeout, IdleTimeout: s.idleTimeout,
			ConnState: s.conns.track, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
		s.mu.Lock()
		s.servers = append(s.servers, srv)
		s.bound = append(s.bound, boundListener{protocol: protocol, host: host, port: port, admin: sp.admin, addr: ln.Addr()})
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("REST listener failed", "listener", sp.l, "error", err)
			}
		}()
	}
	s.log.Info("REST server listening", "advertised", s.AdvertisedURL())
	return nil
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range s.servers {
		_ = srv.Close()
	}
	s.servers = nil
}

// Transport is the HTTP transport the server uses to reach other workers (with the REST client TLS settings),
// for the herder's own requests between workers.
func (s *Server) Transport() http.RoundTripper {
	if s.client.Transport != nil {
		return s.client.Transport
	}
	return http.DefaultTransport
}

// Addrs lists the bound addresses of the main listeners (after Start).
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []net.Addr
	for _, b := range s.bound {
		if !b.admin {
			out = append(out, b.addr)
		}
	}
	return out
}

// AdvertisedURL is the URL other workers use to reach this one, e.g. "http://10.0.0.1:8083/" (after Start).
func (s *Server) AdvertisedURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	protocol := s.advProtocol
	if protocol == "" {
		protocol = "http"
		joined := strings.ToLower(strings.Join(s.listeners, ","))
		if !strings.Contains(joined, "http://") && strings.Contains(joined, "https://") {
			protocol = "https"
		}
	}
	var chosen *boundListener
	for i := range s.bound {
		if !s.bound[i].admin && s.bound[i].protocol == protocol {
			chosen = &s.bound[i]
			break
		}
	}
	host, port := s.advHost, s.advPort
	if host == "" && chosen != nil && chosen.host != "" {
		host = chosen.host
	}
	if host == "" {
		host = localAddress()
	}
	if port == 0 && chosen != nil {
		port = chosen.port
		if port == 0 {
			if ta, ok := chosen.addr.(*net.TCPAddr); ok {
				port = ta.Port
			}
		}
	}
	return fmt.Sprintf("%s://%s/", protocol, net.JoinHostPort(host, strconv.Itoa(port)))
}

// WorkerID is the advertised host:port, the JVM's worker id.
func (s *Server) WorkerID() string {
	u := strings.TrimSuffix(s.AdvertisedURL(), "/")
	return u[strings.Index(u, "://")+3:]
}

func localAddress() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	return "localhost"
}

// Shutdown stops accepting requests and waits (at most 60 s, or until ctx ends) for running ones.
func (s *Server) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, gracefulShutdownTimeout)
	defer cancel()
	s.mu.Lock()
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
			_ = srv.Close()
		}
	}
	s.wg.Wait()
	return errors.Join(errs...)
}
