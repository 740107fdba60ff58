package iceberg

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/metrics"
)

// TestCoordinatorMetrics: /metrics shows the rounds, snapshots, files, buffered records and the
// time of the last durable round per connector.
func TestCoordinatorMetrics(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.m"})
	task, _ := startTask(t, props)
	defer task.Stop()
	recs := benchRecords(10, 1<<62, 0)
	require.NoError(t, task.Put(context.Background(), recs))
	get := func(name string, labels ...string) float64 {
		fams, err := metrics.Registry.Gather()
		require.NoError(t, err)
		for _, f := range fams {
			if f.GetName() != name {
				continue
			}
		metric:
			for _, m := range f.GetMetric() {
				lv := map[string]string{}
				for _, l := range m.GetLabel() {
					lv[l.GetName()] = l.GetValue()
				}
				if lv["connector"] != props["name"] {
					continue
				}
				for i := 0; i+1 < len(labels); i += 2 {
					if lv[labels[i]] != labels[i+1] {
						continue metric
					}
				}
				return value(m)
			}
		}
		return -1
	}
	require.Equal(t, 10.0, get("connectd_iceberg_buffered_records"))
	require.Equal(t, 0.0, get("connectd_iceberg_last_durable_round_timestamp_seconds"))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.Equal(t, 0.0, get("connectd_iceberg_buffered_records"))
	require.Equal(t, 1.0, get("connectd_iceberg_commit_rounds_total", "result", "ok"))
	require.Equal(t, 1.0, get("connectd_iceberg_snapshots_total"))
	require.Equal(t, 1.0, get("connectd_iceberg_files_total", "content", "data"))
	require.InDelta(t, float64(time.Now().Unix()), get("connectd_iceberg_last_durable_round_timestamp_seconds"), 60)
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}
