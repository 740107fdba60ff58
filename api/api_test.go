package api

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

var update = flag.Bool("update", false, "rewrite testdata/rest golden files")

// ---- test plugins ----

type testSink struct{ connect.ConnectorBase }

func (*testSink) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "file", Type: connect.ConfigString, Default: "", Importance: connect.High, Doc: "Destination filename."}).
		Define(connect.ConfigKey{Name: "batch.size", Type: connect.ConfigInt, Default: 2000, Validator: connect.AtLeast(1), Group: "Tuning", OrderInGroup: 1, Width: connect.WidthShort, Doc: "Records per write."})
}
func (*testSink) Start(map[string]string) error { return nil }
func (*testSink) TaskConfigs(n int) ([]map[string]string, error) {
	return make([]map[string]string, n), nil
}
func (*testSink) Stop() error               { return nil }
func (*testSink) NewTask() connect.SinkTask { return nil }

type testSMT struct{}

func (testSMT) ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "topic.field", Type: connect.ConfigString, Default: connect.NoDefault, Doc: "Field name for Kafka topic."})
}
func (testSMT) Configure(map[string]string) error                        { return nil }
func (testSMT) Apply(r *connect.SinkRecord) (*connect.SinkRecord, error) { return r, nil }
func (testSMT) Close() error                                             { return nil }

type testPredicate struct{ testSMT }

func (testPredicate) Test(*connect.SinkRecord) (bool, error) { return true, nil }

type testConverter struct{}

func (testConverter) Configure(map[string]string, bool) error { return nil }
func (testConverter) ToConnectData(string, connect.Headers, []byte) (connect.SchemaAndValue, error) {
	return connect.SchemaAndValue{}, nil
}
func (testConverter) FromConnectData(string, connect.Headers, *connect.Schema, any) ([]byte, error) {
	return nil, nil
}

var testRegistry = func() *connect.Registry {
	r := connect.NewRegistry()
	r.Register(connect.Plugin{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: connect.PluginSink, Version: "4.0.0", New: func() any { return &testSink{} }})
	r.Register(connect.Plugin{Class: "org.apache.kafka.connect.transforms.InsertField$Value", Type: connect.PluginTransformation, Version: "4.0.0", New: func() any { return testSMT{} }})
	r.Register(connect.Plugin{Class: "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", Type: connect.PluginPredicate, Version: "4.0.0", New: func() any { return testPredicate{} }})
	r.Register(connect.Plugin{Class: "org.apache.kafka.connect.storage.StringConverter", Type: connect.PluginConverter, Version: "4.0.0", New: func() any { return testConverter{} }})
	r.Register(connect.Plugin{Class: "com.example.UnversionedConverter", Type: connect.PluginConverter, Version: "undefined", New: func() any { return testConverter{} }})
	r.Register(connect.Plugin{Class: "org.apache.kafka.common.config.provider.FileConfigProvider", Type: "config_provider", Version: "4.0.0", New: func() any { return struct{}{} }})
	return r
}()

func baseSinkDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "name", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.High, Group: "Common", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Connector name", Doc: "Globally unique name to use for this connector."}).
		Define(connect.ConfigKey{Name: "file", Type: connect.ConfigString, Default: "ignored", Doc: "shadowed by the connector's own key"}).
		Define(connect.ConfigKey{Name: "tasks.max", Type: connect.ConfigInt, Default: 1, Importance: connect.High, Group: "Common", OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Tasks max", Doc: "Maximum number of tasks to use for this connector."})
}

// ---- harness ----

type env struct {
	h      *fakeHerder
	srv    *Server
	ts     *httptest.Server
	loggrs *logging.Registry
}

func fixedClock() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }

func newEnv(t *testing.T, distributed bool, opts ...Option) *env {
	t.Helper()
	f := newFakeHerder()
	lg := logging.New(slog.NewTextHandler(io.Discard, nil), slog.LevelInfo, logging.WithClock(fixedClock))
	lg.Logger("org.apache.kafka.connect.runtime.WorkerSinkTask")
	lg.Configure("org.reflections", slog.LevelError)
	var h herder.Herder = f
	if distributed {
		h = distributedFake{f}
	}
	base := []Option{WithRegistry(testRegistry), WithLoggers(lg), WithVersion(ConnectVersion, "abcdef0123456789"),
		WithSinkConnectorConfigDef(baseSinkDef()), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	s := NewServer(h, append(base, opts...)...)
	s.now = fixedClock
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &env{h: f, srv: s, ts: ts, loggrs: lg}
}

type req struct {
	method, path, body string
	headers            map[string]string
}

func (e *env) do(t *testing.T, r req) *http.Response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, e.ts.URL+r.path, body)
	require.NoError(t, err)
	hr.Host = "connect.test:8083"
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.headers {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	return resp
}

var goldenHeaders = []string{"Content-Type", "Location", "Allow", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "X-Frame-Options"}

func render(r req, resp *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.method, r.path)
	var hk []string
	for k := range r.headers {
		hk = append(hk, k)
	}
	sort.Strings(hk)
	for _, k := range hk {
		fmt.Fprintf(&b, "%s: %s\n", k, r.headers[k])
	}
	b.WriteString("\n")
	if r.body != "" {
		b.WriteString(r.body + "\n")
	}
	fmt.Fprintf(&b, "=== response\nHTTP %d\n", resp.StatusCode)
	for _, k := range goldenHeaders {
		if v := resp.Header.Get(k); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteString("\n")
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 {
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "testdata", "rest", name+".txt")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./api -update")
	assert.Equal(t, string(want), got, "golden %s", path)
}

const sinkCfg = `{"connector.class":"FileStreamSink","topics":"orders","file":"/tmp/out.txt"}`
const createBody = `{"name":"sink-a","config":` + sinkCfg + `}`

// TestGolden runs each case against a fresh fake herder after the setup requests, and compares the exchange
// with testdata/rest/<name>.txt.
func TestGolden(t *testing.T) {
	create := req{method: "POST", path: "/connectors", body: createBody}
	stop := req{method: "PUT", path: "/connectors/sink-a/stop"}
	basicAuth := []Option{WithBasicAuth(writeJAAS(t, "alice=secret\n"))}
	createAuth := req{method: "POST", path: "/connectors", body: createBody, headers: map[string]string{"Authorization": basic("alice", "secret")}}
	cases := []struct {
		name        string
		setup       []req
		req         req
		distributed bool
		opts        []Option
	}{
		{name: "root", req: req{method: "GET", path: "/"}},
		{name: "health_ok", req: req{method: "GET", path: "/health"}},
		{name: "connectors_empty", req: req{method: "GET", path: "/connectors"}},
		{name: "connectors_list", setup: []req{create}, req: req{method: "GET", path: "/connectors"}},
		{name: "connectors_expand", setup: []req{create}, req: req{method: "GET", path: "/connectors?expand=status&expand=info&expand=bogus"}},
		{name: "create_201", req: create},
		{name: "create_trimmed_name_initial_state", req: req{method: "POST", path: "/connectors", body: `{"name":"  sink-b ","config":{"connector.class":"FileStreamSink","topics":"orders","tasks.max":2},"initial_state":"paused"}`}},
		{name: "create_duplicate_409", setup: []req{create}, req: create},
		{name: "create_name_mismatch_400", req: req{method: "POST", path: "/connectors", body: `{"name":"sink-a","config":{"name":"other","connector.class":"FileStreamSink","topics":"t"}}`}},
		{name: "create_invalid_config_400", req: req{method: "POST", path: "/connectors", body: `{"name":"sink-a","config":{"connector.class":"FileStreamSink"}}`}},
		{name: "create_missing_class_400", req: req{method: "POST", path: "/connectors", body: `{"name":"sink-a","config":{"topics":"t"}}`}},
		{name: "create_unknown_class_400", req: req{method: "POST", path: "/connectors", body: `{"name":"sink-a","config":{"connector.class":"com.example.Nope","topics":"t"}}`}},
		{name: "create_source_class_400", req: req{method: "POST", path: "/connectors", body: `{"name":"pg","config":{"connector.class":"io.debezium.connector.postgresql.PostgresConnector"}}`}},
		{name: "config_put_source_class_400", req: req{method: "PUT", path: "/connectors/src/config", body: `{"connector.class":"FileStreamSource","file":"/tmp/in.txt","topic":"t"}`}},
		{name: "validate_source_class_500", req: req{method: "PUT", path: "/connector-plugins/FileStreamSource/config/validate", body: `{"connector.class":"FileStreamSource","file":"/tmp/in.txt","topic":"t"}`}},
		{name: "validate_unknown_class_500", req: req{method: "PUT", path: "/connector-plugins/com.example.Nope/config/validate", body: `{"connector.class":"com.example.Nope","topics":"t"}`}},
		{name: "create_malformed_json_500", req: req{method: "POST", path: "/connectors", body: `{"name":"sink-a",}`}},
		{name: "create_malformed_eof_500", req: req{method: "POST", path: "/connectors", body: "{\"name\":\"sink-a\",\n \"config\":{\"a\":\"b\""}},
		{name: "create_bad_token_500", req: req{method: "POST", path: "/connectors", body: `{"name":sink}`}},
		{name: "create_unknown_field_500", req: req{method: "POST", path: "/connectors", body: `{"name":"a","configs":{}}`}},
		{name: "create_bad_initial_state_500", req: req{method: "POST", path: "/connectors", body: `{"name":"a","config":{},"initial_state":"running-ish"}`}},
		{name: "create_nested_value_500", req: req{method: "POST", path: "/connectors", body: `{"name":"a","config":{"topics":["a"]}}`}},
		{name: "create_empty_body_500", req: req{method: "POST", path: "/connectors", headers: map[string]string{"Content-Type": "application/json"}}},
		{name: "create_no_config_500", req: req{method: "POST", path: "/connectors", body: `{"name":"a"}`}},
		{name: "create_form_415", req: req{method: "POST", path: "/connectors", body: createBody, headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}},
		{name: "create_accept_html_406", req: req{method: "POST", path: "/connectors", body: createBody, headers: map[string]string{"Accept": "text/html"}}},
		{name: "connector_get", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a"}},
		{name: "connector_get_unknown_404", req: req{method: "GET", path: "/connectors/nope"}},
		{name: "connector_get_trailing_slash", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a/"}},
		{name: "config_get", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a/config"}},
		{name: "config_get_unknown_404", req: req{method: "GET", path: "/connectors/nope/config"}},
		{name: "config_put_create_201", req: req{method: "PUT", path: "/connectors/sink-c/config", body: sinkCfg}},
		{name: "config_put_update_200", setup: []req{create}, req: req{method: "PUT", path: "/connectors/sink-a/config", body: `{"connector.class":"FileStreamSink","topics":"orders,refunds"}`}},
		{name: "config_put_name_mismatch_400", req: req{method: "PUT", path: "/connectors/sink-a/config", body: `{"name":"sink-b","connector.class":"FileStreamSink"}`}},
		{name: "config_put_empty_body_500", req: req{method: "PUT", path: "/connectors/sink-a/config", headers: map[string]string{"Content-Type": "application/json"}}},
		{name: "config_put_array_500", req: req{method: "PUT", path: "/connectors/sink-a/config", body: `["x"]`}},
		{name: "config_patch_200", setup: []req{create}, req: req{method: "PATCH", path: "/connectors/sink-a/config", body: `{"file":null,"tasks.max":"3"}`}},
		{name: "config_patch_unknown_404", req: req{method: "PATCH", path: "/connectors/nope/config", body: `{"file":null}`}},
		{name: "status", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a/status"}},
		{name: "status_unknown_404", req: req{method: "GET", path: "/connectors/nope/status"}},
		{name: "tasks", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a/tasks"}},
		{name: "tasks_unknown_404", req: req{method: "GET", path: "/connectors/nope/tasks"}},
		{name: "task_status", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a/tasks/0/status"}},
		{name: "task_status_unknown_404", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a/tasks/3/status"}},
		{name: "task_status_not_int_404", req: req{method: "GET", path: "/connectors/sink-a/tasks/x/status"}},
		{name: "task_restart_204", setup: []req{create}, req: req{method: "POST", path: "/connectors/sink-a/tasks/0/restart"}},
		{name: "task_restart_unknown_404", setup: []req{create}, req: req{method: "POST", path: "/connectors/sink-a/tasks/3/restart"}},
		{name: "restart_204", setup: []req{create}, req: req{method: "POST", path: "/connectors/sink-a/restart"}},
		{name: "restart_flags_202", setup: []req{create}, req: req{method: "POST", path: "/connectors/sink-a/restart?includeTasks=true&onlyFailed=false"}},
		{name: "restart_unknown_404", req: req{method: "POST", path: "/connectors/nope/restart"}},
		{name: "pause_202", setup: []req{create}, req: req{method: "PUT", path: "/connectors/sink-a/pause"}},
		{name: "pause_unknown_404", req: req{method: "PUT", path: "/connectors/nope/pause"}},
		{name: "resume_202", setup: []req{create}, req: req{method: "PUT", path: "/connectors/sink-a/resume"}},
		{name: "stop_204", setup: []req{create}, req: req{method: "PUT", path: "/connectors/sink-a/stop"}},
		{name: "delete_204", setup: []req{create}, req: req{method: "DELETE", path: "/connectors/sink-a"}},
		{name: "delete_unknown_404", req: req{method: "DELETE", path: "/connectors/nope"}},
		{name: "topics_unknown_empty", req: req{method: "GET", path: "/connectors/nope/topics"}},
		{name: "topics_disabled_403", opts: []Option{WithTopicTracking(false, false)}, req: req{method: "GET", path: "/connectors/sink-a/topics"}},
		{name: "topics_reset_202", req: req{method: "PUT", path: "/connectors/sink-a/topics/reset"}},
		{name: "topics_reset_disabled_403", opts: []Option{WithTopicTracking(true, false)}, req: req{method: "PUT", path: "/connectors/sink-a/topics/reset"}},
		{name: "offsets_get", setup: []req{create}, req: req{method: "GET", path: "/connectors/sink-a/offsets"}},
		{name: "offsets_patch_not_stopped_400", setup: []req{create}, req: req{method: "PATCH", path: "/connectors/sink-a/offsets", body: `{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":5}}]}`}},
		{name: "offsets_patch_200", setup: []req{create, stop}, req: req{method: "PATCH", path: "/connectors/sink-a/offsets", body: `{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":null}]}`}},
		{name: "offsets_patch_empty_400", setup: []req{create, stop}, req: req{method: "PATCH", path: "/connectors/sink-a/offsets", body: `{"offsets":[]}`}},
		{name: "offsets_delete_200", setup: []req{create, stop}, req: req{method: "DELETE", path: "/connectors/sink-a/offsets"}},
		{name: "plugins", req: req{method: "GET", path: "/connector-plugins"}},
		{name: "plugins_all", req: req{method: "GET", path: "/connector-plugins?connectorsOnly=false"}},
		{name: "plugin_config", req: req{method: "GET", path: "/connector-plugins/FileStreamSink/config"}},
		{name: "plugin_config_smt", req: req{method: "GET", path: "/connector-plugins/org.apache.kafka.connect.transforms.InsertField$Value/config"}},
		{name: "plugin_config_unknown_404", req: req{method: "GET", path: "/connector-plugins/com.example.Nope/config"}},
		{name: "plugin_config_invalid_type_400", req: req{method: "GET", path: "/connector-plugins/FileConfigProvider/config"}},
		{name: "validate_200", req: req{method: "PUT", path: "/connector-plugins/FileStreamSinkConnector/config/validate", body: `{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","batch.size":"0","topics":"t"}`}},
		{name: "validate_no_class_500", req: req{method: "PUT", path: "/connector-plugins/FileStreamSink/config/validate", body: `{"name":"x","topics":"orders","file":"/tmp/f","tasks.max":"1"}`}},
		{name: "validate_suffix_mismatch_400", req: req{method: "PUT", path: "/connector-plugins/Iceberg/config/validate", body: `{"connector.class":"FileStreamSink"}`}},
		{name: "loggers_all", req: req{method: "GET", path: "/admin/loggers"}},
		{name: "logger_get", req: req{method: "GET", path: "/admin/loggers/org.apache.kafka.connect.runtime.WorkerSinkTask"}},
		{name: "logger_get_unknown_404", req: req{method: "GET", path: "/admin/loggers/com.example.none"}},
		{name: "logger_put_worker", req: req{method: "PUT", path: "/admin/loggers/org.apache.kafka.connect", body: `{"level":"DEBUG"}`}},
		{name: "logger_put_cluster_204", distributed: true, req: req{method: "PUT", path: "/admin/loggers/org.apache.kafka.connect?scope=cluster", body: `{"level":"debug"}`}},
		{name: "logger_put_bad_level_404", req: req{method: "PUT", path: "/admin/loggers/root", body: `{"level":"LOUD"}`}},
		{name: "logger_put_no_level_400", req: req{method: "PUT", path: "/admin/loggers/root", body: `{"lvl":"INFO"}`}},
		{name: "unknown_path_404", req: req{method: "GET", path: "/nope"}},
		{name: "tasks_config_removed_404", req: req{method: "GET", path: "/connectors/sink-a/tasks-config"}},
		{name: "method_not_allowed_405", req: req{method: "DELETE", path: "/connectors"}},
		{name: "internal_tasks_standalone_500", setup: []req{create}, req: req{method: "POST", path: "/connectors/sink-a/tasks", body: `[{"k":"v"}]`}},
		{name: "cors_simple", opts: []Option{WithCORS("https://ui.example", "")}, req: req{method: "GET", path: "/connectors", headers: map[string]string{"Origin": "https://ui.example"}}},
		{name: "offsets_patch_nesting_500", req: req{method: "PATCH", path: "/connectors/sink-a/offsets", body: deepOffsets(997)}},
		{name: "auth_missing_401", opts: basicAuth, req: req{method: "GET", path: "/connectors"}},
		{name: "auth_wrong_password_401", opts: basicAuth, req: req{method: "GET", path: "/connectors", headers: map[string]string{"Authorization": basic("alice", "bad")}}},
		{name: "auth_bad_base64_500", opts: basicAuth, req: req{method: "GET", path: "/connectors", headers: map[string]string{"Authorization": "Basic %%%"}}},
		{name: "auth_ok", opts: basicAuth, setup: []req{createAuth}, req: req{method: "GET", path: "/connectors", headers: map[string]string{"Authorization": basic("alice", "secret")}}},
		{name: "auth_unknown_path_404", opts: basicAuth, req: req{method: "GET", path: "/nope"}},
		{name: "auth_internal_tasks_standalone_500", opts: basicAuth, setup: []req{createAuth}, req: req{method: "POST", path: "/connectors/sink-a/tasks", body: `[{"k":"v"}]`}},
		{name: "response_headers", opts: []Option{WithResponseHeaders("set X-Frame-Options: DENY")}, req: req{method: "GET", path: "/"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.distributed, c.opts...)
			for _, s := range c.setup {
				resp := e.do(t, s)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				require.Less(t, resp.StatusCode, 300, "setup %s %s", s.method, s.path)
			}
			resp := e.do(t, c.req)
			defer resp.Body.Close()
			checkGolden(t, c.name, render(c.req, resp))
		})
	}
}

func TestHealthStates(t *testing.T) {
	e := newEnv(t, false)
	e.h.notReady = true
	resp := e.do(t, req{method: "GET", path: "/health"})
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 503, resp.StatusCode)
	assert.JSONEq(t, `{"status":"starting","message":"Worker is still starting up."}`, string(body))
}

type blockingHealth struct {
	*fakeHerder
}

func (blockingHealth) Healthy(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
func (blockingHealth) CurrentStage() (string, time.Time, time.Time, bool) {
	return "reading to the end of the config topic", time.UnixMilli(1740830400123).UTC(), time.Time{}, true
}

func TestHealthUnhealthyAndTimeout(t *testing.T) {
	h := blockingHealth{newFakeHerder()}
	s := NewServer(h, WithRegistry(testRegistry), WithHealthCheckTimeout(20*time.Millisecond), WithRequestTimeout(20*time.Millisecond))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	resp, err := http.Get(ts.URL + "/health")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 500, resp.StatusCode)
	assert.JSONEq(t, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests. The worker is currently reading to the end of the config topic, which began at 2025-03-01T12:00:00.123Z."}`, string(body))

	h.block = true
	resp, err = http.Get(ts.URL + "/connectors/x")
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 500, resp.StatusCode)
	assert.JSONEq(t, `{"error_code":500,"message":"Request timed out. The worker is currently reading to the end of the config topic, which began at 2025-03-01T12:00:00.123Z."}`, string(body))
}

func TestRebalance(t *testing.T) {
	e := newEnv(t, false)
	e.do(t, req{method: "POST", path: "/connectors", body: createBody}).Body.Close()

	e.h.rebalances = 1
	resp := e.do(t, req{method: "GET", path: "/connectors/sink-a"})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 500, resp.StatusCode)
	assert.JSONEq(t, `{"error_code":500,"message":"Request cannot be completed because a rebalance is expected"}`, string(body))

	e.h.rebalances = 1
	resp = e.do(t, req{method: "DELETE", path: "/connectors/sink-a"})
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 409, resp.StatusCode)
	assert.JSONEq(t, `{"error_code":409,"message":"Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}`, string(body))

	// With the retry option, a short rebalance is waited out.
	e2 := newEnv(t, false, WithRebalanceRetry(10*time.Second))
	e2.do(t, req{method: "POST", path: "/connectors", body: createBody}).Body.Close()
	e2.h.rebalances = 3
	resp = e2.do(t, req{method: "DELETE", path: "/connectors/sink-a"})
	resp.Body.Close()
	assert.Equal(t, 204, resp.StatusCode)
	e2.h.rebalances = 2
	resp = e2.do(t, req{method: "GET", path: "/connectors"})
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}

func TestLoggerLevelsApplied(t *testing.T) {
	e := newEnv(t, false)
	l := e.loggrs.Logger("org.apache.kafka.connect.runtime.WorkerSinkTask")
	assert.False(t, l.Enabled(context.Background(), slog.LevelDebug))
	resp := e.do(t, req{method: "PUT", path: "/admin/loggers/org.apache.kafka.connect", body: `{"level":"DEBUG"}`})
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	assert.True(t, l.Enabled(context.Background(), slog.LevelDebug))
	assert.False(t, e.loggrs.Logger("other").Enabled(context.Background(), slog.LevelDebug))

	resp = e.do(t, req{method: "PUT", path: "/admin/loggers/root", body: `{"level":"ERROR"}`})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.JSONEq(t, `["org.apache.kafka.connect","org.apache.kafka.connect.runtime.WorkerSinkTask","org.reflections","other","root"]`, string(body))
	assert.False(t, l.Enabled(context.Background(), slog.LevelWarn))
	assert.True(t, l.Enabled(context.Background(), slog.LevelError))
}

func TestInternalTaskConfigs(t *testing.T) {
	e := newEnv(t, true)
	e.do(t, req{method: "POST", path: "/connectors", body: createBody}).Body.Close()
	body := `[{"task.class":"x","topics":"orders"}]`
	key := []byte("0123456789abcdef")
	sig, err := Sign(key, []byte(body), "HmacSHA256")
	require.NoError(t, err)
	signed := map[string]string{signatureHeader: sig, signatureAlgorithmHeader: "HmacSHA256"}

	check := func(hdr map[string]string, status int, msg string) {
		t.Helper()
		resp := e.do(t, req{method: "POST", path: "/connectors/sink-a/tasks", body: body, headers: hdr})
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode, string(data))
		if msg != "" {
			assert.JSONEq(t, fmt.Sprintf(`{"error_code":%d,"message":%q}`, status, msg), string(data))
		}
	}
	check(nil, 204, "") // signatures not required (connect.protocol below sessioned)
	e.h.keyNeeded = true
	check(nil, 400, "Internal request missing required signature")
	check(signed, 503, "This worker is still starting up and has not been able to read a session key from the config topic yet")
	e.h.sessionKey = key
	check(signed, 204, "")
	check(map[string]string{signatureHeader: sig[:10] + "AAAA" + sig[14:], signatureAlgorithmHeader: "HmacSHA256"}, 403, "Internal request contained invalid signature.")
	check(map[string]string{signatureHeader: "not.base64", signatureAlgorithmHeader: "HmacSHA256"}, 400, "Illegal base64 character 2e")
	check(map[string]string{signatureHeader: sig, signatureAlgorithmHeader: "HmacMD6"}, 400, "Algorithm HmacMD6 not available")
	sig512, _ := Sign(key, []byte(body), "HmacSHA512")
	check(map[string]string{signatureHeader: sig512, signatureAlgorithmHeader: "HmacSHA512"}, 400,
		"This worker does not support the 'HmacSHA512' key signing algorithm used by other workers. This worker is currently configured to use: [HmacSHA256]. Check that all workers' configuration files permit the same set of signature algorithms, and correct any misconfigured worker and restart it.")
	assert.Len(t, e.h.taskPuts, 2)
}

func TestJavaHashMapString(t *testing.T) {
	m2 := &orderedMap{vals: map[string]*string{}}
	for _, k := range []string{"connector.class.x", "topics", "file", "value.converter", "key.converter", "errors.tolerance", "transforms", "name", "tasks.max"} {
		v := "v"
		m2.keys = append(m2.keys, k)
		m2.vals[k] = &v
	}
	assert.Equal(t, "{connector.class.x=v, file=v, topics=v, tasks.max=v, transforms=v, name=v, errors.tolerance=v, value.converter=v, key.converter=v}", javaHashMapString(m2))
	m := &orderedMap{vals: map[string]*string{}}
	for _, kv := range [][2]string{{"name", "x"}, {"topics", "orders"}, {"file", "/tmp/f"}, {"tasks.max", "1"}} {
		v := kv[1]
		m.keys = append(m.keys, kv[0])
		m.vals[kv[0]] = &v
	}
	// What `new HashMap<>(linkedHashMap).toString()` prints on a JVM for these keys.
	assert.Equal(t, "{name=x, file=/tmp/f, topics=orders, tasks.max=1}", javaHashMapString(m))

	// a config echoed before its connector is known hides values of secret-named keys
	pw := "s3cret"
	m.keys = append(m.keys, "password")
	m.vals["password"] = &pw
	assert.NotContains(t, javaHashMapString(m), "s3cret")
	assert.Contains(t, javaHashMapString(m), "password=[hidden]")
}

func TestServerListenAndShutdown(t *testing.T) {
	s := NewServer(newFakeHerder(), WithListeners("http://127.0.0.1:0"), WithAdminListeners([]string{"http://127.0.0.1:0"}),
		WithRegistry(testRegistry), WithAdvertised("worker-1.example", 0, ""))
	require.NoError(t, s.Start())
	addr := s.Addrs()[0].String()
	assert.Equal(t, "http://worker-1.example:"+addr[strings.LastIndexByte(addr, ':')+1:]+"/", s.AdvertisedURL())
	resp, err := http.Get("http://" + addr + "/admin/loggers")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 404, resp.StatusCode, "admin endpoints live on the admin listener")
	resp, err = http.Get("http://" + addr + "/connectors")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	require.NoError(t, s.Shutdown(context.Background()))
	_, err = http.Get("http://" + addr + "/connectors")
	require.Error(t, err)

	_, _, _, err = parseListener("http//nope")
	require.EqualError(t, err, "Listener doesn't have the right format (protocol://hostname:port).")
	_, _, _, err = parseListener("ftp://h:1")
	require.EqualError(t, err, `Listener protocol must be either "http" or "https".`)
}
