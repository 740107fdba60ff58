package worker

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testutil/workerproc"
	"github.com/stretchr/testify/require"
)

// TestDevModeSmoke runs `connectd dev` (what `make run` starts): the embedded broker, the demo
// CDC producer, the file sink and the Iceberg sink. Both connectors run, the file fills, and the
// Iceberg tables answer the DuckDB command dev mode prints (scripts/iceberg-query.sh): the
// current-state table has no duplicate ids and the history holds every event it committed.
func TestDevModeSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e")
	}
	dir := t.TempDir()
	port := workerproc.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	p := workerproc.Start(t, "dev", "-data", dir, "-rest", url, "-kafka-port", fmt.Sprint(workerproc.FreePort(t)), "-interval", "5ms")
	workerproc.WaitHealthy(t, url, 60*time.Second)

	for _, name := range []string{"customers-file-sink", "customers-iceberg-sink"} {
		workerproc.WaitRunning(t, url, name, 1, 30*time.Second)
	}
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "customers-changes.txt"))
		return strings.Count(string(b), "\n") >= 50
	}, 30*time.Second, 100*time.Millisecond, "file sink output")

	// The reader is installed into a cache on first use (pip, minutes on a fresh machine): set it up
	// before the bounded wait so that the wait only covers the sink's commit interval.
	if out, err := exec.Command("bash", filepath.Join(workerproc.RepoRoot(), "scripts", "iceberg-reader-setup.sh")).CombinedOutput(); err != nil {
		t.Fatalf("iceberg reader setup: %v\n%s", err, out)
	}
	catDB := filepath.Join(dir, "iceberg", "catalog.db")
	query := func(table, sql string) [][]any {
		out, err := exec.Command("bash", filepath.Join(workerproc.RepoRoot(), "scripts", "iceberg-query.sh"), catDB, table, sql).Output()
		if err != nil {
			return nil
		}
		var res struct{ Rows [][]any }
		if json.Unmarshal(out, &res) != nil {
			return nil
		}
		return res.Rows
	}
	// the sink commits every 10 s in dev mode
	var hist [][]any
	require.Eventually(t, func() bool {
		hist = query("inventory.customers_history", "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t")
		return len(hist) == 1 && fmt.Sprint(hist[0][0]) != "0"
	}, 60*time.Second, time.Second, "history table")
	require.Equal(t, fmt.Sprint(hist[0][0]), fmt.Sprint(hist[0][1]), "each event once")
	cur := query("inventory.customers", "SELECT count(*), count(DISTINCT id) FROM t")
	require.Len(t, cur, 1)
	require.NotEqual(t, "0", fmt.Sprint(cur[0][0]))
	require.Equal(t, fmt.Sprint(cur[0][0]), fmt.Sprint(cur[0][1]), "no duplicate ids in the current-state table")

	require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("dev mode did not stop on SIGTERM")
	}
	// read only now: the process wrote its output concurrently
	require.Contains(t, p.Log(), "scripts/iceberg-query.sh", "dev mode prints how to query the tables")
}

// TestDemoPipeline runs scripts/demo-pipeline.sh (what `make demo` starts): the ClickHouse stand-in
// (chDB behind the native-protocol test shim), then `connectd dev -clickhouse` with the Iceberg and
// ClickHouse sinks on the demo CDC topic and the worker's reconcile schedule. It waits for CLEAN reports
// comparing rows at two Iceberg snapshots through /connectd/reconcile (no run may report drift), runs the
// README's queries, and stops everything with SIGTERM.
func TestDemoPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: builds the binaries, starts chDB")
	}
	dir := t.TempDir()
	ports := workerproc.FreePorts(t, 4)
	rest := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	chHTTP := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	root := workerproc.RepoRoot()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "demo-pipeline.sh"))
	cmd.Env = append(os.Environ(), "DEMO_DATA="+filepath.Join(dir, "data"), "BIN="+filepath.Join(dir, "bin"), "REST="+rest,
		fmt.Sprintf("KAFKA_PORT=%d", ports[2]), fmt.Sprintf("CH_PORT=%d", ports[3]), "CH_HTTP_PORT="+strings.TrimPrefix(chHTTP, "http://127.0.0.1:"),
		"RECONCILE_INTERVAL=1s", "INTERVAL=20ms")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log := &workerproc.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the script's own process group
			<-done
		}
		if t.Failed() {
			t.Logf("demo log:\n%s", workerproc.Tail(log.String(), 6000))
		}
	})

	type pair struct {
		Result string
		Error  string
		Report *struct {
			Status string
			Cut    struct {
				SnapshotID int64 `json:"snapshot_id"`
			}
			Iceberg, ClickHouse struct{ Rows int64 }
			Version             struct{ Compared bool }
			Mismatches          []any
		}
	}
	var last pair
	snapshots := map[int64]bool{}               // clean runs at two Iceberg commits at least: ClickHouse is ahead in between
	deadline := time.Now().Add(5 * time.Minute) // the first run fetches libchdb.so and builds both binaries
	for {
		resp, err := http.Get(rest + "/connectd/reconcile")
		if err == nil {
			var st struct{ Pairs []pair }
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if len(st.Pairs) == 1 {
				last = st.Pairs[0]
				require.NotEqual(t, "drift", last.Result, "reconcile reported drift: %+v", last.Report)
				if r := last.Report; last.Result == "clean" && r != nil && r.Cut.SnapshotID != 0 && r.Iceberg.Rows > 0 {
					require.True(t, r.Version.Compared, "source versions compared")
					require.Equal(t, r.Iceberg.Rows, r.ClickHouse.Rows)
					snapshots[r.Cut.SnapshotID] = true
					if len(snapshots) >= 2 {
						break
					}
				}
			}
		}
		select {
		case <-done:
			t.Fatal("demo-pipeline.sh exited")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no clean reconcile reports with rows at two snapshots (%d); last %+v", len(snapshots), last)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The README's queries: ClickHouse FINAL through the stand-in's HTTP queries, DuckDB on Iceberg.
	resp, err := http.Post(chHTTP+"/", "text/plain", strings.NewReader("SELECT count() FROM default.customers FINAL"))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(body))
	require.NotEqual(t, "0", strings.TrimSpace(string(body)))
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "iceberg-query.sh"), filepath.Join(dir, "data", "iceberg", "catalog.db"),
		"inventory.customers", "SELECT * FROM t ORDER BY id").Output()
	require.NoError(t, err)
	var res struct{ Rows [][]any }
	require.NoError(t, json.Unmarshal(out, &res))
	require.NotEmpty(t, res.Rows)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("demo-pipeline.sh did not stop on SIGTERM")
	}
	require.Contains(t, log.String(), "local stand-in", "the script says what the ClickHouse side is")
}
