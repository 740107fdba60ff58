package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	p := startWorker(t, "dev", "-data", dir, "-rest", url, "-kafka-port", fmt.Sprint(freePort(t)), "-interval", "5ms")
	waitREST(t, url)

	for _, name := range []string{"customers-file-sink", "customers-iceberg-sink"} {
		require.Eventually(t, func() bool {
			code, body := doJSON(t, "GET", url+"/connectors/"+name+"/status", nil)
			var st struct {
				Connector struct{ State string }
				Tasks     []struct{ State string }
			}
			return code == 200 && json.Unmarshal(body, &st) == nil && st.Connector.State == "RUNNING" &&
				len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING"
		}, 30*time.Second, 100*time.Millisecond, name)
	}
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "customers-changes.txt"))
		return strings.Count(string(b), "\n") >= 50
	}, 30*time.Second, 100*time.Millisecond, "file sink output")

	// The reader is installed into a cache on first use (pip, minutes on a fresh machine): set it up
	// before the bounded wait so that the wait only covers the sink's commit interval.
	if out, err := exec.Command("bash", filepath.Join("..", "..", "scripts", "iceberg-reader-setup.sh")).CombinedOutput(); err != nil {
		t.Fatalf("iceberg reader setup: %v\n%s", err, out)
	}
	catDB := filepath.Join(dir, "iceberg", "catalog.db")
	query := func(table, sql string) [][]any {
		out, err := exec.Command("bash", filepath.Join("..", "..", "scripts", "iceberg-query.sh"), catDB, table, sql).Output()
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

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("dev mode did not stop on SIGTERM")
	}
	// read only now: the process wrote its output concurrently
	require.Contains(t, p.log.String(), "scripts/iceberg-query.sh", "dev mode prints how to query the tables")
}
