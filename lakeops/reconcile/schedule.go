package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// Job is one table pair a worker reconciles: its parsed properties and the file they came from.
type Job struct {
	Source string
	Config *Config
}

// Scheduler reconciles a worker's table pairs in the background, every interval and when asked, and keeps
// each pair's latest outcome for GET /connectd/reconcile. Runs of all pairs happen one after another, so
// that a worker never scans more than one pair of tables at a time.
type Scheduler struct {
	jobs     []Job
	interval time.Duration
	metrics  *Metrics
	log      *slog.Logger
	// runTimeout bounds one pair's run (RunTimeout)
	runTimeout time.Duration
	// trigger holds at most one pending run asked for while the loop waits; running is set by whoever
	// claims the next run (Trigger or the timer), so a second request while one is pending or running is
	// refused rather than queued behind it.
	trigger chan struct{}

	mu      sync.Mutex
	running bool
	status  []JobStatus

	cancel context.CancelFunc
	done   chan struct{}
}

// ScheduleStatus is the body of GET /connectd/reconcile.
type ScheduleStatus struct {
	IntervalMS int64       `json:"interval_ms"` // 0: runs only when asked
	Running    bool        `json:"running"`
	Pairs      []JobStatus `json:"pairs"`
}

// JobStatus is a pair's latest run.
type JobStatus struct {
	Config          string `json:"config"`
	IcebergTable    string `json:"iceberg_table"`
	ClickHouseTable string `json:"clickhouse_table"`
	// Result is the latest run's status (clean, drift, lag) or "error"; absent before the first run ends.
	Result  string     `json:"result,omitempty"`
	RanAt   *time.Time `json:"ran_at,omitempty"`
	Seconds float64    `json:"seconds,omitempty"`
	Error   string     `json:"error,omitempty"`
	// Report is the latest report a run completed, as `connectd reconcile -format json` prints it; after a
	// failed run it is the one before (its started_at says when).
	Report *Report `json:"report"`
}

// SchedulerOption tunes a Scheduler.
type SchedulerOption func(*Scheduler)

// RunTimeout ends a pair's run that takes longer than d (a backend that stopped answering mid-run) as a
// failed run, so that it cannot hold up every later one; 0 lets runs take as long as they take.
func RunTimeout(d time.Duration) SchedulerOption { return func(s *Scheduler) { s.runTimeout = d } }

// NewScheduler prepares the runs of jobs; interval 0 runs them only when Trigger asks.
func NewScheduler(jobs []Job, interval time.Duration, m *Metrics, log *slog.Logger, opts ...SchedulerOption) *Scheduler {
	s := &Scheduler{jobs: jobs, interval: interval, metrics: m, log: log, trigger: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	for _, j := range jobs {
		s.status = append(s.status, JobStatus{Config: j.Source, IcebergTable: j.Config.IcebergTable,
			ClickHouseTable: j.Config.CH.Database + "." + j.Config.CHTable})
	}
	return s
}

// Start runs the schedule until Stop; with an interval the first run starts at once.
func (s *Scheduler) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go s.loop(ctx)
}

// Stop cancels a run in progress and waits for the schedule to end.
func (s *Scheduler) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
}

// Trigger starts a run of every pair now; false when one is already running or about to.
func (s *Scheduler) Trigger() bool {
	if !s.claim() {
		return false
	}
	s.trigger <- struct{}{}
	return true
}

// Status is every pair's latest run.
func (s *Scheduler) Status() ScheduleStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ScheduleStatus{IntervalMS: s.interval.Milliseconds(), Running: s.running, Pairs: append([]JobStatus(nil), s.status...)}
}

func (s *Scheduler) claim() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return false
	}
	s.running = true
	return true
}

func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.done)
	next := time.Duration(0)
	for {
		var tick <-chan time.Time
		var timer *time.Timer
		if s.interval > 0 {
			timer = time.NewTimer(next)
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-s.trigger:
			if timer != nil {
				timer.Stop()
			}
		case <-tick:
			if !s.claim() {
				next = s.interval // a requested run is pending: it runs next
				continue
			}
		}
		s.runAll(ctx)
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
		next = s.interval
	}
}

func (s *Scheduler) runAll(ctx context.Context) {
	for i, j := range s.jobs {
		start := time.Now()
		runCtx, cancel := ctx, context.CancelFunc(func() {})
		if s.runTimeout > 0 {
			runCtx, cancel = context.WithTimeout(ctx, s.runTimeout)
		}
		r, err := runRecovered(runCtx, j.Config)
		// read before cancel, which sets runCtx's error whatever ended the run
		timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
		cancel()
		if ctx.Err() != nil {
			return // stopping: a cancelled run is no outcome
		}
		if err != nil && timedOut {
			err = fmt.Errorf("reconcile did not finish within %v: %w", s.runTimeout, err)
		}
		st := JobStatus{Config: j.Source, IcebergTable: s.status[i].IcebergTable, ClickHouseTable: s.status[i].ClickHouseTable,
			RanAt: &start, Seconds: time.Since(start).Seconds()}
		attrs := []any{"config", j.Source, "iceberg_table", st.IcebergTable, "clickhouse_table", st.ClickHouseTable}
		if err != nil {
			r = nil
			st.Result, st.Error = "error", err.Error()
			s.log.Warn("reconcile failed", append(attrs, "error", err)...)
		} else {
			st.Result, st.Report = r.Status, r
			attrs = append(attrs, "status", r.Status, "mismatched_rows", r.MismatchedRows, "lag_records", r.Cut.LagRecords)
			if r.Status == StatusClean {
				s.log.Info("reconcile completed", attrs...)
			} else {
				s.log.Warn("reconcile completed", attrs...)
			}
		}
		s.metrics.Observe(j.Config, r)
		s.mu.Lock()
		if st.Report == nil {
			st.Report = s.status[i].Report
		}
		s.status[i] = st
		s.mu.Unlock()
	}
}

// runRecovered is Run with a panic turned into the run's error: a scheduled run must not take the worker down.
func runRecovered(ctx context.Context, cfg *Config) (r *Report, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("reconcile panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return Run(ctx, cfg)
}
