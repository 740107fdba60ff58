package iceberg

import (
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/connect"
)

// Prometheus metrics of the commit coordinators, read at scrape time (nothing on the record
// path). Freshness of the tables: time() - connectd_iceberg_last_durable_round_timestamp_seconds.
var (
	descRounds = prometheus.NewDesc("connectd_iceberg_commit_rounds_total",
		"Commit rounds this process's tasks took part in, by result (failed: the tasks rewound).", []string{"connector", "result"}, nil)
	descLed = prometheus.NewDesc("connectd_iceberg_committer_rounds_total",
		"Rounds this process ran as the committer of a distributed connector, by result.", []string{"connector", "result"}, nil)
	descSnapshots = prometheus.NewDesc("connectd_iceberg_snapshots_total",
		"Table snapshots committed by this process.", []string{"connector"}, nil)
	descFiles = prometheus.NewDesc("connectd_iceberg_files_total",
		"Files committed by this process, by content (data, delete).", []string{"connector", "content"}, nil)
	descLastOK = prometheus.NewDesc("connectd_iceberg_last_durable_round_timestamp_seconds",
		"When this process's tasks last had a round committed (their positions durable in every table); 0 before the first.", []string{"connector"}, nil)
	descBuffered = prometheus.NewDesc("connectd_iceberg_buffered_records",
		"Records buffered in this process's tasks, waiting for the next round.", []string{"connector"}, nil)
	descCommitter = prometheus.NewDesc("connectd_iceberg_committer",
		"1 when this process is the committer of a distributed connector (it holds the first partition).", []string{"connector"}, nil)
)

// coordCollector reports every coordinator of the process, each under its connector's name.
type coordCollector struct{}

var metricsOnce sync.Once

// registerMetrics publishes the coordinators' metrics through the first task's metrics handle:
// one collector serves every connector of the process.
func registerMetrics(m connect.PluginMetrics) {
	if m == nil {
		return
	}
	metricsOnce.Do(func() {
		if err := m.Register(coordCollector{}); err != nil {
			slog.Warn("iceberg: coordinator metrics not registered", "err", err)
		}
	})
}

func (coordCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRounds, descLed, descSnapshots, descFiles, descLastOK, descBuffered, descCommitter} {
		ch <- d
	}
}

func (coordCollector) Collect(ch chan<- prometheus.Metric) {
	coordinators.mu.Lock()
	cs := make([]*coordinator, 0, len(coordinators.m))
	for _, c := range coordinators.m {
		cs = append(cs, c)
	}
	coordinators.mu.Unlock()
	for _, c := range cs {
		name := c.cfg.Name
		st := c.stats()
		counter := func(d *prometheus.Desc, v int64, lv ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{name}, lv...)...)
		}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, name)
		}
		counter(descRounds, st.Rounds-st.FailedRounds, "ok")
		counter(descRounds, st.FailedRounds, "failed")
		counter(descSnapshots, st.Snapshots)
		counter(descFiles, st.DataFiles, "data")
		counter(descFiles, st.DeleteFiles, "delete")
		last := 0.0
		if !st.LastDurable.IsZero() {
			last = float64(st.LastDurable.UnixNano()) / 1e9
		}
		gauge(descLastOK, last)
		gauge(descBuffered, float64(c.buffered()))
		if c.ctl != nil {
			counter(descLed, st.LedRounds-st.LedFailed, "ok")
			counter(descLed, st.LedFailed, "failed")
			lead := 0.0
			if c.ctl.leading.Load() {
				lead = 1
			}
			gauge(descCommitter, lead)
		}
	}
}
