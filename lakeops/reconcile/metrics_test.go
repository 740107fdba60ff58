package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestMetricsObserve: a run's outcome reaches the Prometheus series an alert reads.
func TestMetricsObserve(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	cfg, err := ParseConfig(baseProps())
	require.NoError(t, err)
	at := time.Unix(1_800_000_000, 0)
	m.Observe(cfg, &Report{Status: StatusDrift, MismatchedRows: 3, Cut: Cut{LagRecords: 7}, StartedAt: at, Seconds: 2})
	m.Observe(cfg, nil)
	want := `
# HELP connectd_reconcile_last_success_timestamp_seconds Unix time of the last run that completed (clean, drift or lag).
# TYPE connectd_reconcile_last_success_timestamp_seconds gauge
connectd_reconcile_last_success_timestamp_seconds{clickhouse_table="default.customers",iceberg_table="cdc.customers"} 1.800000002e+09
# HELP connectd_reconcile_lag_records Records one layer holds and the other does not yet, at the last completed run.
# TYPE connectd_reconcile_lag_records gauge
connectd_reconcile_lag_records{clickhouse_table="default.customers",iceberg_table="cdc.customers"} 7
# HELP connectd_reconcile_mismatched_rows Keys that differ between the ClickHouse table and the Iceberg table at the last completed run.
# TYPE connectd_reconcile_mismatched_rows gauge
connectd_reconcile_mismatched_rows{clickhouse_table="default.customers",iceberg_table="cdc.customers"} 3
# HELP connectd_reconcile_runs_total Reconcile runs by result: clean, drift, lag or error.
# TYPE connectd_reconcile_runs_total counter
connectd_reconcile_runs_total{clickhouse_table="default.customers",iceberg_table="cdc.customers",result="drift"} 1
connectd_reconcile_runs_total{clickhouse_table="default.customers",iceberg_table="cdc.customers",result="error"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))
}
