package restoredrill

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/lakeops/reconcile"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	cfg := &Config{Source: &reconcile.Config{IcebergTable: "cdc.customers"}}
	start := time.Unix(1000, 0)
	m.Observe(cfg, &Record{Verdict: Passed, StartedAt: start, Seconds: 10}, nil)
	l := "cdc.customers"
	require.Equal(t, 1010.0, testutil.ToFloat64(m.runs.LastSuccess.WithLabelValues(l)))
	require.Equal(t, 1010.0, testutil.ToFloat64(m.lastRun.WithLabelValues(l)))
	m.Observe(cfg, &Record{Verdict: Failed, StartedAt: start.Add(time.Hour), Seconds: 5}, nil)
	require.Equal(t, 1010.0, testutil.ToFloat64(m.runs.LastSuccess.WithLabelValues(l)), "a failed drill is no success")
	require.Equal(t, 4605.0, testutil.ToFloat64(m.lastRun.WithLabelValues(l)))
	require.Equal(t, 5.0, testutil.ToFloat64(m.duration.WithLabelValues(l)))
	m.Observe(cfg, &Record{Verdict: Passed, StartedAt: start.Add(2 * time.Hour), Seconds: 1}, errors.New("disk full"))
	require.Equal(t, 1010.0, testutil.ToFloat64(m.runs.LastSuccess.WithLabelValues(l)), "a drill without its record is no success")
	for result, n := range map[string]float64{"passed": 1, "failed": 1, "error": 1} {
		require.Equal(t, n, testutil.ToFloat64(m.runs.Total.WithLabelValues(l, result)), result)
	}
}

func TestParseConfig(t *testing.T) {
	base := map[string]string{"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:/x", "iceberg.table": "cdc.customers",
		"clickhouse.hostname": "h", "clickhouse.database": "shop", "clickhouse.table": "customers"}
	with := func(kv ...string) map[string]string {
		p := map[string]string{}
		for k, v := range base {
			p[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	_, err := ParseConfig(with(KeyCHDatabase, "drill"))
	require.ErrorContains(t, err, KeyNamespace)
	_, err = ParseConfig(with(KeyNamespace, "cdc", KeyCHDatabase, "drill"))
	require.ErrorContains(t, err, "spare")
	_, err = ParseConfig(with(KeyNamespace, "drill", KeyCHDatabase, "shop"))
	require.ErrorContains(t, err, "spare")
	_, err = ParseConfig(with(KeyNamespace, "drill", KeyCHDatabase, "drill", KeyQueryPrefix+"q", "SELECT 1"))
	require.ErrorContains(t, err, "{table}")
	c, err := ParseConfig(with(KeyNamespace, "drill", KeyCHDatabase, "drill", KeyQueryPrefix+"b", "SELECT count() FROM {table}",
		KeyQueryPrefix+"a", "SELECT 1 FROM {table}", KeySnapshot, "42"))
	require.NoError(t, err)
	require.Equal(t, "drill.customers", c.RestoredTable())
	require.Equal(t, int64(42), c.SnapshotID)
	require.Equal(t, []Query{{Name: "a", SQL: "SELECT 1 FROM {table}"}, {Name: "b", SQL: "SELECT count() FROM {table}"}}, c.Queries)
	require.Equal(t, ".", c.RecordDir)
}
