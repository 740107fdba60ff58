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

	// Table maintenance (iceberg.tables.maintenance.interval-ms), per table, on the process that commits.
	tableLabels    = []string{"connector", "table"}
	descTableFiles = prometheus.NewDesc("connectd_iceberg_table_files",
		"Live files of the table's branch head after its last maintenance, by content (data, delete).", []string{"connector", "table", "content"}, nil)
	descTableBytes = prometheus.NewDesc("connectd_iceberg_table_bytes",
		"Bytes of the live files of the table's branch head after its last maintenance, by content (data, delete).", []string{"connector", "table", "content"}, nil)
	descTableSnapshots = prometheus.NewDesc("connectd_iceberg_table_snapshots",
		"Snapshots in the table's metadata after its last maintenance.", tableLabels, nil)
	descMaintRuns = prometheus.NewDesc("connectd_iceberg_maintenance_runs_total",
		"Maintenance runs of the table, by result (failed: tried again next interval).", []string{"connector", "table", "result"}, nil)
	descMaintCompactions = prometheus.NewDesc("connectd_iceberg_maintenance_compactions_total",
		"Compactions that committed a replace snapshot to the table.", tableLabels, nil)
	descMaintManifests = prometheus.NewDesc("connectd_iceberg_maintenance_manifest_rewrites_total",
		"Manifest rewrites that committed a replace snapshot to the table.", tableLabels, nil)
	descMaintExpired = prometheus.NewDesc("connectd_iceberg_maintenance_expired_snapshots_total",
		"Snapshots of the table that maintenance expired.", tableLabels, nil)
	descMaintOrphans = prometheus.NewDesc("connectd_iceberg_maintenance_orphan_files_removed_total",
		"Orphan files of the table that maintenance removed.", tableLabels, nil)
	descMaintLast = prometheus.NewDesc("connectd_iceberg_maintenance_last_success_timestamp_seconds",
		"When the table's last successful maintenance ended; 0 before the first.", tableLabels, nil)
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
	for _, d := range []*prometheus.Desc{descRounds, descLed, descSnapshots, descFiles, descLastOK, descBuffered, descCommitter,
		descTableFiles, descTableBytes, descTableSnapshots, descMaintRuns, descMaintCompactions, descMaintManifests,
		descMaintExpired, descMaintOrphans, descMaintLast} {
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
		if c.maint != nil {
			collectMaintenance(ch, name, c.maint.stats())
		}
	}
}

func collectMaintenance(ch chan<- prometheus.Metric, connector string, tables map[string]tableMaintenance) {
	for tbl, tm := range tables {
		metric := func(d *prometheus.Desc, vt prometheus.ValueType, v float64, lv ...string) {
			ch <- prometheus.MustNewConstMetric(d, vt, v, append([]string{connector, tbl}, lv...)...)
		}
		metric(descTableFiles, prometheus.GaugeValue, float64(tm.State.DataFiles), "data")
		metric(descTableFiles, prometheus.GaugeValue, float64(tm.State.DeleteFiles), "delete")
		metric(descTableBytes, prometheus.GaugeValue, float64(tm.State.DataBytes), "data")
		metric(descTableBytes, prometheus.GaugeValue, float64(tm.State.DeleteBytes), "delete")
		metric(descTableSnapshots, prometheus.GaugeValue, float64(tm.State.Snapshots))
		metric(descMaintRuns, prometheus.CounterValue, float64(tm.Runs-tm.Failures), "ok")
		metric(descMaintRuns, prometheus.CounterValue, float64(tm.Failures), "failed")
		metric(descMaintCompactions, prometheus.CounterValue, float64(tm.Compactions))
		metric(descMaintManifests, prometheus.CounterValue, float64(tm.ManifestRewrites))
		metric(descMaintExpired, prometheus.CounterValue, float64(tm.SnapshotsExpired))
		metric(descMaintOrphans, prometheus.CounterValue, float64(tm.Orphans))
		last := 0.0
		if !tm.Last.IsZero() {
			last = float64(tm.Last.UnixNano()) / 1e9
		}
		metric(descMaintLast, prometheus.GaugeValue, last)
	}
}
