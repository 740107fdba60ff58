package lakeops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os/exec"
	"sort"
	"strings"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/lakepipeline"
	"github.com/connectd/connectd/internal/testutil/workerproc"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// pipeline is the lake pipeline the reconcile, rebuild and erasure tests run, with their helpers.
type pipeline struct {
	*lakepipeline.Pipeline
}

func newPipeline(t *testing.T) *pipeline { return &pipeline{lakepipeline.New(t)} }

// props are the reconcile properties for this pipeline.
func (p *pipeline) props() map[string]string {
	props := p.Props()
	props["clickhouse.group.id"] = p.CHGroup()
	props["buckets"] = "4"
	return props
}

func (p *pipeline) reconcile() *reconcile.Report {
	p.T.Helper()
	cfg, err := reconcile.ParseConfig(p.props())
	require.NoError(p.T, err)
	r, err := reconcile.Run(context.Background(), cfg)
	require.NoError(p.T, err)
	var buf bytes.Buffer
	r.WriteText(&buf)
	p.T.Logf("reconcile:\n%s", buf.String())
	return r
}

// quoteString is a ClickHouse string literal.
func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// crossCheck reads both tables with independent readers (DuckDB for Iceberg, FINAL on the engine for
// ClickHouse) and checks the report's row counts against them and against the model.
func (p *pipeline) crossCheck(r *reconcile.Report, iceRows, chRows int) {
	p.T.Helper()
	tbl := p.Table("cdc.customers")
	if r.Cut.SnapshotID == tbl.CurrentSnapshot().SnapshotID {
		res := icebergtest.Read(p.T, tbl.MetadataLocation(), "SELECT count(*) AS n FROM t", nil)
		require.Equal(p.T, fmt.Sprint(iceRows), fmt.Sprint(res.Maps()[0]["n"]), "DuckDB's row count of the Iceberg table")
	}
	require.Equal(p.T, int64(iceRows), r.Iceberg.Rows, "reconcile's Iceberg row count")
	n := chdbtest.MustQuery(p.T, p.S, "SELECT count() FROM "+p.DB+".customers FINAL")
	require.Equal(p.T, fmt.Sprint(chRows), n, "ClickHouse FINAL row count")
	require.Equal(p.T, int64(chRows), r.ClickHouse.Rows, "reconcile's ClickHouse row count")
}

// TestReconcileEndToEnd feeds both sinks the same random CDC stream through a real broker and checks what
// reconcile reports: clean when both hold the stream; lag, not drift, while the ClickHouse connector is
// stopped (and while the Iceberg one is); exactly the keys changed, deleted and added behind the sink's
// back in ClickHouse.
func TestReconcileEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := lakepipeline.Seed(t)
	rng := rand.New(rand.NewSource(seed))
	p := newPipeline(t)
	p.Start()
	p.Produce(rng, 60)
	p.Wait()

	live := len(p.Model())
	r := p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Zero(t, r.Cut.LagRecords)
	require.Zero(t, r.MismatchedRows)
	require.True(t, r.Version.Compared, "source versions compared (_cdc_version vs _version)")
	require.Equal(t, r.Iceberg.RowChecksum, r.ClickHouse.RowChecksum)
	p.crossCheck(r, live, live)

	// ClickHouse connector stopped: ClickHouse lags; compared at the Iceberg snapshot it matches.
	p.Start(lakepipeline.Iceberg)
	behind := p.Produce(rng, 30)
	p.Wait(lakepipeline.Iceberg)
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status, "lag is not drift")
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Equal(t, "clickhouse", r.Cut.LaggingLayer)
	require.Equal(t, int64(behind), r.Cut.LagRecords)
	require.Zero(t, r.MismatchedRows)
	p.crossCheck(r, live, live)

	// The same with a lag tolerance below the lag: exit status lag.
	props := p.props()
	props[reconcile.KeyLagTolerance] = "0"
	cfg, err := reconcile.ParseConfig(props)
	require.NoError(t, err)
	rl, err := reconcile.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, reconcile.StatusLag, rl.Status)
	require.Equal(t, reconcile.ExitLag, rl.ExitCode())

	// Both again: caught up and clean.
	p.Start()
	p.Wait(lakepipeline.ClickHouse)
	live = len(p.Model())
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Zero(t, r.Cut.LagRecords)
	p.crossCheck(r, live, live)

	// Iceberg connector stopped: Iceberg lags; no snapshot holds ClickHouse's offsets, so the keys of the
	// records in between are read from Kafka and left out.
	p.Start(lakepipeline.ClickHouse)
	behind = p.Produce(rng, 20)
	p.Wait(lakepipeline.ClickHouse)
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status, "lag is not drift")
	require.Equal(t, "iceberg", r.Cut.LaggingLayer)
	require.Equal(t, int64(behind), r.Cut.LagRecords)
	require.Positive(t, r.InFlightKeys)
	require.Zero(t, r.MismatchedRows)
	p.Start()
	p.Wait()
	p.Stop()
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	live = len(p.Model())
	p.crossCheck(r, live, live)

	// Behind the sink's back: a row changed, a row deleted, a row added.
	var keys []string
	for k := range p.Model() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	changed, deleted := keys[0], keys[1]
	tbl := p.DB + ".customers"
	chdbtest.MustExec(t, p.S, "INSERT INTO "+tbl+" SELECT id, 'tampered', qty, updated_at, email, _version + 1, 0 FROM "+tbl+" FINAL WHERE id = "+quoteString(changed))
	chdbtest.MustExec(t, p.S, "INSERT INTO "+tbl+" SELECT id, name, qty, updated_at, email, _version + 1, 1 FROM "+tbl+" FINAL WHERE id = "+quoteString(deleted))
	chdbtest.MustExec(t, p.S, "INSERT INTO "+tbl+" VALUES ('zz-added', 'new', 1, 1, NULL, 1, 0)")
	r = p.reconcile()
	require.Equal(t, reconcile.StatusDrift, r.Status)
	require.Equal(t, reconcile.ExitDrift, r.ExitCode())
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	require.Equal(t, 3, r.MismatchedRows)
	require.Equal(t, []reconcile.Mismatch{
		{Key: changed, Kind: reconcile.Different, Columns: []string{"name", "version"}},
		{Key: deleted, Kind: reconcile.MissingInClickHouse},
		{Key: "zz-added", Kind: reconcile.ExtraInClickHouse},
	}, r.Mismatches)
	bad := 0
	for _, b := range r.Buckets {
		if !b.Match {
			bad++
		}
	}
	require.Positive(t, bad)
	p.crossCheck(r, live, live)

	// The command: JSON output, exit code 1 on drift.
	var args []string
	for k, v := range p.props() {
		args = append(args, k+"="+v)
	}
	cmd := exec.Command(workerproc.Binary(t), append([]string{"reconcile", "-format", "json"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	require.Error(t, err, stderr.String())
	require.Equal(t, reconcile.ExitDrift, cmd.ProcessState.ExitCode(), stderr.String())
	var out reconcile.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out))
	require.Equal(t, r.Mismatches, out.Mismatches)
	require.True(t, strings.HasPrefix(out.Status, "drift"))
}

// An Iceberg table that exists without a snapshot yet (created, its first commit still to come) holds
// nothing: what ClickHouse holds is lag, its keys in flight, not drift.
func TestReconcileIcebergWithoutSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := lakepipeline.Seed(t)
	p := newPipeline(t)
	p.Start(lakepipeline.ClickHouse)
	n := p.Produce(rand.New(rand.NewSource(seed)), 10)
	p.Wait(lakepipeline.ClickHouse)
	p.Stop()
	cat := p.Catalog()
	require.NoError(t, cat.CreateNamespace(context.Background(), catalog.ToIdentifier("cdc"), nil))
	sc := ice.NewSchemaWithIdentifiers(0, []int{1},
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.String, Required: true},
		ice.NestedField{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
		ice.NestedField{ID: 3, Name: "_cdc_version", Type: ice.PrimitiveTypes.String})
	_, err := cat.CreateTable(context.Background(), catalog.ToIdentifier("cdc.customers"), sc)
	require.NoError(t, err)

	r := p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status, "lag is not drift")
	require.False(t, r.Cut.Consistent)
	require.Equal(t, "iceberg", r.Cut.LaggingLayer)
	require.Equal(t, int64(n), r.Cut.LagRecords)
	require.Zero(t, r.Iceberg.Rows)
	require.Zero(t, r.MismatchedRows)
	require.Positive(t, r.InFlightKeys)
}
