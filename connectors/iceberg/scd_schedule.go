package iceberg

// SCD Type 2 materialization inside the connector (iceberg.tables.scd.interval-ms): the process
// that commits starts package scd on each configured history table when the interval has passed,
// after a commit round. It runs beside the commit loop rather than on it: it only reads the
// history tables and writes the SCD tables, which the sink never writes, so it cannot conflict
// with a round, and a long first run delays no commit. One run at a time per process; a second
// committer (a zombie) running at once loses the SCD table's compare-and-swap and changes nothing.

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/scd"
)

// scdScheduler runs the SCD materializations of one coordinator.
type scdScheduler struct {
	cfg     scd.Config
	next    time.Time // the commit loop's own: no lock
	running atomic.Bool
	stop    chan struct{}
	wg      sync.WaitGroup
	log     *slog.Logger

	mu   sync.Mutex
	last map[string]scdTableRun // per SCD table
}

// scdTableRun is the last run of one SCD table.
type scdTableRun struct {
	Runs, Failures int64
	Last           time.Time // end of the last successful run
	Report         scd.Report
	Err            string
}

func newSCDScheduler(cfg *SinkConfig, stop chan struct{}, log *slog.Logger) *scdScheduler {
	if cfg.SCD.Interval <= 0 || len(cfg.SCD.Tables) == 0 {
		return nil
	}
	return &scdScheduler{cfg: cfg.SCD, next: time.Now().Add(cfg.SCD.Interval), stop: stop, log: log,
		last: map[string]scdTableRun{}}
}

// scdDue starts the materialization of every SCD table when the interval has passed and no run is
// under way. The caller is the commit loop of the process that commits, after a round.
func (c *coordinator) scdDue() {
	s := c.scd
	if s == nil || time.Now().Before(s.next) || !s.running.CompareAndSwap(false, true) {
		return
	}
	s.next = time.Now().Add(s.cfg.Interval)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.running.Store(false)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		cat, err := c.tables.Catalog(ctx)
		if err != nil {
			s.log.Warn("iceberg SCD materialization skipped; tried again next interval", "err", err)
			return
		}
		for _, o := range s.cfg.Tables {
			if ctx.Err() != nil {
				return
			}
			rep, err := scd.Run(ctx, cat, o)
			if errors.Is(err, catalog.ErrNoSuchTable) && rep.To == (scd.Position{}) {
				continue // the history table is not created yet
			}
			s.record(rep, err)
			if err != nil {
				s.log.Warn("iceberg SCD materialization failed; tried again next interval",
					"history", strings.Join(o.History, "."), "table", strings.Join(o.Target, "."), "err", err)
			} else if !rep.UpToDate {
				s.log.Info("iceberg SCD table materialized", "history", rep.History, "table", rep.Target,
					"keys", rep.Keys, "rows", rep.RowsWritten, "snapshot", rep.SnapshotID)
			}
		}
	}()
}

func (s *scdScheduler) record(rep scd.Report, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.last[rep.Target]
	r.Runs++
	r.Report, r.Err = rep, ""
	if err != nil {
		r.Failures++
		r.Err = err.Error()
	} else {
		r.Last = time.Now()
	}
	s.last[rep.Target] = r
}

// runs copies the last run of each SCD table.
func (s *scdScheduler) runs() map[string]scdTableRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]scdTableRun, len(s.last))
	for k, v := range s.last {
		out[k] = v
	}
	return out
}

// wait returns when the run under way (if any) has stopped; the coordinator closed s.stop first.
func (s *scdScheduler) wait() {
	if s != nil {
		s.wg.Wait()
	}
}

// Metrics of the SCD runs (iceberg.tables.scd.interval-ms), per SCD table, on the process that commits.
var (
	descSCDRuns = &connect.MetricDesc{Name: "connectd_iceberg_scd_runs_total",
		Help: "SCD materialization runs of the table, by result (failed: tried again next interval).", Kind: connect.CounterMetric, Labels: []string{"connector", "table", "result"}}
	descSCDLast = &connect.MetricDesc{Name: "connectd_iceberg_scd_last_success_timestamp_seconds",
		Help: "When the SCD table's last successful run ended; 0 before the first.", Kind: connect.GaugeMetric, Labels: tableLabels}
)

func collectSCD(ch report, connector string, s *scdScheduler) {
	if s == nil {
		return
	}
	for tbl, r := range s.runs() {
		ch(descSCDRuns, float64(r.Runs-r.Failures), connector, tbl, "ok")
		ch(descSCDRuns, float64(r.Failures), connector, tbl, "failed")
		last := 0.0
		if !r.Last.IsZero() {
			last = float64(r.Last.UnixNano()) / 1e9
		}
		ch(descSCDLast, last, connector, tbl)
	}
}
