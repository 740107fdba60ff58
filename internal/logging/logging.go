// Package logging keeps named, hierarchical slog loggers whose levels can be changed at run time, the way the
// JVM worker's /admin/loggers changes log4j levels. Logger names are dotted ("org.apache.kafka.connect.runtime"
// or "connectd.worker"); a logger without an explicit level inherits the level of its nearest dotted ancestor
// that has one, else the root's.
package logging

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RootLogger is the name of the root logger (case-insensitive, as in log4j).
const RootLogger = "root"

// Levels beyond slog's four.
const (
	LevelTrace slog.Level = -8
	LevelFatal slog.Level = 12
	levelOff   slog.Level = math.MaxInt32
	levelAll   slog.Level = math.MinInt32
)

// ParseLevel maps a log4j level name (case-insensitive) to a slog level.
func ParseLevel(s string) (slog.Level, bool) {
	switch strings.ToUpper(s) {
	case "ALL":
		return levelAll, true
	case "TRACE":
		return LevelTrace, true
	case "DEBUG":
		return slog.LevelDebug, true
	case "INFO":
		return slog.LevelInfo, true
	case "WARN":
		return slog.LevelWarn, true
	case "ERROR":
		return slog.LevelError, true
	case "FATAL":
		return LevelFatal, true
	case "OFF":
		return levelOff, true
	}
	return 0, false
}

// LevelName is the log4j name of a slog level.
func LevelName(l slog.Level) string {
	switch {
	case l == levelAll:
		return "ALL"
	case l == levelOff:
		return "OFF"
	case l <= LevelTrace:
		return "TRACE"
	case l <= slog.LevelDebug:
		return "DEBUG"
	case l <= slog.LevelInfo:
		return "INFO"
	case l <= slog.LevelWarn:
		return "WARN"
	case l <= slog.LevelError:
		return "ERROR"
	}
	return "FATAL"
}

// Level is one logger's level as GET /admin/loggers shows it. LastModified is unix millis, nil if never set
// through SetLevel.
type Level struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

type node struct {
	name      string
	explicit  *slog.Level
	effective atomic.Int64
	modified  *int64
}

// Registry holds the named loggers. The zero value is not usable; use New.
type Registry struct {
	mu    sync.Mutex
	out   slog.Handler
	root  *node
	nodes map[string]*node
	now   func() time.Time
}

// Option configures a Registry at New.
type Option func(*Registry)

// WithClock sets the time source of the last_modified times /admin/loggers reports (time.Now by default), for
// callers that need those answers reproducible.
func WithClock(now func() time.Time) Option { return func(r *Registry) { r.now = now } }

// New returns a registry writing through out (its own level is ignored: records are filtered here) with the
// root at level root.
func New(out slog.Handler, root slog.Level, opts ...Option) *Registry {
	r := &Registry{out: out, nodes: map[string]*node{}, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	lv := root
	r.root = &node{name: RootLogger, explicit: &lv}
	r.root.effective.Store(int64(root))
	return r
}

// Default writes text to stderr with the root at INFO.
var Default = New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: levelAll}), slog.LevelInfo)

// Logger returns the named logger, creating it (without an explicit level) if needed. Its records carry a
// "logger" attribute.
func (r *Registry) Logger(name string) *slog.Logger {
	return slog.New(&handler{r: r, n: r.node(name), inner: r.out.WithAttrs([]slog.Attr{slog.String("logger", name)})})
}

func (r *Registry) node(name string) *node {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.EqualFold(name, RootLogger) {
		return r.root
	}
	if n, ok := r.nodes[name]; ok {
		return n
	}
	n := &node{name: name}
	n.effective.Store(int64(r.effectiveLocked(name)))
	r.nodes[name] = n
	return n
}

func (r *Registry) effectiveLocked(name string) slog.Level {
	for cur := name; cur != ""; {
		if n, ok := r.nodes[cur]; ok && n.explicit != nil {
			return *n.explicit
		}
		i := strings.LastIndexByte(cur, '.')
		if i < 0 {
			break
		}
		cur = cur[:i]
	}
	return *r.root.explicit
}

func (r *Registry) levelOf(n *node) Level {
	lv := slog.Level(n.effective.Load())
	if n.explicit != nil {
		lv = *n.explicit
	}
	return Level{Level: LevelName(lv), LastModified: n.modified}
}

// Level returns one logger's level (effective if not explicitly set); ok=false if no such logger exists.
func (r *Registry) Level(name string) (Level, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.EqualFold(name, RootLogger) {
		return r.levelOf(r.root), true
	}
	n, ok := r.nodes[name]
	if !ok {
		return Level{}, false
	}
	return r.levelOf(n), true
}

// AllLevels lists every logger created or configured so far with its level, leaving out those that are OFF, and
// the root, as the JVM's log4j2 Loggers.allLevels does.
func (r *Registry) AllLevels() map[string]Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]Level{}
	for name, n := range r.nodes {
		if lv := r.levelOf(n); lv.Level != LevelName(levelOff) {
			out[name] = lv
		}
	}
	out[RootLogger] = r.levelOf(r.root)
	return out
}

// SetLevel sets the level of namespace and of every existing logger whose name starts with it (the root
// namespace means all loggers), creating the namespace logger if needed, as the JVM's Loggers.setLevel. It
// returns the affected logger names, sorted.
func (r *Registry) SetLevel(namespace, level string) ([]string, error) {
	lv, ok := ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("invalid log level '%s'.", level)
	}
	return r.set(namespace, lv, true), nil
}

// Configure sets a level without recording last_modified (startup configuration).
func (r *Registry) Configure(namespace string, level slog.Level) { r.set(namespace, level, false) }

func (r *Registry) set(namespace string, lv slog.Level, track bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var targets []*node
	if strings.EqualFold(namespace, RootLogger) {
		for _, n := range r.nodes {
			targets = append(targets, n)
		}
		targets = append(targets, r.root)
	} else {
		if _, ok := r.nodes[namespace]; !ok {
			n := &node{name: namespace}
			r.nodes[namespace] = n
		}
		for name, n := range r.nodes {
			if strings.HasPrefix(name, namespace) {
				targets = append(targets, n)
			}
		}
	}
	names := make([]string, 0, len(targets))
	now := r.now().UnixMilli()
	for _, n := range targets {
		names = append(names, n.name)
		cur := slog.Level(n.effective.Load())
		if n.explicit != nil {
			cur = *n.explicit
		}
		if cur == lv {
			continue // the JVM skips loggers already at that (effective) level
		}
		v := lv
		n.explicit = &v
		if track {
			m := now
			n.modified = &m
		}
	}
	for name, n := range r.nodes {
		n.effective.Store(int64(r.effectiveLocked(name)))
	}
	r.root.effective.Store(int64(*r.root.explicit))
	sort.Strings(names)
	return names
}

type handler struct {
	r     *Registry
	n     *node
	inner slog.Handler
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= slog.Level(h.n.effective.Load()) && slog.Level(h.n.effective.Load()) != levelOff
}
func (h *handler) Handle(ctx context.Context, rec slog.Record) error { return h.inner.Handle(ctx, rec) }
func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{r: h.r, n: h.n, inner: h.inner.WithAttrs(as)}
}
func (h *handler) WithGroup(g string) slog.Handler {
	return &handler{r: h.r, n: h.n, inner: h.inner.WithGroup(g)}
}
