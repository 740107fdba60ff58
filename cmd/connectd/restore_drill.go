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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/connectd/connectd/lakeops/restoredrill"
)

const restoreDrillUsage = `usage: connectd restore-drill [-check-only] [-format text|json] [-interval 24h -metrics-listen 127.0.0.1:9465] [drill.properties] [key=value ...]

Restores the Iceberg table as of a snapshot (drill.snapshot-id, default the current one) or a metadata file
(drill.metadata-file) into the spare namespace drill.namespace, rebuilds the ClickHouse table from it into the
spare database drill.clickhouse.database, compares the restored copies with the source (contents, reconcile
at one cut, the key queries drill.query.<name>=SELECT ... FROM {table} ...) and writes a dated evidence
record (JSON and Markdown) into drill.record.dir. -check-only checks the copy already in the spare namespace.
-interval runs a drill every interval until stopped, with Prometheus metrics on -metrics-listen.
Exit code: 0 passed, 1 failed, 2 error. Keys: those of connectd reconcile, plus the drill.* keys
(docs/OPERATIONS.md).`

func runRestoreDrill(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore-drill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	checkOnly := fs.Bool("check-only", false, "check the restored copy already in the spare namespace instead of restoring again")
	format := fs.String("format", "text", "output: text or json")
	interval := fs.Duration("interval", 0, "run a drill every interval until stopped")
	listen := fs.String("metrics-listen", "", "address for GET /metrics while running on a schedule")
	fs.Usage = func() { fmt.Fprintln(stderr, restoreDrillUsage) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	p, err := loadJobProps(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "connectd restore-drill:", err)
		return 2
	}
	cfg, err := restoredrill.ParseConfig(p)
	if err != nil {
		fmt.Fprintf(stderr, "connectd restore-drill: %v\n%s\n", err, restoreDrillUsage)
		return 2
	}
	write := func(rec *restoredrill.Record) {
		if *format == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rec)
		} else {
			rec.WriteText(stdout)
		}
	}
	if *interval > 0 {
		reg := prometheus.NewRegistry()
		m := restoredrill.NewMetrics(reg)
		if *listen != "" {
			ln, err := net.Listen("tcp", *listen)
			if err != nil {
				fmt.Fprintln(stderr, "connectd restore-drill:", err)
				return 2
			}
			fmt.Fprintf(stderr, "metrics on http://%s/metrics\n", ln.Addr())
			mux := http.NewServeMux()
			mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = srv.Serve(ln) }()
			defer srv.Close()
		}
		restoredrill.Schedule(ctx, []*restoredrill.Config{cfg}, *interval, m, func(_ *restoredrill.Config, rec *restoredrill.Record, err error) {
			write(rec)
			if err != nil {
				fmt.Fprintln(stderr, "connectd restore-drill: writing the evidence record:", err)
			}
		})
		return 0 // stopped by a signal
	}
	rec, err := restoredrill.Run(ctx, cfg, restoredrill.Options{CheckOnly: *checkOnly})
	write(rec)
	if err != nil {
		fmt.Fprintln(stderr, "connectd restore-drill: writing the evidence record:", err)
		return 2
	}
	if rec.Verdict != restoredrill.Passed {
		return 1
	}
	return 0
}

func restoreDrillMain(ctx context.Context) {
	os.Exit(runRestoreDrill(ctx, os.Args[2:], os.Stdout, os.Stderr))
}
