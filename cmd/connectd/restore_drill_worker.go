package main

// The worker's restore drill schedule (worker keys connectd.restore-drill.configs and
// connectd.restore-drill.interval.ms).

import (
	"context"
	"fmt"
	"sync"

	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/metrics"
	"github.com/connectd/connectd/internal/props"
	"github.com/connectd/connectd/internal/worker"
	"github.com/connectd/connectd/lakeops/restoredrill"
)

// restoreDrillMetrics registers the drill series on the worker's registry once per process.
var restoreDrillMetrics = sync.OnceValue(func() *restoredrill.Metrics { return restoredrill.NewMetrics(metrics.Registry) })

// workerRestoreDrills reads and checks every drill properties file the worker names, so that a file that
// cannot be read or parsed stops the start; it returns the schedule to run in the background (nil: none).
func workerRestoreDrills(cfg *worker.Config) (func(context.Context), error) {
	if len(cfg.RestoreDrillConfigs) == 0 {
		return nil, nil
	}
	var cfgs []*restoredrill.Config
	for _, path := range cfg.RestoreDrillConfigs {
		p, err := props.Load(path)
		if err != nil {
			return nil, fmt.Errorf("invalid worker config: %s: %w", worker.RestoreDrillConfigsKey, err)
		}
		c, err := restoredrill.ParseConfig(p)
		if err != nil {
			return nil, fmt.Errorf("invalid worker config: %s: %s: %w", worker.RestoreDrillConfigsKey, path, err)
		}
		cfgs = append(cfgs, c)
	}
	m := restoreDrillMetrics()
	log := logging.Default.Logger("connectd.restoredrill")
	interval := cfg.RestoreDrillInterval
	return func(ctx context.Context) {
		restoredrill.Schedule(ctx, cfgs, interval, m, func(c *restoredrill.Config, r *restoredrill.Record, err error) {
			attrs := []any{"iceberg_table", c.Source.IcebergTable, "verdict", r.Verdict, "seconds", r.Seconds, "record", r.JSONPath}
			switch {
			case err != nil:
				log.Warn("restore drill: the evidence record could not be written", append(attrs, "error", err)...)
			case r.Verdict != restoredrill.Passed:
				log.Warn("restore drill failed", append(attrs, "reasons", r.Reasons)...)
			default:
				log.Info("restore drill passed", attrs...)
			}
		})
	}, nil
}
