package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
		handler.ServeHTTP(rec, req)
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
