package main

// Wiring of `connectd distributed worker.properties`.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/connectd/connectd/api"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/worker"
)

func runDistributed(ctx context.Context, reg *connect.Registry, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: connectd distributed worker.properties")
	}
	wp, err := loadWorkerProps(args[0])
	if err != nil {
		return err
	}
	return serveDistributed(ctx, reg, wp)
}

func serveDistributed(ctx context.Context, reg *connect.Registry, wp map[string]string) error {
	start := time.Now()
	if err := resolveListeners(wp); err != nil {
		return err
	}
	cfg, err := worker.ParseConfig(wp)
	if err != nil {
		return fmt.Errorf("invalid worker config: %w", err)
	}
	cfg.Distributed = true
	if err := prepareScratch(cfg); err != nil {
		return err
	}
	dcfg, err := herder.ParseDistributedConfig(cfg.Props)
	if err != nil {
		return fmt.Errorf("invalid worker config: %w", err)
	}
	clientProps := cfg.ClientProps("admin")
	if _, err := kafka.ClientOpts(clientProps); err != nil {
		return fmt.Errorf("invalid worker config: %w", err)
	}
	ropts, err := restOptions(cfg)
	if err != nil {
		return err
	}
	// Every worker with the reconcile keys runs its own schedule and answers for it: leadership moves at
	// each rebalance, and reports and metrics that moved with it would be split across workers.
	sched, err := workerReconcile(cfg)
	if err != nil {
		return err
	}
	drills, err := workerRestoreDrills(cfg)
	if err != nil {
		return err
	}
	if sched != nil {
		ropts = append(ropts, api.WithReconciler(reconcileEndpoint{sched}))
	}
	ropts = append(ropts, api.WithSCDMaterializer(scdEndpoint{cfg}), api.WithRegistry(reg))
	h := herder.NewDistributed(dcfg, "", clientProps)
	w := worker.New(cfg, reg, h)
	h.SetWorker(w)
	srv := api.NewServer(h, ropts...)
	h.SetRESTClient(&http.Client{Timeout: 10 * time.Second, Transport: srv.Transport()})
	if err := srv.Start(); err != nil {
		return fmt.Errorf("starting REST server: %w", err)
	}
	h.SetAdvertisedURL(srv.AdvertisedURL())
	if err := h.Start(ctx); err != nil {
		srv.Shutdown(context.Background())
		return err
	}
	slog.Info("Kafka Connect started", "mode", "distributed", "group", dcfg.GroupID, "worker_id", cfg.WorkerID(),
		"rest", srv.AdvertisedURL(), "startup", time.Since(start).Round(time.Millisecond))
	if drills != nil {
		go drills(ctx)
	}
	if sched != nil {
		sched.Start(ctx)
	}
	<-ctx.Done()
	slog.Info("Kafka Connect stopping")
	if sched != nil {
		sched.Stop()
	}
	// the herder stops (tasks commit, the group is left) while the REST listener still accepts: a listener
	// that refuses connections tells the other workers that this worker is gone (peer.probe.interval.ms)
	h.Stop()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	slog.Info("Kafka Connect stopped")
	return nil
}
