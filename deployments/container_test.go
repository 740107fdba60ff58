package deployments

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	_ "modernc.org/sqlite"

	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// TestMain stops the Kafka broker kafkatest.Bootstrap may have started.
func TestMain(m *testing.M) { kafkatest.Main(m) }

// containerEngine returns podman or docker when one of them can run containers here; else the test
// skips, saying why.
func containerEngine(t *testing.T) string {
	t.Helper()
	var why []string
	for _, name := range []string{"podman", "docker"} {
		path, err := exec.LookPath(name)
		if err != nil {
			why = append(why, name+": not installed")
			continue
		}
		if out, err := exec.Command(path, "info").CombinedOutput(); err != nil {
			why = append(why, fmt.Sprintf("%s info: %v: %s", name, err, lastLine(out)))
			continue
		}
		return path
	}
	t.Skipf("no container engine: %s", strings.Join(why, "; "))
	return ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func httpDo(method, url, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func eventually(t *testing.T, timeout time.Duration, what func() string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, what())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

type connStatus struct {
	Tasks []struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
}

// TestContainerSmoke runs the image as users do: distributed workers on a read-only root (the image's own
// /data volume the only writable place), a FileStreamSink and a partitioned Iceberg table (whose rows are
// spooled to the scratch directory), 2 workers scaled to 3, and every worker exiting 0 on SIGTERM.
func TestContainerSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the image and runs containers")
	}
	engine := containerEngine(t)
	image := "connectd:smoke-test"
	build := exec.Command("bash", "../scripts/image.sh", image)
	build.Env = append(os.Environ(), "CONTAINER="+engine, "VERSION=smoke-test")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/image.sh: %v\n%s", err, out)
	}
	t.Logf("image: %s", run(t, engine, "image", "inspect", "-f", "{{.Size}} bytes", image))
	// an engine that is installed but cannot start containers here (its OCI runtime refuses the host's
	// cgroups or rlimits) is no failure of the image
	if out, err := exec.Command(engine, "run", "--rm", "--read-only", image, "version").CombinedOutput(); err != nil {
		if bytes.Contains(out, []byte("OCI")) {
			t.Skipf("%s cannot start containers here: %s (with podman, a containers.conf choosing runtime \"runc\" and no default_ulimits may help: CONTAINERS_CONF)", filepath.Base(engine), lastLine(out))
		}
		t.Fatalf("the image does not run: %v\n%s", err, out)
	}
	bootstrap := kafkatest.Bootstrap(t)

	// the lake (catalog, warehouse, file sink output) at the same path inside and out, writable by uid 65532
	lake := t.TempDir()
	if err := os.Chmod(lake, 0o777); err != nil {
		t.Fatal(err)
	}
	group := kafkatest.UniqueName(t, "smoke")
	topic := kafkatest.UniqueName(t, "smoke-events")
	kafkatest.CreateTopic(t, bootstrap, topic, 6, nil)
	control := kafkatest.UniqueName(t, "smoke-control")
	kafkatest.CreateTopic(t, bootstrap, control, 1, nil)

	type worker struct{ name, url, id string }
	var workers []worker
	start := func(i int) worker {
		port := freePort(t)
		w := worker{name: fmt.Sprintf("%s-%d", group, i), url: fmt.Sprintf("http://127.0.0.1:%d", port), id: fmt.Sprintf("127.0.0.1:%d", port)}
		run(t, engine, "run", "-d", "--name", w.name, "--network", "host", "--read-only", "--memory", "512m",
			"-v", lake+":"+lake,
			"-e", "CONNECT_BOOTSTRAP_SERVERS="+bootstrap,
			"-e", "CONNECT_GROUP_ID="+group,
			"-e", "CONNECT_CONFIG_STORAGE_TOPIC="+group+"-configs",
			"-e", "CONNECT_OFFSET_STORAGE_TOPIC="+group+"-offsets",
			"-e", "CONNECT_STATUS_STORAGE_TOPIC="+group+"-status",
			"-e", "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=1",
			"-e", "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR=1",
			"-e", "CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=1",
			"-e", fmt.Sprintf("CONNECT_LISTENERS=http://127.0.0.1:%d", port),
			"-e", "CONNECT_REST_ADVERTISED_HOST_NAME=127.0.0.1",
			image)
		t.Cleanup(func() {
			if t.Failed() {
				out, _ := exec.Command(engine, "logs", "--tail", "60", w.name).CombinedOutput()
				t.Logf("logs of %s:\n%s", w.name, out)
			}
			_ = exec.Command(engine, "rm", "-f", "-v", w.name).Run()
		})
		eventually(t, 90*time.Second, func() string { return w.name + " never healthy" }, func() bool {
			code, _ := httpDo("GET", w.url+"/health", "")
			return code == 200
		})
		workers = append(workers, w)
		return w
	}
	start(1)
	start(2)

	cat := filepath.Join(lake, "catalog.db")
	connectors := map[string]map[string]string{
		"smoke-file": {
			"connector.class": "FileStreamSink", "tasks.max": "1", "topics": topic,
			"file":          filepath.Join(lake, "out.txt"),
			"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
		},
		"smoke-iceberg": {
			"connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "tasks.max": "6", "topics": topic,
			"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
			"value.converter.schemas.enable":         "false",
			"iceberg.tables":                         "shop.events",
			"iceberg.tables.auto-create-enabled":     "true",
			"iceberg.table.shop.events.partition-by": "region",
			"iceberg.catalog.type":                   "sql",
			"iceberg.catalog.uri":                    "jdbc:sqlite:" + cat,
			"iceberg.catalog.warehouse":              filepath.Join(lake, "warehouse"),
			"iceberg.control.topic":                  control,
			"iceberg.control.commit.interval-ms":     "2000",
			"iceberg.control.commit.timeout-ms":      "10000",
		},
	}
	for name, cfg := range connectors {
		body, _ := json.Marshal(map[string]any{"name": name, "config": cfg})
		var last string
		eventually(t, 60*time.Second, func() string { return "creating " + name + ": " + last }, func() bool {
			code, resp := httpDo("POST", workers[0].url+"/connectors", string(body))
			last = fmt.Sprintf("%d %s", code, resp)
			return code == 201 || (code == 409 && strings.Contains(resp, "already exists"))
		})
	}
	status := func(name string) (connStatus, string) {
		code, resp := httpDo("GET", workers[0].url+"/connectors/"+name+"/status", "")
		var cs connStatus
		if code == 200 {
			_ = json.Unmarshal([]byte(resp), &cs)
		}
		return cs, resp
	}
	running := func(name string, tasks int, on func(ids map[string]bool) bool) {
		var last string
		eventually(t, 90*time.Second, func() string { return name + ": " + last }, func() bool {
			cs, resp := status(name)
			last = resp
			ids := map[string]bool{}
			for _, tk := range cs.Tasks {
				if tk.State != "RUNNING" {
					return false
				}
				ids[tk.WorkerID] = true
			}
			return len(cs.Tasks) == tasks && on(ids)
		})
	}
	anywhere := func(map[string]bool) bool { return true }
	running("smoke-file", 1, anywhere)
	running("smoke-iceberg", 6, anywhere)

	produce := func(from, n int) {
		var msgs []*kgo.Record
		for i := from; i < from+n; i++ {
			v := fmt.Sprintf(`{"id":%d,"region":"r%d","note":"n%d"}`, i, i%3, i)
			msgs = append(msgs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(v)})
		}
		kafkatest.Produce(t, bootstrap, topic, msgs...)
	}
	fileLines := func() int {
		b, _ := os.ReadFile(filepath.Join(lake, "out.txt"))
		return bytes.Count(b, []byte("\n"))
	}

	produce(0, 300)
	eventually(t, 60*time.Second, func() string { return fmt.Sprintf("file sink wrote %d of 300 lines", fileLines()) }, func() bool { return fileLines() == 300 })

	// scale 2 -> 3: the new worker takes a share of the Iceberg tasks
	third := start(3)
	running("smoke-iceberg", 6, func(ids map[string]bool) bool { return ids[third.id] })
	running("smoke-file", 1, anywhere)
	produce(300, 300)
	eventually(t, 60*time.Second, func() string { return fmt.Sprintf("file sink wrote %d of 600 lines", fileLines()) }, func() bool { return fileLines() == 600 })
	countRows(t, cat, 600)
	for _, name := range []string{"smoke-file", "smoke-iceberg"} {
		cs, resp := status(name)
		for _, tk := range cs.Tasks {
			if tk.State != "RUNNING" {
				t.Fatalf("%s: %s", name, resp)
			}
		}
	}

	// SIGTERM: every worker hands its tasks over and exits 0
	for _, w := range workers {
		run(t, engine, "kill", "--signal", "TERM", w.name)
		eventually(t, 60*time.Second, func() string { return w.name + " still running after SIGTERM" }, func() bool {
			out, _ := exec.Command(engine, "inspect", "-f", "{{.State.Running}}", w.name).CombinedOutput()
			return strings.TrimSpace(string(out)) == "false"
		})
		if code := run(t, engine, "inspect", "-f", "{{.State.ExitCode}}", w.name); code != "0" {
			t.Fatalf("%s exited %s on SIGTERM", w.name, code)
		}
	}
}

// countRows waits until the Iceberg table shop.events in the SQLite catalog holds want rows (DuckDB reads it).
func countRows(t *testing.T, cat string, want int) {
	t.Helper()
	var got string
	eventually(t, 90*time.Second, func() string { return fmt.Sprintf("the Iceberg table holds %s rows, want %d", got, want) }, func() bool {
		db, err := sql.Open("sqlite", cat)
		if err != nil {
			got = err.Error()
			return false
		}
		defer db.Close()
		var meta string
		if err := db.QueryRow(`SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 'shop' AND table_name = 'events'`).Scan(&meta); err != nil {
			got = err.Error()
			return false
		}
		res := icebergtest.Read(t, meta, "SELECT count(*) AS n, count(DISTINCT id) AS ids FROM t", nil)
		got = fmt.Sprint(res.Rows)
		return got == fmt.Sprintf("[[%d %d]]", want, want) // every record once
	})
}
