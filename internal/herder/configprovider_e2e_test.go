package herder_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/api"
	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// captureLogs sends every log line of the process (down to DEBUG) to a buffer as well, until the test ends.
func captureLogs(t *testing.T) *lockedBuffer {
	prev := slog.Default()
	buf := &lockedBuffer{}
	slog.SetDefault(slog.New(slog.NewTextHandler(io.MultiWriter(buf, os.Stderr), &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return buf
}

// restRecorder calls the REST API and keeps every answer body.
type restRecorder struct {
	t       *testing.T
	url     string
	answers strings.Builder
}

func (r *restRecorder) call(method, path string, body any) (int, string) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(r.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	require.NoError(r.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(r.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(r.t, err)
	r.answers.Write(b)
	r.answers.WriteByte('\n')
	return resp.StatusCode, string(b)
}

// Config providers end to end on a real broker: a FileStreamSink whose file comes from ${file:...}, with
// secrets from the file, directory and env providers. The sink writes to the resolved file, GET shows the
// references (connector and task configs), a provider failure at task start fails the task with the
// provider's message and a restart recovers, and no secret ever appears in a REST answer or a log line.
func TestConfigProvidersEndToEnd(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	require.NoError(t, os.MkdirAll(filepath.Join(secrets, "dir"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "out"), 0o700))
	outFile := filepath.Join(dir, "out", "sink.txt")
	propsFile := filepath.Join(secrets, "connector.properties")
	propsBody := fmt.Sprintf("path=%s\npassword=FileSecret-1\n", outFile)
	require.NoError(t, os.WriteFile(propsFile, []byte(propsBody), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(secrets, "dir", "jdbc-password"), []byte("DirSecret-2"), 0o600))
	outside := filepath.Join(dir, "outside.properties")
	require.NoError(t, os.WriteFile(outside, []byte("path=OutsideSecret-5\n"), 0o600))
	t.Setenv("CONNECTD_E2E_SECRET", "EnvSecret-3")
	t.Setenv("CONNECTD_E2E_FLUSH", "700")
	t.Setenv("CONNECTD_E2E_TASKS", "2")
	t.Setenv("CONNECTD_OTHER_SECRET", "HiddenEnvSecret-6")
	secretValues := []string{"FileSecret-1", "DirSecret-2", "EnvSecret-3", "PlainSecret-4", "OutsideSecret-5", "HiddenEnvSecret-6"}

	logs := captureLogs(t)
	e := newEnv(t, map[string]string{
		"config.providers":                               "file,directory,env",
		"config.providers.file.class":                    configprovider.FileClass,
		"config.providers.file.param.allowed.paths":      secrets,
		"config.providers.directory.class":               "DirectoryConfigProvider",
		"config.providers.directory.param.allowed.paths": filepath.Join(secrets, "dir"),
		"config.providers.env.class":                     configprovider.EnvVarClass,
		"config.providers.env.param.allowlist.pattern":   "CONNECTD_E2E_.*",
		"offset.flush.interval.ms":                       "${env:CONNECTD_E2E_FLUSH}",
		"producer.ssl.key.password":                      "${file:" + propsFile + ":password}",
	})
	assert.Equal(t, 700*time.Millisecond, e.w.Config().OffsetFlushInterval, "worker properties are resolved too")
	assert.Equal(t, "FileSecret-1", e.w.Config().Props["producer.ssl.key.password"])

	srv := api.NewServer(e.h, api.WithListeners("http://127.0.0.1:0"), api.WithRegistry(testRegistry()),
		api.WithSinkConnectorConfigDef(herder.ConnectorConfigDef()))
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Shutdown(t.Context()) })
	rest := &restRecorder{t: t, url: "http://" + srv.Addrs()[0].String()}

	topic := fmt.Sprintf("cp-e2e-%d", time.Now().UnixNano())
	kafkatest.CreateTopic(t, e.addr, topic, 1, nil)
	config := map[string]string{
		"connector.class":                      "FileStreamSink",
		"tasks.max":                            "${env:CONNECTD_E2E_TASKS}",
		"topics":                               topic,
		"file":                                 "${file:" + propsFile + ":path}",
		"password":                             "${file:" + propsFile + ":password}",
		"iceberg.catalog.jdbc.password":        "${directory:" + filepath.Join(secrets, "dir") + ":jdbc-password}",
		"value.converter.basic.auth.user.info": "user:${env:CONNECTD_E2E_SECRET}",
		"not.allowed":                          "${env:CONNECTD_OTHER_SECRET}",
	}
	code, body := rest.call("POST", "/connectors", map[string]any{"name": "cp", "config": config})
	require.Equal(t, 201, code, body)
	e.waitState("cp", herder.StateRunning, 2)

	produceN(t, e.addr, topic, 0, 20)
	waitLines(t, outFile, 20)

	want := map[string]string{"name": "cp"}
	for k, v := range config {
		want[k] = v
	}
	code, body = rest.call("GET", "/connectors/cp/config", nil)
	require.Equal(t, 200, code)
	var got map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, want, got, "GET shows the config as stored, with its references")

	code, body = rest.call("GET", "/connectors/cp/tasks", nil)
	require.Equal(t, 200, code)
	var tasks []herder.TaskInfo
	require.NoError(t, json.Unmarshal([]byte(body), &tasks))
	require.Len(t, tasks, 2, "tasks.max from a provider")
	for _, k := range []string{"tasks.max", "file", "password", "iceberg.catalog.jdbc.password", "value.converter.basic.auth.user.info"} {
		assert.Equal(t, config[k], tasks[0].Config[k], "task configs keep the connector's references: %s", k)
	}

	// validate answers: PASSWORD values are [hidden], whether given plainly or by reference.
	chConfig := map[string]string{"connector.class": "com.clickhouse.kafka.connect.ClickHouseSinkConnector", "topics": topic,
		"hostname": "localhost", "password": "${file:" + propsFile + ":password}"}
	for _, pw := range []string{chConfig["password"], "PlainSecret-4"} {
		chConfig["password"] = pw
		code, body = rest.call("PUT", "/connector-plugins/ClickHouseSinkConnector/config/validate", chConfig)
		require.Equal(t, 200, code, body)
		assert.Equal(t, "[hidden]", validatedValue(t, body, "password"))
	}
	// A path outside allowed.paths is not read: the reference stays as written.
	fsConfig := map[string]string{"connector.class": "FileStreamSink", "topics": topic, "file": "${file:" + outside + ":path}"}
	code, body = rest.call("PUT", "/connector-plugins/FileStreamSinkConnector/config/validate", fsConfig)
	require.Equal(t, 200, code, body)
	assert.Equal(t, fsConfig["file"], validatedValue(t, body, "file"))
	// A provider failure fails the request with the provider's message, as the JVM's 500.
	missing := filepath.Join(secrets, "missing.properties")
	fsConfig["file"] = "${file:" + missing + ":path}"
	code, body = rest.call("POST", "/connectors", map[string]any{"name": "cp-missing", "config": fsConfig})
	assert.Equal(t, 500, code)
	assert.Contains(t, body, "Could not read properties from file "+missing)
	// No connector type: the herder echoes the config with its secrets hidden.
	_, err := e.h.ValidateConnectorConfig(t.Context(), map[string]string{"topics": topic, "password": "PlainSecret-4"})
	require.Error(t, err)
	assert.Equal(t, "Connector config {password=[hidden], topics="+topic+"} contains no connector type", err.Error())

	// The properties file disappears: the restarted task fails with the provider's message; once it is back,
	// a restart runs the task again and it writes where the reference points.
	require.NoError(t, os.Remove(propsFile))
	code, body = rest.call("POST", "/connectors/cp/tasks/0/restart", nil)
	assert.Equal(t, 500, code, "as the JVM's standalone herder: the restart request fails with the provider's message")
	assert.Contains(t, body, "Could not read properties from file "+propsFile)
	st := waitTaskState(t, e, "cp", herder.StateFailed)
	assert.Contains(t, st.Tasks[0].Trace, "Could not read properties from file "+propsFile)
	require.NoError(t, os.WriteFile(propsFile, []byte(propsBody), 0o600))
	code, body = rest.call("POST", "/connectors/cp/tasks/0/restart", nil)
	require.Equal(t, 204, code, body)
	e.waitState("cp", herder.StateRunning, 2)
	produceN(t, e.addr, topic, 20, 10)
	waitLines(t, outFile, 30)

	rest.call("GET", "/connectors/cp/status", nil)
	rest.call("GET", "/connectors?expand=info&expand=status", nil)
	code, _ = rest.call("DELETE", "/connectors/cp", nil)
	require.Equal(t, 204, code)

	logText, answers := logs.String(), rest.answers.String()
	assert.Contains(t, logText, "SinkConnectorConfig values")
	assert.Contains(t, logText, "TaskConfig values")
	assert.Contains(t, logText, "[hidden]")
	for _, s := range secretValues {
		assert.NotContains(t, logText, s, "a log line shows a secret")
		assert.NotContains(t, answers, s, "a REST answer shows a secret")
	}
}

func validatedValue(t *testing.T, body, key string) string {
	t.Helper()
	var infos herder.ConfigInfos
	require.NoError(t, json.Unmarshal([]byte(body), &infos))
	for _, c := range infos.Configs {
		if c.Value.Name == key {
			require.NotNil(t, c.Value.Value, key)
			return *c.Value.Value
		}
	}
	t.Fatalf("no value for %s in %s", key, body)
	return ""
}

func waitLines(t *testing.T, path string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		return err == nil && strings.Count(string(b), "\n") >= n
	}, 60*time.Second, 50*time.Millisecond, "waiting for %d lines in %s", n, path)
}

func waitTaskState(t *testing.T, e *env, name string, want herder.State) *herder.ConnectorStateInfo {
	t.Helper()
	var last *herder.ConnectorStateInfo
	require.Eventually(t, func() bool {
		st, err := e.h.ConnectorStatus(t.Context(), name)
		if err != nil || len(st.Tasks) == 0 {
			return false
		}
		last = st
		return st.Tasks[0].State == want
	}, 60*time.Second, 50*time.Millisecond, "waiting for task of %s %s: last %+v", name, want, last)
	return last
}

// fifoLines reads lines from a FIFO until n were read, then closes its end before handing them over.
func fifoLines(path string, n int) <-chan []string {
	ch := make(chan []string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			ch <- nil
			return
		}
		var lines []string
		sc := bufio.NewScanner(f)
		for len(lines) < n && sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
		ch <- lines
	}()
	return ch
}

func committedOffset(t *testing.T, e *env, name string) int64 {
	offs, err := e.h.ConnectorOffsets(t.Context(), name)
	if err != nil || len(offs.Offsets) != 1 {
		return -1
	}
	switch v := offs.Offsets[0].Offset["kafka_offset"].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return -1
}

// The file sink on a real broker: writing to /dev/null commits its offsets (no fsync on a character
// device), and when the reader of a FIFO goes away the task stays RUNNING, retries, and writes the rest
// to the next reader, from a line start, before committing.
func TestFileSinkDevNullAndFIFO(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct{ name, file string }{{"devnull", "/dev/null"}, {"fifo", filepath.Join(t.TempDir(), "fifo")}} {
		t.Run(tc.name, func(t *testing.T) {
			topic := fmt.Sprintf("file-sink-%s-%d", tc.name, time.Now().UnixNano())
			kafkatest.CreateTopic(t, e.addr, topic, 1, nil)
			var first <-chan []string
			if tc.name == "fifo" {
				require.NoError(t, syscall.Mkfifo(tc.file, 0o600))
				first = fifoLines(tc.file, 10)
			}
			name := "file-" + tc.name
			e.create(name, map[string]string{"name": name, "connector.class": "FileStreamSink", "tasks.max": "1",
				"topics": topic, "file": tc.file})
			e.waitState(name, herder.StateRunning, 1)
			produceN(t, e.addr, topic, 0, 10)
			if first != nil {
				want := make([]string, 10)
				for i := range want {
					want[i] = fmt.Sprintf("v%d", i)
				}
				assert.Equal(t, want, <-first)
				// The reader is gone: the next records fail to write; the task keeps retrying.
				produceN(t, e.addr, topic, 10, 10)
				time.Sleep(time.Second)
				e.waitState(name, herder.StateRunning, 1)
				second := fifoLines(tc.file, 10)
				want = want[:0]
				for i := 10; i < 20; i++ {
					want = append(want, fmt.Sprintf("v%d", i))
				}
				select {
				case got := <-second:
					assert.Equal(t, want, got)
				case <-time.After(60 * time.Second):
					t.Fatal("the next reader got nothing")
				}
			} else {
				produceN(t, e.addr, topic, 10, 10)
			}
			require.Eventually(t, func() bool { return committedOffset(t, e, name) == 20 }, 60*time.Second, 100*time.Millisecond,
				"offsets committed: %d", committedOffset(t, e, name))
			st, err := e.h.ConnectorStatus(t.Context(), name)
			require.NoError(t, err)
			assert.Equal(t, herder.StateRunning, st.Tasks[0].State)
			require.NoError(t, e.h.DeleteConnector(t.Context(), name))
		})
	}
}
