package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/ch-go"

	"github.com/connectd/connectd/internal/devmode"
	"github.com/connectd/connectd/internal/worker"
)

// Dev mode with a ClickHouse server (-clickhouse host:port): the demo CDC stream also goes into a
// ReplacingMergeTree current table through the ClickHouse sink, and the worker compares that table with
// the Iceberg current table on a schedule (docs/RECONCILE.md), answering at /connectd/reconcile.

const (
	devCHConnector = "customers-clickhouse-sink"
	devCHTable     = "customers"
)

// devClickHouseDDL creates the current table in database db: the demo's columns, the source lsn as the
// version (what the sink takes from a PostgreSQL envelope) and the delete flag, ordered by the key so
// that every version of a customer meets in FINAL.
func devClickHouseDDL(db string) string {
	return "CREATE TABLE IF NOT EXISTS `" + db + "`." + devCHTable + ` (
  id Int32, first_name String, last_name String, email String, status Nullable(String),
  updated_at DateTime64(6, 'UTC'), _version UInt64, is_deleted UInt8
) ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id`
}

// devCreateClickHouseTable creates the database and the current table unless they exist, so that the
// sink's task finds its table (the dev connector does not set auto.create.tables).
func devCreateClickHouseTable(ctx context.Context, addr, db string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := ch.Dial(ctx, ch.Options{Address: addr, ClientName: "connectd-dev", DialTimeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("-clickhouse: connect %s: %w", addr, err)
	}
	defer c.Close()
	for _, sql := range []string{"CREATE DATABASE IF NOT EXISTS `" + db + "`", devClickHouseDDL(db)} {
		if err := c.Do(ctx, ch.Query{Body: sql}); err != nil {
			return fmt.Errorf("-clickhouse: %s: %w", strings.SplitN(sql, "(", 2)[0], err)
		}
	}
	return nil
}

func devClickHouseConnector(addr, db string) (map[string]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-clickhouse %q: %w", addr, err)
	}
	if _, err := strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("-clickhouse %q: port %q is not a number", addr, port)
	}
	return map[string]string{
		"name":               devCHConnector,
		"connector.class":    "com.clickhouse.kafka.connect.ClickHouseSinkConnector",
		"tasks.max":          "1",
		"topics":             devmode.CustomersTopic,
		"topic2TableMap":     devmode.CustomersTopic + "=" + devCHTable,
		"hostname":           host,
		"port":               port,
		"database":           db,
		"debeziumCDCEnabled": "true",
		"exactlyOnce":        "true",
	}, nil
}

// devReconcile writes the reconcile properties of the pair (Iceberg inventory.customers, ClickHouse
// customers) into dataDir and sets the worker keys that compare them every interval.
func devReconcile(wp, iceberg, ch map[string]string, dataDir string, intervalMS int64) (string, error) {
	p := map[string]string{
		"iceberg.table":           "inventory.customers",
		"clickhouse.hostname":     ch["hostname"],
		"clickhouse.port":         ch["port"],
		"clickhouse.database":     ch["database"],
		"clickhouse.table":        devCHTable,
		"clickhouse.group.id":     "connect-" + devCHConnector,
		"kafka.bootstrap.servers": wp["bootstrap.servers"],
		"topics":                  devmode.CustomersTopic,
		"buckets":                 "4",
	}
	for k, v := range iceberg {
		if strings.HasPrefix(k, "iceberg.catalog.") {
			p[k] = v
		}
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by connectd dev: the demo's Iceberg and ClickHouse current tables, compared by the worker\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, strings.ReplaceAll(p[k], `\`, `\\`))
	}
	path := filepath.Join(dataDir, "reconcile.properties")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	wp[worker.ReconcileConfigsKey] = path
	wp[worker.ReconcileIntervalKey] = strconv.FormatInt(intervalMS, 10)
	return path, nil
}
