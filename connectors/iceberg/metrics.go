package iceberg

import (
	"log/slog"

	"github.com/connectd/connectd/connect"
)

// Metrics of the commit coordinators, read at scrape time (nothing on the record
// path). Freshness of the tables: time() - connectd_iceberg_last_durable_round_timestamp_seconds.
var (
	descRounds = &connect.MetricDesc{Name: "connectd_iceberg_commit_rounds_total",
		Help: "Commit rounds this process's tasks took part in, by result (failed: the tasks rewound).", Kind: connect.CounterMetric, Labels: []string{"connector", "result"}}
	descLed = &connect.MetricDesc{Name: "connectd_iceberg_committer_rounds_total",
		Help: "Rounds this process ran as the committer of a distributed connector, by result.", Kind: connect.CounterMetric, Labels: []string{"connector", "result"}}
	descSnapshots = &connect.MetricDesc{Name: "connectd_iceberg_snapshots_total",
		Help: "Table snapshots committed by this process.", Kind: connect.CounterMetric, Labels: []string{"connector"}}
	descFiles = &connect.MetricDesc{Name: "connectd_iceberg_files_total",
		Help: "Files committed by this process, by content (data, delete).", Kind: connect.CounterMetric, Labels: []string{"connector", "content"}}
	descLastOK = &connect.MetricDesc{Name: "connectd_iceberg_last_durable_round_timestamp_seconds",
		Help: "When this process's tasks last had a round committed (their positions durable in every table); 0 before the first.", Kind: connect.GaugeMetric, Labels: []string{"connector"}}
	descBuffered = &connect.MetricDesc{Name: "connectd_iceberg_buffered_records",
		Help: "Records buffered in this process's tasks, waiting for the next round.", Kind: connect.GaugeMetric, Labels: []string{"connector"}}
	descStuck = &connect.MetricDesc{Name: "connectd_iceberg_commit_stuck_seconds",
		Help: "How long the connector's most stuck task in this process has held records no commit made durable, once past three commit intervals (at least 45 s); 0 when none is stuck.", Kind: connect.GaugeMetric, Labels: []string{"connector"}}
	descCommitter = &connect.MetricDesc{Name: "connectd_iceberg_committer",
		Help: "1 when this process is the committer of a distributed connector (it holds the first partition).", Kind: connect.GaugeMetric, Labels: []string{"connector"}}

	// Table maintenance (iceberg.tables.maintenance.interval-ms), per table, on the process that commits.
	tableLabels    = []string{"connector", "table"}
	descTableFiles = &connect.MetricDesc{Name: "connectd_iceberg_table_files",
		Help: "Live files of the table's branch head after its last maintenance, by content (data, delete).", Kind: connect.GaugeMetric, Labels: []string{"connector", "table", "content"}}
	descTableBytes = &connect.MetricDesc{Name: "connectd_iceberg_table_bytes",
		Help: "Bytes of the live files of the table's branch head after its last maintenance, by content (data, delete).", Kind: connect.GaugeMetric, Labels: []string{"connector", "table", "content"}}
	descTableSnapshots = &connect.MetricDesc{Name: "connectd_iceberg_table_snapshots",
		Help: "Snapshots in the table's metadata after its last maintenance.", Kind: connect.GaugeMetric, Labels: tableLabels}
	descMaintRuns = &connect.MetricDesc{Name: "connectd_iceberg_maintenance_runs_total",
		Help: "Maintenance runs of the table, by result (failed: tried again next interval).", Kind: connect.CounterMetric, Labels: []string{"connector", "table", "result"}}
	descMaintCompactions = &connect.MetricDesc{Name: "connectd_iceberg_maintenance_compactions_total",
		Help: "Compactions that committed a replace snapshot to the table.", Kind: connect.CounterMetric, Labels: tableLabels}
	descMaintManifests = &connect.MetricDesc{Name: "connectd_iceberg_maintenance_manifest_rewrites_total",
		Help: "Manifest rewrites that committed a replace snapshot to the table.", Kind: connect.CounterMetric, Labels: tableLabels}
	descMaintExpired = &connect.MetricDesc{Name: "connectd_iceberg_maintenance_expired_snapshots_total",
		Help: "Snapshots of the table that maintenance expired.", Kind: connect.CounterMetric, Labels: tableLabels}
	descMaintOrphans = &connect.MetricDesc{Name: "connectd_iceberg_maintenance_orphan_files_removed_total",
		Help: "Orphan files of the table that maintenance removed.", Kind: connect.CounterMetric, Labels: tableLabels}
	descMaintLast = &connect.MetricDesc{Name: "connectd_iceberg_maintenance_last_success_timestamp_seconds",
		Help: "When the table's last successful maintenance ended; 0 before the first.", Kind: connect.GaugeMetric, Labels: tableLabels}
)

// coordCollector reports every coordinator of a worker's set, each under its connector's name.
type coordCollector struct{ set *coordinatorSet }

// publishMetrics publishes the set's metrics through m (the handle of the task that started the set), if
// any: one collector per worker serves every connector of the worker.
func (s *coordinatorSet) publishMetrics(m connect.PluginMetrics) {
	if m == nil {
		return
	}
	if err := m.Register(coordCollector{s}); err != nil {
		slog.Warn("iceberg: coordinator metrics not registered", "err", err)
		return
	}
	s.metrics = m
}

// withdrawMetrics withdraws what publishMetrics published.
func (s *coordinatorSet) withdrawMetrics() {
	if s.metrics != nil {
		s.metrics.Unregister(coordCollector{s})
	}
}

func (coordCollector) Describe() []*connect.MetricDesc {
	return []*connect.MetricDesc{descRounds, descLed, descSnapshots, descFiles, descLastOK, descBuffered, descStuck, descCommitter,
		descTableFiles, descTableBytes, descTableSnapshots, descMaintRuns, descMaintCompactions, descMaintManifests,
		descMaintExpired, descMaintOrphans, descMaintLast, descSCDRuns, descSCDLast}
}

// report sends one series; the descriptions say counter or gauge.
type report = func(desc *connect.MetricDesc, value float64, labelValues ...string)

func (cc coordCollector) Collect(ch report) {
	for _, c := range cc.set.list() {
		name := c.cfg.Name
		st := c.stats()
		counter := func(d *connect.MetricDesc, v int64, lv ...string) {
			ch(d, float64(v), append([]string{name}, lv...)...)
		}
		gauge := func(d *connect.MetricDesc, v float64) {
			ch(d, v, name)
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
		gauge(descStuck, c.stuckSeconds())
		if distributed, leads := c.orch.Committer(); distributed {
			counter(descLed, st.LedRounds-st.LedFailed, "ok")
			counter(descLed, st.LedFailed, "failed")
			lead := 0.0
			if leads {
				lead = 1
			}
			gauge(descCommitter, lead)
		}
		if c.maint != nil {
			collectMaintenance(ch, name, c.maint.stats())
		}
		collectSCD(ch, name, c.scd)
	}
}

func collectMaintenance(ch report, connector string, tables map[string]tableMaintenance) {
	for tbl, tm := range tables {
		metric := func(d *connect.MetricDesc, _ connect.MetricKind, v float64, lv ...string) {
			ch(d, v, append([]string{connector, tbl}, lv...)...)
		}
		metric(descTableFiles, connect.GaugeMetric, float64(tm.State.DataFiles), "data")
		metric(descTableFiles, connect.GaugeMetric, float64(tm.State.DeleteFiles), "delete")
		metric(descTableBytes, connect.GaugeMetric, float64(tm.State.DataBytes), "data")
		metric(descTableBytes, connect.GaugeMetric, float64(tm.State.DeleteBytes), "delete")
		metric(descTableSnapshots, connect.GaugeMetric, float64(tm.State.Snapshots))
		metric(descMaintRuns, connect.CounterMetric, float64(tm.Runs-tm.Failures), "ok")
		metric(descMaintRuns, connect.CounterMetric, float64(tm.Failures), "failed")
		metric(descMaintCompactions, connect.CounterMetric, float64(tm.Compactions))
		metric(descMaintManifests, connect.CounterMetric, float64(tm.ManifestRewrites))
		metric(descMaintExpired, connect.CounterMetric, float64(tm.SnapshotsExpired))
		metric(descMaintOrphans, connect.CounterMetric, float64(tm.Orphans))
		last := 0.0
		if !tm.Last.IsZero() {
			last = float64(tm.Last.UnixNano()) / 1e9
		}
		metric(descMaintLast, connect.GaugeMetric, last)
	}
}
