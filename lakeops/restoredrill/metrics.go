package restoredrill

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/lakeops/runmetrics"
)

// Metrics are the Prometheus series of scheduled drills, labelled by the source Iceberg table: alert on a
// drill that failed or did not run (time() - last_success > the schedule's interval plus its duration).
type Metrics struct {
	lastRun  *prometheus.GaugeVec
	duration *prometheus.GaugeVec
	runs     runmetrics.Runs
}

// NewMetrics registers the drill series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"iceberg_table"}
	m := &Metrics{
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_restore_drill_last_run_timestamp_seconds",
			Help: "Unix time the last restore drill ended, whatever its verdict."}, labels),
		duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_restore_drill_duration_seconds",
			Help: "Duration of the last restore drill."}, labels),
		runs: runmetrics.New("restore_drill", labels, "Restore drills by result: passed, failed or error (the record could not be written).",
			"Unix time the last PASSED restore drill ended."),
	}
	reg.MustRegister(append(m.runs.Collectors(), m.lastRun, m.duration)...)
	return m
}

// Observe records a drill (err: its record could not be written).
func (m *Metrics) Observe(cfg *Config, r *Record, err error) {
	l := prometheus.Labels{"iceberg_table": cfg.Source.IcebergTable}
	end := runmetrics.Ended(r.StartedAt, r.Seconds)
	m.lastRun.With(l).Set(float64(end.Unix()))
	m.duration.With(l).Set(r.Seconds)
	result := "failed"
	switch {
	case err != nil:
		result = "error"
	case r.Verdict == Passed:
		result = "passed"
	}
	m.runs.Observe(l, result, result == "passed", end)
}

// Schedule drills each configuration, one after another, every interval (from the end of one round to the
// start of the next; the first round starts at once) until ctx ends, recording each drill in m and handing
// it to report.
func Schedule(ctx context.Context, cfgs []*Config, interval time.Duration, m *Metrics, report func(*Config, *Record, error)) {
	for {
		for _, cfg := range cfgs {
			r, err := runRecovered(ctx, cfg)
			if ctx.Err() != nil {
				return
			}
			m.Observe(cfg, r, err)
			report(cfg, r, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// runRecovered is Run with a panic turned into a failed drill: a scheduled drill must not take the worker down.
func runRecovered(ctx context.Context, cfg *Config) (r *Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			r = &Record{Verdict: Failed, StartedAt: time.Now().UTC(), Reasons: []string{fmt.Sprintf("the drill panicked: %v\n%s", p, debug.Stack())}}
			err = nil
		}
	}()
	return Run(ctx, cfg, Options{})
}
