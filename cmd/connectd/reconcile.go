package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/connectd/connectd/internal/props"
	"github.com/connectd/connectd/lakeops/reconcile"
)

const reconcileUsage = `usage: connectd reconcile [-format text|json] [-interval 5m -metrics-listen 127.0.0.1:9464] [reconcile.properties] [key=value ...]

Compares a ClickHouse table written by the ClickHouse sink with the Iceberg table written by the Iceberg sink
from the same change stream, at the Kafka offsets both hold. Exit code: 0 clean, 1 drift, 2 error, 3 lag above
lag.tolerance.records. Keys: iceberg.catalog.*, iceberg.table, clickhouse.* (hostname, port, database,
username, password, ssl, zkPath, zkDatabase), clickhouse.table, key.columns, columns, columns.exclude,
bucket.column, bucket.width, buckets, max.keys, lag.tolerance.records, kafka.bootstrap.servers
(docs/RECONCILE.md).`

// loadJobProps reads an optional properties file followed by key=value overrides.
func loadJobProps(args []string) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && !strings.HasSuffix(a, ".properties") {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
			continue
		}
		p, err := props.Load(a)
		if err != nil {
			return nil, err
		}
		for k, v := range p {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}
	return out, nil
}

// runReconcile returns the process exit code.
func runReconcile(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output: text or json")
	interval := fs.Duration("interval", 0, "run every interval until stopped (with -metrics-listen: serve Prometheus metrics)")
	listen := fs.String("metrics-listen", "", "address for GET /metrics while running on a schedule")
	fs.Usage = func() { fmt.Fprintln(stderr, reconcileUsage) }
	if err := fs.Parse(args); err != nil {
		return reconcile.ExitError
	}
	p, err := loadJobProps(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "connectd reconcile:", err)
		return reconcile.ExitError
	}
	cfg, err := reconcile.ParseConfig(p)
	if err != nil {
		fmt.Fprintf(stderr, "connectd reconcile: %v\n%s\n", err, reconcileUsage)
		return reconcile.ExitError
	}
	write := func(r *reconcile.Report) {
		if *format == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(r)
			return
		}
		r.WriteText(stdout)
	}
	if *interval <= 0 {
		r, err := reconcile.Run(ctx, cfg)
		if err != nil {
			fmt.Fprintln(stderr, "connectd reconcile:", err)
			return reconcile.ExitError
		}
		write(r)
		return r.ExitCode()
	}
	reg := prometheus.NewRegistry()
	m := reconcile.NewMetrics(reg)
	if *listen != "" {
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			fmt.Fprintln(stderr, "connectd reconcile:", err)
			return reconcile.ExitError
		}
		fmt.Fprintf(stderr, "metrics on http://%s/metrics\n", ln.Addr())
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	reconcile.Schedule(ctx, cfg, *interval, m, func(r *reconcile.Report, err error) {
		if err != nil {
			fmt.Fprintln(stderr, "connectd reconcile:", err)
			return
		}
		write(r)
	})
	return reconcile.ExitClean // stopped by a signal
}

func reconcileMain(ctx context.Context) {
	os.Exit(runReconcile(ctx, os.Args[2:], os.Stdout, os.Stderr))
}
