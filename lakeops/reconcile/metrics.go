package reconcile

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/lakeops/runmetrics"
)

// Metrics are the Prometheus series of scheduled reconcile runs, labelled by the ClickHouse and Iceberg
// tables compared.
type Metrics struct {
	mismatched *prometheus.GaugeVec
	lag        *prometheus.GaugeVec
	runs       runmetrics.Runs
}

// NewMetrics registers the reconcile series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"iceberg_table", "clickhouse_table"}
	m := &Metrics{
		mismatched: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_reconcile_mismatched_rows",
			Help: "Keys that differ between the ClickHouse table and the Iceberg table at the last completed run."}, labels),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_reconcile_lag_records",
			Help: "Records one layer holds and the other does not yet, at the last completed run."}, labels),
		runs: runmetrics.New("reconcile", labels, "Reconcile runs by result: clean, drift, lag or error.",
			"Unix time of the last run that completed (clean, drift or lag)."),
	}
	reg.MustRegister(append(m.runs.Collectors(), m.mismatched, m.lag)...)
	return m
}

// Observe records a run's outcome (r nil: the run failed).
func (m *Metrics) Observe(cfg *Config, r *Report) {
	l := prometheus.Labels{"iceberg_table": cfg.IcebergTable, "clickhouse_table": cfg.CH.Database + "." + cfg.CHTable}
	if r == nil {
		m.runs.Observe(l, "error", false, time.Time{})
		return
	}
	m.mismatched.With(l).Set(float64(r.MismatchedRows))
	m.lag.With(l).Set(float64(r.Cut.LagRecords))
	m.runs.Observe(l, r.Status, true, runmetrics.Ended(r.StartedAt, r.Seconds))
}

// Schedule runs Run every interval until ctx ends, recording each outcome in m and handing it to report.
func Schedule(ctx context.Context, cfg *Config, interval time.Duration, m *Metrics, report func(*Report, error)) {
	for {
		r, err := Run(ctx, cfg)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			slog.Error("reconcile failed", "iceberg_table", cfg.IcebergTable, "clickhouse_table", cfg.CHTable, "error", err)
			r = nil
		}
		m.Observe(cfg, r)
		report(r, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
