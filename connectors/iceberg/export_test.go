package iceberg

import (
	"context"
	"testing"

	"github.com/connectd/connectd/connect"
)

// What the external tests of this directory (package iceberg_test, which may import packages
// that import this one, such as maintenance) use of the in-package helpers.

func SinkPropsT(t testing.TB, extra map[string]string) (map[string]string, string) {
	return sinkProps(t, extra)
}

func StartTaskT(t testing.TB, props map[string]string) *Task {
	task, _ := startTask(t, props)
	return task
}

func DuckRowsT(t testing.TB, metadata, query string) []string { return duckRows(t, metadata, query) }

// CommitNowT runs one commit round of the task's coordinator.
func CommitNowT(task *Task) bool { return task.coord.CommitNow(context.Background()) }

// SkippedT is how many records the task's coordinator dropped as already in their tables.
func SkippedT(task *Task) int64 { return task.coord.stats().Skipped }

// MaintenanceRunsT is how many maintenance runs of table the task's coordinator finished, and
// how many of them failed.
func MaintenanceRunsT(task *Task, table string) (runs, failures int64) {
	if task.coord.maint == nil {
		return 0, 0
	}
	tm := task.coord.maint.stats()[table]
	return tm.Runs, tm.Failures
}

// CDCStreamT is cdcStream as Debezium records on topic, keyed into parts partitions, in stream
// order, with the rows (id|name|version) the table must hold afterwards.
func CDCStreamT(topic string, seed int64, n, nkeys, parts int) ([]*connect.SinkRecord, []string) {
	events, want := cdcStream(seed, n, nkeys, parts)
	offs := make([]int64, parts)
	recs := make([]*connect.SinkRecord, 0, len(events))
	for _, e := range events {
		p := int32(e.ID % int64(parts))
		recs = append(recs, cdcRecord(e, topic, p, offs[p]))
		offs[p]++
	}
	return recs, wantRows(want)
}
