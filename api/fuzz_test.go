package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

// jsonEndpoints are the routes that read a JSON body.
var jsonEndpoints = []struct{ method, path string }{
	{"POST", "/connectors"},
	{"PUT", "/connectors/sink-a/config"},
	{"PATCH", "/connectors/sink-a/config"},
	{"PUT", "/connector-plugins/FileStreamSink/config/validate"},
	{"PATCH", "/connectors/sink-a/offsets"},
	{"POST", "/connectors/sink-a/tasks"},
	{"PUT", "/admin/loggers/root"},
}

// panicFlag records whether the server logged a recovered panic.
type panicFlag struct{ hit *bool }

func (p panicFlag) Enabled(context.Context, slog.Level) bool { return true }
func (p panicFlag) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "Uncaught exception") {
		*p.hit = true
	}
	return nil
}
func (p panicFlag) WithAttrs([]slog.Attr) slog.Handler { return p }
func (p panicFlag) WithGroup(string) slog.Handler      { return p }

// FuzzRESTBodies sends arbitrary bodies to every JSON-reading endpoint through the real handler (a stopped
// connector sink-a exists): no panic, and every answer is a JVM-shaped JSON body whose error_code is the status.
func FuzzRESTBodies(f *testing.F) {
	seeds := []string{createBody, sinkCfg, `{"tasks.max":"2","file":null}`, `{"level":"DEBUG"}`, `[{"k":"v"}]`, `null`, ``,
		`{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":5}}]}`,
		`{"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":"x"},"offset":null}]}`,
		`{"name":"a","config":{"connector.class":"FileStreamSink","topics":"t"},"initial_state":"STOPPED"}`,
		`{"name":"sink-a",}`, `{"name":sink}`, "{\"a\":\"\\ud800\"}", `{"a":1e400}`, `[1,2,3]`, deepOffsets(997),
		strings.Repeat("[", 2000), strings.Repeat(`{"a":`, 1200)}
	// wide objects: a repeated-key check that scans the keys read so far costs seconds here
	wide := wideMembers(20000)
	seeds = append(seeds, wide, `{"name":"w","config":`+wide+`}`, `[`+wide+`]`,
		`{"offsets":[{"partition":`+wide+`,"offset":`+wide+`}]}`)
	for i := range jsonEndpoints {
		for _, s := range seeds {
			f.Add(uint8(i), []byte(s))
		}
	}
	// One server per fuzzing process (building the router per input would dominate); the herder's state is
	// reset before each input.
	fh := newFakeHerder()
	panicked := false
	s := NewServer(distributedFake{fh}, WithRegistry(testRegistry), WithSinkConnectorConfigDef(baseSinkDef()),
		WithLogger(slog.New(panicFlag{&panicked})), WithLoggers(logging.New(slog.NewTextHandler(io.Discard, nil), slog.LevelInfo)))
	handler := s.Handler()
	f.Fuzz(func(t *testing.T, endpoint uint8, body []byte) {
		ep := jsonEndpoints[int(endpoint)%len(jsonEndpoints)]
		fh.mu.Lock()
		fh.configs = map[string]map[string]string{"sink-a": {"connector.class": "FileStreamSink", "topics": "orders", "name": "sink-a"}}
		fh.targets = map[string]herder.TargetState{"sink-a": herder.TargetStopped}
		fh.topics, fh.taskPuts, fh.loggerSets = map[string][]string{}, nil, nil
		fh.mu.Unlock()
		panicked = false
		req := httptest.NewRequest(ep.method, ep.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		cpu := threadCPU(func() { handler.ServeHTTP(rec, req) })
		if limit := linearCPUBound(len(body)); cpu > limit {
			t.Fatalf("%s %s: a %d-byte body cost %v of CPU, more than linear (%v)", ep.method, ep.path, len(body), cpu, limit)
		}
		if panicked {
			t.Fatalf("%s %s: handler panicked on %q: %s", ep.method, ep.path, body, rec.Body.String())
		}
		status, out := rec.Code, rec.Body.Bytes()
		if status >= 400 {
			var eb struct {
				ErrorCode int     `json:"error_code"`
				Message   *string `json:"message"`
			}
			if err := json.Unmarshal(out, &eb); err != nil || eb.ErrorCode != status {
				t.Fatalf("%s %s %q: status %d with body %q", ep.method, ep.path, body, status, out)
			}
			return
		}
		if status != http.StatusNoContent && len(out) > 0 && !json.Valid(out) {
			t.Fatalf("%s %s %q: status %d with invalid JSON %q", ep.method, ep.path, body, status, out)
		}
	})
}

// wideMembers is an object of n members with distinct keys, {"k000000":"v",...} (13 bytes a member).
func wideMembers(n int) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%06d":"v"`, i)
	}
	sb.WriteByte('}')
	return sb.String()
}

// threadCPU is the CPU time fn takes on its goroutine's thread (other processes and the collector's workers
// not counted).
func threadCPU(fn func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_THREAD, &before)
	fn()
	_ = syscall.Getrusage(syscall.RUSAGE_THREAD, &after)
	return time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
}

// linearCPUBound is a generous linear budget for handling an n-byte body: 2 µs a byte over a 200 ms floor
// (bodies parse at tens of ns a byte; a quadratic step over a 1 MB body costs seconds).
func linearCPUBound(n int) time.Duration {
	return 200*time.Millisecond + time.Duration(n)*2*time.Microsecond
}

// Handling a body grows linearly with its width on every body endpoint: eight times the members cost far
// less than 64 times the CPU, and 68,000 members stay within the fuzz target's linear budget (the least of
// five runs each, after a collection, on this goroutine's thread).
func TestRESTBodiesScaleLinearly(t *testing.T) {
	fh := newFakeHerder()
	s := NewServer(distributedFake{fh}, WithRegistry(testRegistry), WithSinkConnectorConfigDef(baseSinkDef()),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithLoggers(logging.New(slog.NewTextHandler(io.Discard, nil), slog.LevelInfo)))
	handler := s.Handler()
	cost := func(ep struct{ method, path string }, body string) time.Duration {
		best := time.Duration(1 << 62)
		for range 5 {
			req := httptest.NewRequest(ep.method, ep.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			runtime.GC() // a collection's assist work left over from the previous run is not this body's cost
			best = min(best, threadCPU(func() { handler.ServeHTTP(httptest.NewRecorder(), req) }))
		}
		return best
	}
	shape := func(path, wide string) string {
		switch {
		case strings.HasSuffix(path, "/tasks"):
			return "[" + wide + "]"
		case strings.HasSuffix(path, "/offsets"):
			return `{"offsets":[{"partition":` + wide + `,"offset":{"kafka_offset":1}}]}`
		case path == "/connectors":
			return `{"name":"w","config":` + wide + `}`
		}
		return wide
	}
	small, large := wideMembers(8500), wideMembers(68000)
	for _, ep := range jsonEndpoints {
		cs, cl := cost(ep, shape(ep.path, small)), cost(ep, shape(ep.path, large))
		t.Logf("%s %s: 8,500 members %v, 68,000 members %v", ep.method, ep.path, cs, cl)
		// a quadratic step costs 64 times; the floor keeps timer noise on tiny costs out
		if cs >= 2*time.Millisecond && cl > 32*cs {
			t.Errorf("%s %s: 8 times the members cost %.0f times the CPU", ep.method, ep.path, float64(cl)/float64(cs))
		}
		if body := shape(ep.path, large); cl > linearCPUBound(len(body)) {
			t.Errorf("%s %s: 68,000 members (%d bytes) cost %v of CPU, more than linear (%v)", ep.method, ep.path, len(body), cl, linearCPUBound(len(body)))
		}
	}
}
