package main

// The worker's reconcile schedule (worker keys connectd.reconcile.configs and connectd.reconcile.interval.ms).

import (
	"fmt"
	"sync"

	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/metrics"
	"github.com/connectd/connectd/internal/props"
	"github.com/connectd/connectd/internal/worker"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// reconcileMetrics registers the reconcile series on the worker's registry once per process: the series
// of a pair are labelled by its tables, and a registry refuses a second registration.
var reconcileMetrics = sync.OnceValue(func() *reconcile.Metrics { return reconcile.NewMetrics(metrics.Registry) })

// workerReconcile reads and checks every reconcile properties file the worker names, so that a file that
// cannot be read or parsed stops the start; nil when none is named.
func workerReconcile(cfg *worker.Config) (*reconcile.Scheduler, error) {
	if len(cfg.ReconcileConfigs) == 0 {
		return nil, nil
	}
	var jobs []reconcile.Job
	for _, path := range cfg.ReconcileConfigs {
		p, err := props.Load(path)
		if err != nil {
			return nil, fmt.Errorf("invalid worker config: %s: %w", worker.ReconcileConfigsKey, err)
		}
		c, err := reconcile.ParseConfig(p)
		if err != nil {
			return nil, fmt.Errorf("invalid worker config: %s: %s: %w", worker.ReconcileConfigsKey, path, err)
		}
		jobs = append(jobs, reconcile.Job{Source: path, Config: c})
	}
	return reconcile.NewScheduler(jobs, cfg.ReconcileInterval, reconcileMetrics(), logging.Default.Logger("connectd.reconcile"),
		reconcile.RunTimeout(cfg.ReconcileTimeout)), nil
}

// reconcileEndpoint serves the schedule at /connectd/reconcile.
type reconcileEndpoint struct{ s *reconcile.Scheduler }

func (e reconcileEndpoint) ReconcileStatus() any   { return e.s.Status() }
func (e reconcileEndpoint) TriggerReconcile() bool { return e.s.Trigger() }
