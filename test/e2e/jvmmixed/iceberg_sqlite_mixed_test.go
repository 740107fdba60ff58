package jvmmixed

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// stuckNote starts the note a connectd Iceberg task puts in its RUNNING status trace when no commit made its
// records durable for longer than its stuck threshold (three commit intervals, at least a minute).
const stuckNote = "connectd: no commit has made this task's records durable"

// icebergStallShown bounds how long commits may make no progress before the connectd tasks' status trace says
// so, within a minute: the stuck threshold's 45 s, plus a few of the task's
// progress checks and status writes.
const icebergStallShown = 60 * time.Second

// TestIcebergConnectorAcrossJVMAndGoSQLite runs the connector of TestIcebergConnectorAcrossJVMAndGo on a JVM
// worker (the Apache sink 1.10.1, sqlite-jdbc on its plugin path) and a connectd worker that share one
// `jdbc:sqlite:<file>` JdbcCatalog, as a user points both at the catalog file they had, without tuning its
// busy timeouts. Under a steady load, either commits land (then every record is in the table exactly once,
// the same end check as on the REST catalog) or, whenever no snapshot has come for longer than
// icebergStallShown while records flow, the status trace of the tasks connectd runs says why: a shared
// SQLite catalog never stalls silently.
//
//	go test ./test/e2e/jvmmixed -run TestIcebergConnectorAcrossJVMAndGoSQLite -v -count=1 -timeout 20m
func TestIcebergConnectorAcrossJVMAndGoSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a Kafka broker and a JVM Connect worker with the Apache Iceberg sink: skipped under -short")
	}
	t.Parallel()
	cp := jvmClasspath(t)
	plugin := icebergSinkPluginPath(t)
	icebergtest.Python(t)
	workerproc.Binary(t)
	dir := t.TempDir()
	cat := &sqliteCatalog{file: filepath.Join(dir, "catalog.db"), warehouse: "file://" + filepath.Join(dir, "warehouse")}
	cat.createNamespace(t, icebergNamespace)

	g := newIcebergGroup(t, cp, plugin, cat, "sqlite_shared")
	j1 := g.icebergJVM()
	g1 := g.goWorker("go1")
	g.createSink(j1.URL)
	own := g.awaitRunning("tasks on the JVM and the connectd worker", icebergPhaseTimeout, covers(j1.ID, gid(g1)))
	g.mark(fmt.Sprintf("tasks on both kinds: %v", own))
	stop := g.produce()
	started := time.Now()

	// watch: every stall longer than icebergStallShown must be in the connectd tasks' status trace
	lastSnap, snaps, lastProgress := int64(-1), 0, started
	stalls := 0
	for time.Since(started) < 100*time.Second {
		time.Sleep(time.Second)
		g.check()
		if tm, err := cat.load(icebergNamespace, g.tbl); err == nil && tm.Current != lastSnap && tm.current() != nil {
			lastSnap, lastProgress = tm.Current, time.Now()
			snaps++
			g.mark(fmt.Sprintf("snapshot %d by the %s coordinator (%s records added)", tm.Current, committerKind(*tm.current()), tm.current().Summary["added-records"]))
		} else if err != nil {
			g.mark("reading the catalog: " + err.Error())
		}
		stalled := time.Since(lastProgress)
		if stalled < icebergStallShown {
			continue
		}
		traces := goTaskTraces(t, g1, g.name)
		shown := len(traces) > 0
		for _, tr := range traces {
			shown = shown && strings.Contains(tr, stuckNote)
		}
		require.True(t, shown, "no snapshot for %v while records flow, and the status of connectd's tasks does not say so: %q",
			stalled.Round(time.Second), traces)
		if stalls == 0 {
			g.mark(fmt.Sprintf("no snapshot for %v; connectd's task status says: %s", stalled.Round(time.Second), firstLine(traces[0])))
		}
		stalls++
	}
	if time.Since(lastProgress) < icebergStallShown {
		g.mark(fmt.Sprintf("%d snapshots while producing; the last %v ago", snaps, time.Since(lastProgress).Round(time.Second)))
		g.finish(stop)
		return
	}
	stop()
	t.Logf("commits on the shared SQLite catalog stalled (%d snapshots, none for %v); the connectd tasks' status showed it within %v",
		snaps, time.Since(lastProgress).Round(time.Second), icebergStallShown)
}

// goTaskTraces returns the status traces of the connector's tasks that run on the connectd worker w.
func goTaskTraces(t testing.TB, w *dworker, name string) []string {
	code, body := httpDo("GET", w.URL+"/connectors/"+name+"/status", "")
	if code != 200 {
		return nil
	}
	var st struct {
		Tasks []struct {
			State    string `json:"state"`
			WorkerID string `json:"worker_id"`
			Trace    string `json:"trace"`
		} `json:"tasks"`
	}
	if json.Unmarshal([]byte(body), &st) != nil {
		return nil
	}
	var out []string
	for _, ts := range st.Tasks {
		if ts.WorkerID == gid(w) {
			out = append(out, ts.State+": "+ts.Trace)
		}
	}
	return out
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// sqliteCatalog is a JdbcCatalog in one SQLite file that both kinds of worker open: the test creates the table
// through connectd's catalog loader and reads the table's metadata location from the file, its metadata from
// the warehouse.
type sqliteCatalog struct{ file, warehouse string }

const sqliteCatalogName = "iceberg" // the sink's iceberg.catalog default

func (c *sqliteCatalog) sinkProps() map[string]string {
	return map[string]string{
		"iceberg.catalog.catalog-impl":        "org.apache.iceberg.jdbc.JdbcCatalog",
		"iceberg.catalog.uri":                 "jdbc:sqlite:" + c.file,
		"iceberg.catalog.jdbc.schema-version": "V1",
		"iceberg.catalog.warehouse":           c.warehouse,
	}
}

func (c *sqliteCatalog) open(t testing.TB) catalog.Catalog {
	t.Helper()
	cat, err := catalogx.Open(context.Background(), sqliteCatalogName, map[string]string{
		"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog", "uri": "jdbc:sqlite:" + c.file,
		"jdbc.schema-version": "V1", "warehouse": c.warehouse,
	})
	require.NoError(t, err)
	return cat
}

func closeCatalog(t testing.TB, cat catalog.Catalog) {
	if cl, ok := cat.(interface{ Close() error }); ok {
		require.NoError(t, cl.Close())
	}
}

func (c *sqliteCatalog) createNamespace(t testing.TB, ns string) {
	t.Helper()
	cat := c.open(t)
	defer closeCatalog(t, cat)
	require.NoError(t, cat.CreateNamespace(context.Background(), table.Identifier{ns}, nil))
}

// createTable creates an unpartitioned format-2 table with the records' two fields.
func (c *sqliteCatalog) createTable(t testing.TB, ns, name string) {
	t.Helper()
	cat := c.open(t)
	defer closeCatalog(t, cat)
	sc := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64},
		ice.NestedField{ID: 2, Name: "payload", Type: ice.PrimitiveTypes.String})
	_, err := cat.CreateTable(context.Background(), table.Identifier{ns, name}, sc,
		catalog.WithProperties(ice.Properties{"format-version": "2"}))
	require.NoError(t, err)
}

// load reads the table's current metadata location from the catalog file (read-only, a short transaction, as
// another reader of a shared catalog would) and its metadata file.
func (c *sqliteCatalog) load(ns, name string) (*tableMeta, error) {
	db, err := sql.Open("sqlite", "file:"+c.file+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var loc string
	err = db.QueryRow(`SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`,
		sqliteCatalogName, ns, name).Scan(&loc)
	if err != nil {
		return nil, fmt.Errorf("load %s.%s: %w", ns, name, err)
	}
	b, err := os.ReadFile(strings.TrimPrefix(strings.TrimPrefix(loc, "file://"), "file:"))
	if err != nil {
		return nil, err
	}
	var v struct {
		Current   *int64            `json:"current-snapshot-id"`
		Snapshots []icebergSnapshot `json:"snapshots"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	m := &tableMeta{MetadataLocation: loc, Current: -1, Snapshots: v.Snapshots}
	if v.Current != nil {
		m.Current = *v.Current
	}
	return m, nil
}
