package cdcmodel

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	_ "github.com/jackc/pgx/v5/stdlib" // reads a PostgreSQL catalog's table pointers, independently of the sink
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // reads the catalog's table pointers, independently of the sink

	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// icebergSink configures the Iceberg sink with a SQLite SQL catalog: one topic feeds four tables of one
// connector, an upsert table versioned by the envelope's source.lsn, the same unpartitioned (whose data
// files, of flat rows, connectd's own Parquet writer writes; the partitioned tables' go through
// iceberg-go's), one versioned by the row's updated_at column (partitioned by a column that updates
// change, so keys move between partitions), and the raw CDC history.
//
// The catalog is cat, or SQLite in a temporary directory when cat is nil.
//
// maintained turns on the connector's table maintenance (compaction, manifest rewrite, snapshot expiry) every
// second or so, so that the worker's SIGKILLs also land inside rewrites; every round then also checks that the
// live files per partition stay bounded.
func icebergSink(t *testing.T, maintained bool, cat *icebergCatalog) sinkUnderTest {
	dir := t.TempDir()
	catDB := filepath.Join(dir, "catalog.db")
	wh := filepath.Join(dir, "warehouse")
	if cat == nil {
		cat = &icebergCatalog{uri: "jdbc:sqlite:" + catDB}
	}
	s := sinkUnderTest{name: "iceberg"}
	if maintained {
		s.name = "iceberg-maintained"
	}
	s.props = func(topic string, rng *rand.Rand) string {
		extra := ""
		if maintained {
			extra = fmt.Sprintf(`iceberg.tables.maintenance.interval-ms=%d
iceberg.tables.maintenance.retain-last=2
iceberg.tables.maintenance.max-snapshot-age-ms=5000
iceberg.tables.maintenance.expire-grace-ms=1000
`, 500+rng.Intn(1000))
		}
		return extra + fmt.Sprintf(`name=cdc-model-`+s.name+`
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max=2
topics=%s
consumer.override.max.poll.records=%d
consumer.override.session.timeout.ms=6000
consumer.override.heartbeat.interval.ms=1000
iceberg.tables=cdc.by_lsn,cdc.by_lsn_flat,cdc.by_updated_at,cdc.history
iceberg.tables.auto-create-enabled=true
iceberg.tables.evolve-schema-enabled=true
iceberg.tables.upsert-mode-enabled=true
iceberg.tables.default-id-columns=id
iceberg.table.cdc.by_lsn.version-column=source.lsn
iceberg.table.cdc.by_lsn.partition-by=bucket(id,4)
iceberg.table.cdc.by_lsn_flat.version-column=source.lsn
iceberg.table.cdc.by_updated_at.version-column=updated_at
iceberg.table.cdc.by_updated_at.partition-by=bucket(qty,3)
iceberg.table.cdc.history.raw-cdc=true
iceberg.catalog.type=sql
iceberg.catalog.uri=%s
iceberg.catalog.warehouse=%s
iceberg.control.commit.interval-ms=%d
`, topic, 50+rng.Intn(450), cat.uri, wh, 150+rng.Intn(250)) + cat.props()
	}
	duck := func(table string) func(t *testing.T) map[string][]cdcstream.Row {
		return func(t *testing.T) map[string][]cdcstream.Row {
			res := icebergtest.Read(t, cat.metadataLocation(t, table), "SELECT * FROM t", nil)
			out := map[string][]cdcstream.Row{}
			for _, m := range res.Maps() {
				r := rowFromJSON(t, m)
				out[r.ID] = append(out[r.ID], r)
			}
			return out
		}
	}
	java := func(table string) func(t *testing.T) map[string][]cdcstream.Row {
		return func(t *testing.T) map[string][]cdcstream.Row {
			out := map[string][]cdcstream.Row{}
			for _, m := range javaRead(t, cat.metadataLocation(t, table)).Maps() {
				r := rowFromJSON(t, m)
				out[r.ID] = append(out[r.ID], r)
			}
			return out
		}
	}
	s.views = []view{
		{name: "iceberg cdc.by_lsn (version source.lsn) via DuckDB", table: "by_lsn", version: cdcstream.VersionLSN, read: duck("by_lsn")},
		{name: "iceberg cdc.by_updated_at (version updated_at) via DuckDB", table: "by_updated_at", version: cdcstream.VersionColumn, read: duck("by_updated_at")},
		{name: "iceberg cdc.by_lsn (version source.lsn) via Iceberg Java", table: "by_lsn", version: cdcstream.VersionLSN, read: java("by_lsn")},
		{name: "iceberg cdc.by_lsn_flat (version source.lsn, unpartitioned) via DuckDB", table: "by_lsn_flat", version: cdcstream.VersionLSN, read: duck("by_lsn_flat")},
		{name: "iceberg cdc.by_lsn_flat (version source.lsn, unpartitioned) via Iceberg Java", table: "by_lsn_flat", version: cdcstream.VersionLSN, read: java("by_lsn_flat")},
		{name: "iceberg cdc.by_updated_at (version updated_at) via Iceberg Java", table: "by_updated_at", version: cdcstream.VersionColumn, read: java("by_updated_at")},
	}
	s.wholeRun = func(t *testing.T, records int64) {
		res := icebergtest.Read(t, cat.metadataLocation(t, "history"),
			"SELECT count(*) AS n, count(DISTINCT (kafka_partition, kafka_offset)) AS d FROM t", nil)
		m := res.Maps()[0]
		require.Equal(t, fmt.Sprint(records, "/", records), fmt.Sprint(m["n"], "/", m["d"]),
			"the raw history table holds every record exactly once (count/distinct offsets)")
		if !maintained {
			// the rows are in files of connectd's flat writer (compaction rewrites them with iceberg-go's)
			checkDataFilesWrittenBy(t, cat.metadataLocation(t, "by_lsn_flat"), "by_lsn_flat", "connectd")
		}
		if maintained {
			for _, tbl := range []struct {
				name       string
				partitions int
			}{{"by_lsn", 4}, {"by_lsn_flat", 1}, {"by_updated_at", 3}} {
				checkFilesBounded(t, cat.metadataLocation(t, tbl.name), tbl.name, tbl.partitions)
				// the versions of its deleted keys, maintained with it (unpartitioned)
				companion := tbl.name + icetable.TombstoneSuffix
				checkFilesBounded(t, cat.metadataLocation(t, companion), companion, 1)
				checkSnapshotsExpired(t, cat.metadataLocation(t, companion), companion)
			}
		}
	}
	return s
}

// maxSnapshotAge bounds the age of the snapshots of a maintained table beyond the two it keeps: the maximum
// age (5 s), the grace (1 s) and the maintenance interval (up to 1.5 s), with room for a slow machine.
const maxSnapshotAge = 40 * time.Second

// checkSnapshotsExpired checks that expiry keeps a maintained table's snapshots bounded: all but the newest two
// (retain-last) are younger than maxSnapshotAge.
func checkSnapshotsExpired(t *testing.T, metadataLocation, name string) {
	ctx := context.Background()
	local := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"cdc", name}, metadataLocation, local, nil)
	require.NoError(t, err)
	snaps := tbl.Metadata().Snapshots()
	old := 0
	for _, s := range snaps {
		if time.Since(time.UnixMilli(s.TimestampMs)) > maxSnapshotAge {
			old++
		}
	}
	t.Logf("iceberg cdc.%s: %d snapshots, %d older than %s", name, len(snaps), old, maxSnapshotAge)
	require.LessOrEqual(t, old, 2, "snapshots of cdc.%s older than %s beyond retain-last", name, maxSnapshotAge)
}

// maxFilesPerPartition bounds the live data and delete files per partition of a maintained table: about two
// tasks' files for each commit since the last maintenance (commits every 150-400 ms, maintenance every
// 0.5-1.5 s and after a round), with room for a slow machine. Unmaintained, a round of the model test leaves
// hundreds.
const maxFilesPerPartition = 40

// checkFilesBounded reads the table's current snapshot and checks that compaction keeps its files per partition
// bounded.
func checkFilesBounded(t *testing.T, metadataLocation, name string, partitions int) {
	ctx := context.Background()
	local := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"cdc", name}, metadataLocation, local, nil)
	require.NoError(t, err)
	st, err := maintenance.Stats(ctx, tbl, "")
	require.NoError(t, err)
	t.Logf("iceberg cdc.%s: %d data files (%d rows), %d delete files (%d rows) over %d partitions, %d snapshots",
		name, st.DataFiles, st.DataRecords, st.DeleteFiles, st.DeleteRecords, partitions, st.Snapshots)
	require.LessOrEqual(t, st.DataFiles, maxFilesPerPartition*partitions, "live data files of cdc.%s", name)
	require.LessOrEqual(t, st.DeleteFiles, maxFilesPerPartition*partitions, "live delete files of cdc.%s", name)
	// no file that a snapshot still in the metadata references was removed by expiry or compaction
	fs := iceio.LocalFS{}
	for _, snap := range tbl.Metadata().Snapshots() {
		manifests, err := snap.Manifests(fs)
		require.NoError(t, err, "manifest list of snapshot %d of cdc.%s", snap.SnapshotID, name)
		for _, m := range manifests {
			for e, err := range m.Entries(fs, true) {
				require.NoError(t, err)
				_, err := os.Stat(strings.TrimPrefix(strings.TrimPrefix(e.DataFile().FilePath(), "file://"), "file:"))
				require.NoError(t, err, "a file of snapshot %d of cdc.%s", snap.SnapshotID, name)
			}
		}
	}
}

// checkDataFilesWrittenBy checks that the live data files of a table name a Parquet writer createdBy
// in their footers.
func checkDataFilesWrittenBy(t *testing.T, metadataLocation, name, createdBy string) {
	ctx := context.Background()
	local := func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil }
	tbl, err := table.NewFromLocation(ctx, table.Identifier{"cdc", name}, metadataLocation, local, nil)
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, tasks, "data files of cdc.%s", name)
	for _, task := range tasks {
		path := strings.TrimPrefix(strings.TrimPrefix(task.File.FilePath(), "file://"), "file:")
		r, err := file.OpenParquetFile(path, false)
		require.NoError(t, err)
		got := r.MetaData().GetCreatedBy()
		r.Close()
		require.Equal(t, createdBy, got, "the writer of %s", path)
	}
}

// javaRead reads a table with Apache Iceberg's Java generic reader (testdata/javareader), which applies
// every delete file.
func javaRead(t *testing.T, metadataLocation string) icebergtest.Result {
	cmd := exec.Command("bash", filepath.Join("testdata", "javareader", "read.sh"), metadataLocation)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "Iceberg Java reader: %s", stderr.String())
	var res icebergtest.Result
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	require.NoError(t, d.Decode(&res), "Iceberg Java reader output")
	return res
}

// icebergCatalog is the sink's SQL catalog: its JDBC uri (SQLite or PostgreSQL) and user.
type icebergCatalog struct {
	uri, user string
}

// props are the connector properties beyond the uri.
func (c icebergCatalog) props() string {
	if c.user == "" {
		return ""
	}
	return "iceberg.catalog.jdbc.user=" + c.user + "\n"
}

// metadataLocation reads the table's current metadata file from the catalog database (the JDBC catalog's
// iceberg_tables).
func (c icebergCatalog) metadataLocation(t *testing.T, table string) string {
	var db *sql.DB
	var err error
	query := `SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 'cdc' AND table_name = ?`
	if path, ok := strings.CutPrefix(c.uri, "jdbc:sqlite:"); ok {
		db, err = sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	} else {
		dsn, ok := strings.CutPrefix(c.uri, "jdbc:")
		require.True(t, ok && strings.HasPrefix(dsn, "postgresql://"), "catalog uri %q: want jdbc:sqlite: or jdbc:postgresql:", c.uri)
		if c.user != "" {
			dsn = strings.Replace(dsn, "://", "://"+c.user+"@", 1)
		}
		db, err = sql.Open("pgx", dsn)
		query = strings.Replace(query, "?", "$1", 1)
	}
	require.NoError(t, err)
	defer db.Close()
	var loc string
	require.NoError(t, db.QueryRow(query, table).Scan(&loc),
		"table cdc.%s in the catalog", table)
	return loc
}

// rowFromJSON converts a reader's row (column name → JSON value, numbers as json.Number or strings).
func rowFromJSON(t *testing.T, m map[string]any) cdcstream.Row {
	num := func(v any) int64 {
		var n int64
		switch x := v.(type) {
		case json.Number:
			i, err := x.Int64()
			require.NoError(t, err)
			n = i
		case string:
			_, err := fmt.Sscan(x, &n)
			require.NoError(t, err)
		case float64:
			n = int64(x)
		default:
			t.Fatalf("not a number: %#v", v)
		}
		return n
	}
	str := func(v any) string {
		s, ok := v.(string)
		require.True(t, ok, "not a string: %#v", v)
		return s
	}
	r := cdcstream.Row{ID: str(m["id"]), Name: str(m["name"]), Qty: num(m["qty"]), UpdatedAt: num(m["updated_at"])}
	if e, ok := m["email"]; ok && e != nil {
		s := str(e)
		r.Email = &s
	}
	return r
}

// TestCDCModelIceberg: random CDC streams through the worker into the Iceberg sink, read back by DuckDB.
func TestCDCModelIceberg(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	runModel(t, icebergSink(t, false, nil), false)
}

// TestCDCModelIcebergSkippedTails: the same with the stream's tombstones filtered and partitions whose
// waves end with records the sink never gets (filtered, tolerated, dead-lettered): after each wave the
// group and the connector's REST offsets reach the end offsets and the group's lag metric is 0, across
// SIGKILLs, with the tables equal to the model and the raw history holding every record that reached
// the sink once.
func TestCDCModelIcebergSkippedTails(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	runModel(t, icebergSink(t, false, nil), true)
}

// TestCDCModelIcebergMaintained: the same with the connector's table maintenance running beside the commits
// and the SIGKILLs; the readers must see the model and the live files stay bounded.
func TestCDCModelIcebergMaintained(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	runModel(t, icebergSink(t, true, nil), false)
}
