package workerproc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sync"
)

// Worker is a connectd worker process and its REST API.
type Worker struct {
	*Proc
	URL  string // http://127.0.0.1:<port>
	Port int
}

// Standalone starts `connectd standalone` from worker properties and connector properties, written under dir.
// Without a listeners key the worker listens on a free loopback port.
func Standalone(t testing.TB, dir string, worker map[string]string, connectors ...map[string]string) *Worker {
	t.Helper()
	port := listen(t, worker)
	workerFile := filepath.Join(dir, fmt.Sprintf("worker-%d.properties", port))
	WriteProperties(t, workerFile, worker)
	args := []string{"standalone", workerFile}
	for i, c := range connectors {
		f := filepath.Join(dir, fmt.Sprintf("connector-%d-%d.properties", port, i))
		WriteProperties(t, f, c)
		args = append(args, f)
	}
	return &Worker{Proc: Start(t, args...), URL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port}
}

// Distributed starts `connectd distributed` from worker properties written to dir/<name>.properties. Without a
// listeners key the worker listens on a free loopback port.
func Distributed(t testing.TB, dir, name string, worker map[string]string, env ...string) *Worker {
	t.Helper()
	port := listen(t, worker)
	f := filepath.Join(dir, name+".properties")
	WriteProperties(t, f, worker)
	w := &Worker{Proc: StartEnv(t, env, "distributed", f), URL: fmt.Sprintf("http://127.0.0.1:%d", port), Port: port}
	w.Name = name
	return w
}

// listen gives the worker properties a loopback listener on a free port unless they name one; it returns the port.
func listen(t testing.TB, worker map[string]string) int {
	if l, ok := worker["listeners"]; ok {
		_, p, err := net.SplitHostPort(l[len("http://"):])
		require.NoError(t, err, "listeners=%s", l)
		var port int
		_, err = fmt.Sscan(p, &port)
		require.NoError(t, err)
		return port
	}
	port := FreePort(t)
	worker["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", port)
	return port
}

// DistributedProps are the properties lines that put a distributed worker into group on the broker at bootstrap:
// the group's internal topics <group>-configs, -offsets and -status, each with one replica.
func DistributedProps(bootstrap, group string) string {
	return fmt.Sprintf(`bootstrap.servers=%s
group.id=%s
config.storage.topic=%s-configs
offset.storage.topic=%s-offsets
status.storage.topic=%s-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
`, bootstrap, group, group, group, group)
}

// WriteWorkerProps writes dir/worker.properties of a standalone worker on the broker at addr, listening on port,
// with String converters, a 1 s offset flush and extra (properties lines) appended; it returns the path.
func WriteWorkerProps(t testing.TB, dir, addr string, port int, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "worker.properties")
	content := fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:%d
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.flush.interval.ms=1000
%s`, addr, port, extra)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// ReadLines reads a file's lines (a FileStreamSink's output); none while the file does not exist.
func ReadLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// FreePort is a loopback TCP port nothing listens on.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreePorts returns n distinct free loopback ports: each is held until all are picked, so the kernel cannot
// hand one out twice, as n calls of FreePort may.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// Do sends a REST request with a JSON body (none when body is nil; a []byte or string is sent as is) and returns
// the status code and the body.
func Do(method, url string, body any) (int, []byte, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = bytes.NewReader([]byte(b))
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, nil, err
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// Request sends a REST request with a JSON body ("" for none) within 30 s and returns the status code and the
// body; a transport error gives code 0 and the error's text.
func Request(method, url, body string) (int, string) {
	return RequestWithin(30*time.Second, method, url, body)
}

// RequestWithin is Request with another timeout.
func RequestWithin(timeout time.Duration, method, url, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// DoJSON is Do that fails the test on a transport error.
func DoJSON(t testing.TB, method, url string, body any) (int, []byte) {
	t.Helper()
	code, out, err := Do(method, url, body)
	require.NoError(t, err, "%s %s", method, url)
	return code, out
}

// Do sends a REST request to the worker (path from the root, e.g. "/connectors") and fails the test on a
// transport error.
func (w *Worker) Do(t testing.TB, method, path string, body any) (int, []byte) {
	t.Helper()
	return DoJSON(t, method, w.URL+path, body)
}

// WaitHealthy waits until GET /health answers 200 (the worker has started: joined its group in distributed mode).
func WaitHealthy(t testing.TB, url string, timeout time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, _, err := Do(http.MethodGet, url+"/health", nil)
		return err == nil && code == http.StatusOK
	}, timeout, 50*time.Millisecond, "REST at %s never became healthy", url)
}

// WaitHealthy waits until the worker's GET /health answers 200, failing the test sooner if the process ends.
func (w *Worker) WaitHealthy(t testing.TB, timeout time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		if !w.Alive() {
			return true
		}
		code, _, err := Do(http.MethodGet, w.URL+"/health", nil)
		return err == nil && code == http.StatusOK
	}, timeout, 50*time.Millisecond, "%s at %s never became healthy", w.Name, w.URL)
	require.True(t, w.Alive(), "%s exited before it became healthy", w.Name)
}

// Status is GET /connectors/{name}/status.
type Status struct {
	Name      string      `json:"name"`
	Connector StateOf     `json:"connector"`
	Tasks     []TaskState `json:"tasks"`
}

// StateOf is a connector's or task's reported state and where it runs.
type StateOf struct {
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// TaskState is one task's entry in Status.
type TaskState struct {
	ID int `json:"id"`
	StateOf
}

// ConnectorStatus reads a connector's status; ok is false when the worker does not answer 200.
func ConnectorStatus(url, connector string) (s Status, ok bool) {
	code, body := Request(http.MethodGet, url+"/connectors/"+connector+"/status", "")
	if code != http.StatusOK {
		return s, false
	}
	return s, json.Unmarshal([]byte(body), &s) == nil
}

// Running reports whether the connector runs with exactly tasks tasks, all running.
func (s Status) Running(tasks int) bool {
	if s.Connector.State != "RUNNING" || len(s.Tasks) != tasks {
		return false
	}
	for _, task := range s.Tasks {
		if task.State != "RUNNING" {
			return false
		}
	}
	return true
}

// WaitRunning waits until the connector runs with exactly tasks tasks, all running, on the worker at url, and
// returns the status that showed it.
func WaitRunning(t testing.TB, url, connector string, tasks int, timeout time.Duration) Status {
	t.Helper()
	var mu sync.Mutex // the condition runs on a goroutine of its own
	var last Status
	if !assert.Eventually(t, func() bool {
		s, ok := ConnectorStatus(url, connector)
		mu.Lock()
		defer mu.Unlock()
		last = s
		return ok && s.Running(tasks)
	}, timeout, 100*time.Millisecond) {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("connector %s never ran with %d running tasks; last status %+v", connector, tasks, last)
	}
	mu.Lock()
	defer mu.Unlock()
	return last
}

// WaitRunning waits until the connector runs with exactly tasks tasks, all running, as this worker reports them.
func (w *Worker) WaitRunning(t testing.TB, connector string, tasks int, timeout time.Duration) Status {
	t.Helper()
	return WaitRunning(t, w.URL, connector, tasks, timeout)
}
