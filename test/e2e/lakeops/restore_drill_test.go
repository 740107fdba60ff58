package lakeops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"

	"github.com/connectd/connectd/internal/testutil/lakepipeline"
	"github.com/connectd/connectd/internal/testutil/workerproc"
	"github.com/connectd/connectd/lakeops/reconcile"
	"github.com/connectd/connectd/lakeops/restoredrill"
)

func drill(t *testing.T, p *lakepipeline.Pipeline, extra map[string]string, flags ...string) (*restoredrill.Record, int, string) {
	args := append([]string{"restore-drill", "-format", "json"}, flags...)
	props := p.Props()
	for k, v := range extra {
		props[k] = v
	}
	for k, v := range props {
		args = append(args, k+"="+v)
	}
	cmd := exec.Command(workerproc.Binary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	t.Logf("restore-drill %v:\n%s\nstderr:\n%s", flags, stdout.String(), stderr.String())
	var rec restoredrill.Record
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rec), stderr.String())
	return &rec, cmd.ProcessState.ExitCode(), stderr.String()
}

// evidence reads the drill's record files back (the newest pair in dir).
func evidence(t *testing.T, dir string) (restoredrill.Record, string) {
	js, err := filepath.Glob(filepath.Join(dir, "restore-drill-*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, js)
	last := js[len(js)-1]
	b, err := os.ReadFile(last)
	require.NoError(t, err)
	var rec restoredrill.Record
	require.NoError(t, json.Unmarshal(b, &rec))
	md, err := os.ReadFile(strings.TrimSuffix(last, ".json") + ".md")
	require.NoError(t, err)
	return rec, string(md)
}

// TestRestoreDrillEndToEnd drills a running pipeline's tables with `connectd restore-drill`: the restored
// Iceberg copy and the ClickHouse table rebuilt from it hold exactly the source snapshot's rows (counts
// checked against the model of the produced stream), reconcile is clean on both pairs, the key queries
// answer the same, and the evidence record says so in JSON and Markdown. A drill of an older snapshot
// reconciles the source at that snapshot's offsets; a drill from a metadata file passes too. Then a data
// file is removed from the restored copy: the drill of that copy fails and names the file. Last, on a
// schedule, a drill passes and the metrics say so.
func TestRestoreDrillEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	rng := rand.New(rand.NewSource(lakepipeline.Seed(t)))
	p := lakepipeline.New(t)
	p.Start()
	p.Produce(rng, 20)
	p.Wait() // a snapshot with these offsets, older than the next batch's
	p.Produce(rng, 10)
	p.Wait()
	p.Stop()
	live := int64(len(p.Model()))
	dir := t.TempDir()
	extra := map[string]string{
		restoredrill.KeyNamespace:               "drill",
		restoredrill.KeyCHDatabase:              p.DB + "_drill",
		restoredrill.KeyRecordDir:               dir,
		restoredrill.KeyQueryPrefix + "count":   "SELECT count() AS n FROM {table} FINAL WHERE is_deleted = 0",
		restoredrill.KeyQueryPrefix + "by_name": "SELECT name, count() AS n, sum(qty) AS qty FROM {table} FINAL WHERE is_deleted = 0 GROUP BY name ORDER BY name",
	}
	rec, code, _ := drill(t, p, extra)
	require.Equal(t, restoredrill.Passed, rec.Verdict, rec.Reasons)
	require.Equal(t, 0, code)
	head := p.Table(lakepipeline.Current).CurrentSnapshot()
	require.Equal(t, head.SnapshotID, rec.Source.SnapshotID)
	require.Equal(t, live, rec.Contents.Source.Rows, "source rows = the model's live keys")
	require.Equal(t, live, rec.Contents.Restored.Rows)
	require.Equal(t, live, rec.RebuiltRows)
	require.True(t, rec.Contents.Match)
	require.Equal(t, rec.Contents.Source.RowChecksum, rec.Contents.Restored.RowChecksum)
	require.Len(t, rec.Reconcile, 2)
	for _, r := range rec.Reconcile {
		require.Equal(t, reconcile.StatusClean, r.Status, "%s vs %s", r.Iceberg, r.ClickHouse)
		require.True(t, r.Consistent, "%s vs %s: one cut", r.Iceberg, r.ClickHouse)
		require.Equal(t, live, r.IcebergRows)
		require.Equal(t, live, r.ClickHouseRows)
	}
	require.Equal(t, head.SnapshotID, rec.Reconcile[1].CutSnapshotID, "the source compared at the restored snapshot")
	require.Len(t, rec.Queries, 2)
	for _, q := range rec.Queries {
		require.True(t, q.Match, q.Name)
		require.Positive(t, q.SourceRows, q.Name)
	}
	require.Positive(t, rec.Restored.DataFiles)
	saved, md := evidence(t, dir)
	require.Equal(t, restoredrill.Passed, saved.Verdict)
	require.Equal(t, rec.Contents, saved.Contents)
	require.Contains(t, md, "# Restore drill of "+lakepipeline.Current+": PASSED")
	require.Contains(t, md, rec.Contents.Source.RowChecksum)

	// As of an older snapshot (no key queries: the source's ClickHouse table is at the head): the source
	// Iceberg table is reconciled with the rebuilt table at that snapshot's offsets.
	src := p.Table(lakepipeline.Current)
	key := icetable.OffsetsSummaryKeys(src, head)[0]
	headOff, _, err := icetable.SnapshotOffsets(src, head, key)
	require.NoError(t, err)
	var old *table.Snapshot
	for cur := head; cur != nil && cur.ParentSnapshotID != nil; {
		cur = src.SnapshotByID(*cur.ParentSnapshotID)
		if o, ok, err := icetable.SnapshotOffsets(src, cur, key); err == nil && ok && !maps.Equal(o, headOff) && cur.Summary.Properties[key] != "" {
			old = cur
			break
		}
	}
	require.NotNil(t, old, "an older snapshot carrying other offsets")
	oldOff, _, err := icetable.SnapshotOffsets(src, old, key)
	require.NoError(t, err)
	noQueries := map[string]string{}
	for k, v := range extra {
		if !strings.HasPrefix(k, restoredrill.KeyQueryPrefix) {
			noQueries[k] = v
		}
	}
	noQueries[restoredrill.KeySnapshot] = fmt.Sprint(old.SnapshotID)
	rec, code, _ = drill(t, p, noQueries)
	require.Equal(t, restoredrill.Passed, rec.Verdict, rec.Reasons)
	require.Equal(t, 0, code)
	require.Equal(t, old.SnapshotID, rec.Source.SnapshotID)
	require.Equal(t, rec.Contents.Source, rec.Contents.Restored)
	require.Equal(t, rec.Contents.Source.Rows, rec.RebuiltRows)
	cutOff, _, err := icetable.SnapshotOffsets(src, src.SnapshotByID(rec.Reconcile[1].CutSnapshotID), key)
	require.NoError(t, err)
	require.Equal(t, oldOff, cutOff, "the source compared at the restored snapshot's offsets")
	require.True(t, rec.Reconcile[1].Consistent)

	// As a metadata file describes the table (one kept in a backup, here the current one).
	mf := map[string]string{restoredrill.KeyMetadataFile: src.MetadataLocation()}
	for k, v := range extra {
		mf[k] = v
	}
	rec, code, _ = drill(t, p, mf)
	require.Equal(t, restoredrill.Passed, rec.Verdict, rec.Reasons)
	require.Equal(t, 0, code)
	require.Equal(t, src.MetadataLocation(), rec.Source.MetadataLocation)
	require.Equal(t, live, rec.Contents.Restored.Rows)

	// A corrupted restore: one data file of the restored copy removed.
	restored := p.Table("drill.customers")
	fsys, err := restored.FS(context.Background())
	require.NoError(t, err)
	ms, err := restored.CurrentSnapshot().Manifests(fsys)
	require.NoError(t, err)
	var victim string
	for _, m := range ms {
		for e, err := range m.Entries(fsys, true) {
			require.NoError(t, err)
			if victim == "" {
				victim = e.DataFile().FilePath()
			}
		}
	}
	require.NotEmpty(t, victim)
	require.NoError(t, os.Remove(strings.TrimPrefix(strings.TrimPrefix(victim, "file://"), "file:")))
	rec, code, _ = drill(t, p, extra, "-check-only")
	require.Equal(t, restoredrill.Failed, rec.Verdict)
	require.Equal(t, 1, code)
	require.Contains(t, rec.Contents.MissingFiles, victim)
	require.NotEmpty(t, rec.Reasons)
	require.Contains(t, strings.Join(rec.Reasons, "\n"), victim, "the reason names the missing file")
	saved, md = evidence(t, dir)
	require.Equal(t, restoredrill.Failed, saved.Verdict)
	require.Contains(t, md, "FAILED")
	require.Contains(t, md, victim)

	// On a schedule: the next drill restores afresh and passes; the metrics say when.
	args := []string{"restore-drill", "-interval", "1h", "-metrics-listen", "127.0.0.1:0"}
	for k, v := range p.Props() {
		args = append(args, k+"="+v)
	}
	for k, v := range extra {
		args = append(args, k+"="+v)
	}
	cmd := exec.Command(workerproc.Binary(t), args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	url := strings.TrimSpace(strings.TrimPrefix(line, "metrics on "))
	metric := `connectd_restore_drill_runs_total{iceberg_table="` + lakepipeline.Current + `",result="passed"} 1`
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, metric)
	}, 2*time.Minute, 200*time.Millisecond, "metrics:\n%s", body)
	require.Contains(t, body, "connectd_restore_drill_last_success_timestamp_seconds{")
	require.Contains(t, body, "connectd_restore_drill_duration_seconds{")
}
