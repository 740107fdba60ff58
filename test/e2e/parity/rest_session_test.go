package parity

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// captureJVMSession names a running JVM Connect 4.3.1 standalone worker (testdata/rest/session/capture.sh starts
// one) whose answers to the scripted session replace the goldens.
var captureJVMSession = flag.String("capture-jvm-session", "", "URL of a JVM Connect standalone worker: rewrite testdata/rest/session/golden.json from its answers")

const sessionDir = "../../../testdata/rest/session"

// sessionStep is one REST call of testdata/rest/session/steps.json; Await names the state the connector
// (AwaitConnector, else session-sink) and its tasks must reach before the call, AwaitTasks how many tasks it
// must have then (default: STOPPED none, else at least one).
type sessionStep struct {
	Name           string `json:"name"`
	Method         string `json:"method"`
	Path           string `json:"path"`
	Body           string `json:"body,omitempty"`
	Await          string `json:"await,omitempty"`
	AwaitConnector string `json:"await_connector,omitempty"`
	AwaitTasks     *int   `json:"await_tasks,omitempty"`
}

// sessionAnswer is what a client sees of an answer, with the run's topic, file and address replaced by
// placeholders and volatile fields (commit, cluster id, traces) masked.
type sessionAnswer struct {
	Name        string `json:"name"`
	Request     string `json:"request"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type,omitempty"`
	Location    string `json:"location,omitempty"`
	Body        any    `json:"body"`
}

func loadSessionSteps(t *testing.T) []sessionStep {
	raw, err := os.ReadFile(filepath.Join(sessionDir, "steps.json"))
	require.NoError(t, err)
	var s struct{ Steps []sessionStep }
	require.NoError(t, json.Unmarshal(raw, &s))
	return s.Steps
}

// runSession sends every step to the worker at url and returns the normalised answers.
func runSession(t *testing.T, url, topic, file string) []sessionAnswer {
	t.Helper()
	subst := strings.NewReplacer("${TOPIC}", topic, "${FILE}", file)
	host := strings.TrimPrefix(url, "http://")
	unsubst := strings.NewReplacer(file, "${FILE}", topic, "${TOPIC}", url, "${URL}", host, "${WORKER}")
	var out []sessionAnswer
	for _, s := range loadSessionSteps(t) {
		if s.Await != "" {
			name := s.AwaitConnector
			if name == "" {
				name = "session-sink"
			}
			awaitState(t, url, name, s.Await, s.AwaitTasks)
		}
		var body io.Reader
		if s.Body != "" {
			body = strings.NewReader(subst.Replace(s.Body))
		}
		req, err := http.NewRequest(s.Method, url+subst.Replace(s.Path), body)
		require.NoError(t, err)
		if s.Body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, s.Name)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		a := sessionAnswer{
			Name:        s.Name,
			Request:     s.Method + " " + s.Path,
			Status:      resp.StatusCode,
			ContentType: resp.Header.Get("Content-Type"),
			Location:    unsubst.Replace(resp.Header.Get("Location")),
		}
		text := unsubst.Replace(string(raw))
		var parsed any
		if json.Unmarshal([]byte(text), &parsed) == nil {
			a.Body = maskVolatile(parsed)
		} else {
			a.Body = text
		}
		out = append(out, a)
	}
	return out
}

// maskVolatile masks what differs between runs of one worker: the build commit, the Kafka cluster id, stack
// traces.
func maskVolatile(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch {
			case (k == "commit" || k == "kafka_cluster_id") && e != nil:
				x[k] = "${MASKED}"
			case k == "trace" && e != nil:
				x[k] = "${TRACE}"
			default:
				x[k] = maskVolatile(e)
			}
		}
	case []any:
		for i := range x {
			x[i] = maskVolatile(x[i])
		}
	}
	return v
}

// awaitState waits until the connector and all its tasks are in state, with tasks tasks if given (else
// STOPPED: none, other states: at least one).
func awaitState(t *testing.T, url, name, state string, tasks *int) {
	t.Helper()
	var last string
	ok := assert.Eventually(t, func() bool {
		resp, err := http.Get(url + "/connectors/" + name + "/status")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		last = string(raw)
		var st struct {
			Connector struct{ State string }
			Tasks     []struct{ State string }
		}
		if resp.StatusCode != 200 || json.Unmarshal(raw, &st) != nil || st.Connector.State != state {
			return false
		}
		switch {
		case tasks != nil:
			if len(st.Tasks) != *tasks {
				return false
			}
		case state == "STOPPED":
			return len(st.Tasks) == 0
		case len(st.Tasks) == 0:
			return false
		}
		for _, tk := range st.Tasks {
			if tk.State != state {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond)
	require.True(t, ok, "connector %s never reached %s; last status: %s", name, state, last)
}

// TestRESTSessionMatchesJVM replays a scripted REST session (testdata/rest/session/steps.json: create, get,
// config, status, tasks, pause/resume/stop, restarts, offsets, errors, loggers, plugins) against a standalone
// worker and compares every answer (status, Content-Type, Location, body) with the one a JVM Connect 4.3.1
// worker gave (golden.json, captured by testdata/rest/session/capture.sh), but for sessionDifferences.
func TestRESTSessionMatchesJVM(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	goldenPath := filepath.Join(sessionDir, "golden.json")
	if *captureJVMSession != "" {
		topic := kafkatest.UniqueName(t, "session") // answers name it ${TOPIC}
		kafkatest.CreateTopic(t, addr, topic, 1, nil)
		answers := runSession(t, *captureJVMSession, topic, filepath.Join(t.TempDir(), "out.txt"))
		out, err := json.MarshalIndent(answers, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(goldenPath, append(out, '\n'), 0o644))
		return
	}
	raw, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	var golden []sessionAnswer
	require.NoError(t, json.Unmarshal(raw, &golden))

	topic := kafkatest.UniqueName(t, "session")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	dir := t.TempDir()
	port := workerproc.FreePort(t)
	workerproc.Start(t, "standalone", workerproc.WriteWorkerProps(t, dir, addr, port, fmt.Sprintf("offset.storage.file.filename=%s\n", filepath.Join(dir, "offsets"))))
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	workerproc.WaitHealthy(t, url, 60*time.Second)
	answers := runSession(t, url, topic, filepath.Join(dir, "out.txt"))
	require.Len(t, answers, len(golden), "steps.json and golden.json disagree; recapture")
	for i, want := range golden {
		got := answers[i]
		require.Equal(t, want.Name, got.Name, "steps.json and golden.json disagree; recapture")
		if d, ok := sessionDifferences[want.Name]; ok {
			d.apply(&want, &got)
		}
		assert.Equal(t, want, got, "step %s (%s)", want.Name, want.Request)
	}
}

// sessionDifference is a deliberate difference of one step's answer, and why.
type sessionDifference struct {
	why   string
	apply func(jvm, ours *sessionAnswer)
}

// sessionDifferences are the deliberate differences from the JVM worker's answers. Everything else must match.
var sessionDifferences = map[string]sessionDifference{
	"plugins_connectors_only": {"the installed plugins differ: the JVM worker hosts FileStreamSource, connectd hosts sinks only, " +
		"with the Iceberg, ClickHouse and dead-letter sinks; the plugins both host must be listed alike", commonPlugins},
	"plugins_all":            {"as plugins_connectors_only, and connectd's own SMTs, AvroConverter and DLQ header converter", commonPlugins},
	"validate_unknown_class": {"the message lists the installed connectors, which differ", cutMessageAt(", available connectors are:")},
	"unknown_connector_restart": {"the JVM's standalone herder answers a NullPointerException (500); connectd answers as the JVM's " +
		"distributed herder does (404 Unknown connector)", func(jvm, ours *sessionAnswer) {
		if jvm.Status == 500 && strings.Contains(fmt.Sprint(jvm.Body), `because "connProps" is null`) {
			jvm.Status = 404
			jvm.Body = map[string]any{"error_code": float64(404), "message": "Unknown connector: nope"}
		}
	}},
	"unknown_connector_task_restart": {"the JVM's standalone herder goes on past its not-found answer and fails starting the task " +
		"(500); connectd answers as the JVM's distributed herder does (404 Unknown connector)", func(jvm, ours *sessionAnswer) {
		if jvm.Status == 500 && strings.Contains(fmt.Sprint(jvm.Body), "Failed to start task nope-0 since it is not a recognizable type") {
			jvm.Status = 404
			jvm.Body = map[string]any{"error_code": float64(404), "message": "Unknown connector: nope"}
		}
	}},
	"validate_source_class": {"the JVM worker hosts FileStreamSource and validates it (200); connectd hosts sinks only and answers " +
		"as the JVM does for a connector class it cannot load (500 BadRequestException), saying why", func(jvm, ours *sessionAnswer) {
		m, _ := ours.Body.(map[string]any)
		msg, _ := m["message"].(string)
		if jvm.Status == 200 && ours.Status == 500 && strings.HasPrefix(msg, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: "+
			"FileStreamSource is a source connector; this runtime hosts sink connectors only, available connectors are: PluginDesc{") {
			*jvm = *ours
		}
	}},
	"loggers": {"the JVM lists every log4j logger its classes created (186 here); connectd's components share a few " +
		"named loggers; both list every logger they have, root included, with its level", func(jvm, ours *sessionAnswer) {
		// connectd's list must hold its runtime logger and give each entry the JVM's shape, else the step fails
		m, _ := ours.Body.(map[string]any)
		if _, ok := m["org.apache.kafka.connect.runtime"]; !ok {
			return
		}
		for _, e := range m {
			lv, _ := e.(map[string]any)
			if _, ok := lv["level"].(string); !ok || len(lv) != 2 {
				return
			}
			if _, ok := lv["last_modified"]; !ok {
				return
			}
		}
		for _, a := range []*sessionAnswer{jvm, ours} {
			if m, ok := a.Body.(map[string]any); ok {
				a.Body = map[string]any{"root": m["root"]}
			}
		}
	}},
}

// commonPlugins keeps the plugins both workers host, in each worker's order.
func commonPlugins(jvm, ours *sessionAnswer) {
	classes := func(a *sessionAnswer) map[any]bool {
		set := map[any]bool{}
		list, _ := a.Body.([]any)
		for _, p := range list {
			set[p.(map[string]any)["class"]] = true
		}
		return set
	}
	keep := func(a *sessionAnswer, in map[any]bool) {
		list, _ := a.Body.([]any)
		kept := []any{}
		for _, p := range list {
			if in[p.(map[string]any)["class"]] {
				kept = append(kept, p)
			}
		}
		a.Body = kept
	}
	jc, oc := classes(jvm), classes(ours)
	keep(jvm, oc)
	keep(ours, jc)
}

// cutMessageAt drops an error message's tail from marker on, on both sides.
func cutMessageAt(marker string) func(jvm, ours *sessionAnswer) {
	return func(jvm, ours *sessionAnswer) {
		for _, a := range []*sessionAnswer{jvm, ours} {
			if m, ok := a.Body.(map[string]any); ok {
				if msg, ok := m["message"].(string); ok {
					if i := strings.Index(msg, marker); i >= 0 {
						m["message"] = msg[:i]
					}
				}
			}
		}
	}
}
