package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/devmode"
	"github.com/connectd/connectd/internal/herder"
)

// devSinks are the connectors dev mode creates besides the file sink, each with the notes printed for it;
// one whose plugin this build lacks is left out.
var devSinks = []func(dataDir string) (map[string]string, []string){devIcebergConnector}

func runDev(ctx context.Context, reg *connect.Registry, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	dataDir := fs.String("data", "dev-data", "directory for the file sink output and the local warehouse")
	rest := fs.String("rest", "http://127.0.0.1:8083", "REST listener")
	kafkaPort := fs.Int("kafka-port", 9092, "port of the embedded broker (a free one if busy)")
	interval := fs.Duration("interval", 500*time.Millisecond, "time between demo CDC events")
	chAddr := fs.String("clickhouse", "", "host:port of a ClickHouse server (native protocol): also sink the demo into its table "+devCHTable+" and reconcile it with Iceberg")
	chDB := fs.String("clickhouse-database", "default", "database of the ClickHouse table")
	recInterval := fs.Duration("reconcile-interval", 30*time.Second, "with -clickhouse: time between reconcile runs (0: only on POST /connectd/reconcile)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	b, err := devmode.StartBroker(*kafkaPort)
	if err != nil {
		return err
	}
	defer b.Close()
	slog.Info("embedded Kafka-compatible broker (kfake) started", "bootstrap", b.Addr)

	wp := map[string]string{
		"bootstrap.servers":              b.Addr,
		"listeners":                      *rest,
		"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"offset.flush.interval.ms":       "5000",
		"consumer.session.timeout.ms":    "10000",
		"consumer.heartbeat.interval.ms": "1000",
	}
	fileOut := filepath.Join(abs, "customers-changes.txt")
	connectors := []map[string]string{{
		"name":            "customers-file-sink",
		"connector.class": "FileStreamSink",
		"tasks.max":       "1",
		"topics":          devmode.CustomersTopic,
		"file":            fileOut,
	}}
	notes := []string{fmt.Sprintf("file sink output:     tail -f %s", fileOut)}
	for _, sink := range devSinks {
		if c, n := sink(abs); c != nil {
			if _, ok := reg.Lookup(c["connector.class"]); ok {
				connectors = append(connectors, c)
				notes = append(notes, n...)
			}
		}
	}
	if *chAddr != "" {
		var ice map[string]string
		for _, c := range connectors {
			if c["name"] == devIcebergName {
				ice = c
			}
		}
		if ice == nil {
			return fmt.Errorf("-clickhouse: reconcile needs the Iceberg sink, which this build lacks")
		}
		ch, err := devClickHouseConnector(*chAddr, *chDB)
		if err != nil {
			return err
		}
		if err := devCreateClickHouseTable(ctx, *chAddr, *chDB); err != nil {
			return err
		}
		rec, err := devReconcile(wp, ice, ch, abs, recInterval.Milliseconds())
		if err != nil {
			return err
		}
		connectors = append(connectors, ch)
		notes = append(notes,
			fmt.Sprintf("clickhouse sink:      %s.%s on %s: SELECT * FROM %[1]s.%[2]s FINAL ORDER BY id", *chDB, devCHTable, *chAddr),
			fmt.Sprintf("reconcile (every %s): curl -s %s/connectd/reconcile | jq   (%s)", *recInterval, strings.TrimSuffix(*rest, "/"), rec))
	}
	go func() {
		if err := devmode.Produce(ctx, b.Addr, *interval, 0, nil); err != nil {
			slog.Error("demo CDC producer stopped", "error", err)
		}
	}()
	return serveStandalone(ctx, reg, wp, connectors, func(h *herder.Standalone, url string) {
		url = strings.TrimSuffix(url, "/")
		fmt.Printf(`
connectd dev mode is running.
  Kafka (embedded):   %s   topic %s (Debezium-style CDC, JSON with schemas)
  REST:               %s

Try:
  curl -s %[3]s/connectors?expand=status | jq
  curl -s %[3]s/connectors/customers-file-sink/status | jq
  curl -s -X PUT %[3]s/connectors/customers-file-sink/pause
  curl -s -X PUT %[3]s/connectors/customers-file-sink/resume
  curl -s -X PUT %[3]s/connectors/customers-file-sink/stop
  curl -s %[3]s/connectors/customers-file-sink/offsets | jq
  curl -s -X POST '%[3]s/connectors/customers-file-sink/restart?includeTasks=true'
  curl -s %[3]s/connector-plugins | jq
`, b.Addr, devmode.CustomersTopic, url)
		for _, n := range notes {
			fmt.Println("  " + n)
		}
		fmt.Println("\nCtrl-C stops everything.")
	})
}
