package iceberg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// earlyRecords are records n of partition p from offset from on, as the crash model's.
func earlyRecords(p, from, to int) []*connect.SinkRecord {
	var out []*connect.SinkRecord
	for off := from; off < to; off++ {
		v := map[string]any{"id": fmt.Sprintf("%d-%d", p, off), "n": int64(off), "note": "x"}
		out = append(out, &connect.SinkRecord{Topic: "ev", Partition: int32(p), Offset: int64(off), Value: v})
	}
	return out
}

func earlyParts(ps ...int) []connect.TopicPartition {
	var out []connect.TopicPartition
	for _, p := range ps {
		out = append(out, connect.TopicPartition{Topic: "ev", Partition: int32(p)})
	}
	return out
}

// earlyWant is the rows "id|n" of partitions ps, offsets from..to.
func earlyWant(from, to int, ps ...int) []string {
	var out []string
	for _, p := range ps {
		for off := from; off < to; off++ {
			out = append(out, fmt.Sprintf("%d-%d|%d", p, off, off))
		}
	}
	sort.Strings(out)
	return out
}

// tableFiles lists the data files of the table's current snapshot.
func tableFiles(t *testing.T, props map[string]string, name string) []string {
	t.Helper()
	cat, _ := loadTable(t, props, name)
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(name))
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	var out []string
	for _, ft := range tasks {
		out = append(out, ft.File.FilePath())
	}
	sort.Strings(out)
	return out
}

func earlyTask(t *testing.T) (*Task, map[string]string) {
	props, _ := sinkProps(t, map[string]string{KeyTables: "shop.events"})
	t.Setenv("TMPDIR", t.TempDir())
	task, _ := startTask(t, props)
	t.Cleanup(func() { _ = task.Stop() })
	return task, props
}

// TestEarlyFilesCommittedAsWritten: an unpartitioned append table's rows are written to data
// files while they are put, one writer per task, and the round commits those files as they are.
func TestEarlyFilesCommittedAsWritten(t *testing.T) {
	ctx := context.Background()
	task, props := earlyTask(t)
	require.NoError(t, task.Open(earlyParts(0, 1, 2)))
	for from := 0; from < 20000; from += 2500 {
		for p := range 3 {
			require.NoError(t, task.Put(ctx, earlyRecords(p, from, from+2500)))
		}
	}
	e := task.appends.Table("shop.events").Early()
	require.NotNil(t, e, "the table's rows go to data files as they are put")
	require.Greater(t, len(e.Runs), 3, "batches of several partitions")
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)

	files, err := e.Result(ctx)
	require.NoError(t, err)
	var written []string
	for _, f := range files {
		written = append(written, f.FilePath())
	}
	sort.Strings(written)
	require.Equal(t, written, tableFiles(t, props, "shop.events"), "the files written at put are the snapshot's")
	_, meta := loadTable(t, props, "shop.events")
	require.Equal(t, earlyWant(0, 20000, 0, 1, 2), duckRows(t, meta, "SELECT id, n FROM t"))
	require.Nil(t, e.Offs.File, "the offsets file is given back once the rows are committed")
}

// TestEarlyFilesCutInsideRun: another committer (a zombie, or another process after a rebalance)
// commits part of the rows a task already wrote to a data file. The round cuts the file's rows
// at the head's offset, inside one batch, and writes the rest again: each record once.
func TestEarlyFilesCutInsideRun(t *testing.T) {
	ctx := context.Background()
	task, props := earlyTask(t)
	require.NoError(t, task.Open(earlyParts(0)))
	require.NoError(t, task.Put(ctx, earlyRecords(0, 0, 100)))

	cat, _ := loadTable(t, props, "shop.events")
	other := &icetable.Writer{Cat: cat, Ident: catalog.ToIdentifier("shop.events"), Opts: task.tableOpts("shop.events")}
	require.NoError(t, other.Load(ctx, nil))
	var recs []icetable.Rec
	for _, r := range earlyRecords(0, 0, 50) {
		recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Row: icerow.Row(r.Value.(map[string]any)), TP: icetable.TP{Topic: "ev", Partition: 0}, Offset: r.Offset})
	}
	_, err := other.Commit(ctx, recs, icetable.Offsets{icetable.TP{Topic: "ev", Partition: 0}: 50}, nil)
	require.NoError(t, err)

	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	require.EqualValues(t, 50, task.coord.stats().Skipped)
	_, meta := loadTable(t, props, "shop.events")
	require.Equal(t, earlyWant(0, 100, 0), duckRows(t, meta, "SELECT id, n FROM t"))
}

// TestEarlyFilesRevokedPartition: a partition leaves the task after its rows went into the task's
// data file beside another partition's. The round writes the other partition's rows again without
// them; the partition's next owner (here the task again) re-reads them from the group offset.
func TestEarlyFilesRevokedPartition(t *testing.T) {
	ctx := context.Background()
	task, props := earlyTask(t)
	require.NoError(t, task.Open(earlyParts(0, 1)))
	for from := 0; from < 10000; from += 1000 {
		require.NoError(t, task.Put(ctx, earlyRecords(0, from, from+1000)))
		require.NoError(t, task.Put(ctx, earlyRecords(1, from, from+1000)))
	}
	e := task.appends.Table("shop.events").Early()
	require.NotNil(t, e)
	require.NoError(t, task.Close(earlyParts(0)))
	require.NoError(t, task.Open(earlyParts(0)))
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	_, meta := loadTable(t, props, "shop.events")
	require.Equal(t, earlyWant(0, 10000, 1), duckRows(t, meta, "SELECT id, n FROM t"))
	files, err := e.Result(ctx)
	require.NoError(t, err)
	for _, f := range files {
		require.NotContains(t, tableFiles(t, props, "shop.events"), f.FilePath(), "a file with the revoked rows is not committed")
	}

	require.NoError(t, task.Put(ctx, earlyRecords(0, 0, 10000)))
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	_, meta = loadTable(t, props, "shop.events")
	require.Equal(t, earlyWant(0, 10000, 0, 1), duckRows(t, meta, "SELECT id, n FROM t"))
}

// TestEarlyWriteFailureFailsTask: a data file that cannot be written loses rows the task has
// taken: no round commits them or moves the group offset past them, and the task fails, so that
// its restart reads them again.
func TestEarlyWriteFailureFailsTask(t *testing.T) {
	ctx := context.Background()
	task, _ := earlyTask(t)
	require.NoError(t, task.Open(earlyParts(0)))
	require.NoError(t, task.Put(ctx, earlyRecords(0, 0, 10)))
	a := task.appends.Table("shop.events")
	require.True(t, a.Usable() && a.WritesEarly())
	// the data directory becomes a file: no data file can be created in it
	dir := strings.TrimPrefix(a.Writer().Tbl.Location(), "file://") + "/data"
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
	require.NoError(t, os.WriteFile(dir, []byte("not a directory"), 0o644))

	var err error
	for off := 10; off < 100000 && err == nil; off += 5000 {
		err = task.Put(ctx, earlyRecords(0, off, off+5000))
	}
	if err == nil {
		require.False(t, task.coord.CommitNow(ctx), "a round cannot commit rows whose file failed")
		err = task.Put(ctx, earlyRecords(0, 100000, 100001))
	}
	require.ErrorContains(t, err, "restarts from its committed offsets")
	require.False(t, connect.IsDataError(err))
	pc, perr := task.PreCommit(ctx, nil)
	require.NoError(t, perr)
	require.EqualValues(t, 0, pc[earlyParts(0)[0]].Offset, "the group offset stays at the first record not in the table")
}

// TestEarlyFilesRemovedAtStop: a task that stops while another task of the connector runs on
// (the last one out commits what it holds) removes the data files its writer wrote in the interval:
// no round took them, so no table references them, and the rows are re-read from the group offset.
func TestEarlyFilesRemovedAtStop(t *testing.T) {
	ctx := context.Background()
	props, _ := sinkProps(t, map[string]string{KeyTables: "shop.events", KeyTargetFileSize: "100000",
		"iceberg.tables.auto-create-props.write.parquet.row-group-limit": "5000"})
	t.Setenv("TMPDIR", t.TempDir())
	other, _ := startTask(t, props)
	t.Cleanup(func() { _ = other.Stop() })
	task, _ := startTask(t, props)
	require.Same(t, other.coord, task.coord)
	require.NoError(t, task.Open(earlyParts(0)))
	require.NoError(t, task.Put(ctx, earlyRecords(0, 0, 40000)))
	e := task.appends.Table("shop.events").Early()
	require.NotNil(t, e)
	dir := strings.TrimPrefix(task.appends.Table("shop.events").Writer().Tbl.Location(), "file://") + "/data"
	require.Eventually(t, func() bool { return len(parquetFiles(t, dir)) > 0 }, 10*time.Second, 10*time.Millisecond,
		"files are written while rows are put")
	require.NoError(t, task.Stop())
	<-e.Done
	require.Eventually(t, func() bool { return len(parquetFiles(t, dir)) == 0 }, 10*time.Second, 10*time.Millisecond)
}

func parquetFiles(t *testing.T, dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
