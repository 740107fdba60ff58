package main

import (
	"fmt"
	"path/filepath"

	"github.com/connectd/connectd/internal/devmode"
)

const devIcebergName = "customers-iceberg-sink"

// Dev mode: the demo CDC stream also goes into a local Iceberg warehouse (SQLite catalog):
// inventory.customers holds the current state (upserts and deletes by id, from the Debezium
// envelope) and inventory.customers_history every change event with its Kafka coordinates
// and source position (the raw CDC model). The current table's versions are the source lsn (as the
// ClickHouse sink's, so that reconcile compares them): a late or replayed older event never wins.
// inventory.dim_customers is the SCD Type 2 table of the history, materialized by the connector.
func devIcebergConnector(dataDir string) (map[string]string, []string) {
	dir := filepath.Join(dataDir, "iceberg")
	catDB := filepath.Join(dir, "catalog.db")
	c := map[string]string{
		"name":                                 devIcebergName,
		"connector.class":                      "org.apache.iceberg.connect.IcebergSinkConnector",
		"tasks.max":                            "1",
		"topics":                               devmode.CustomersTopic,
		"iceberg.tables":                       "inventory.customers,inventory.customers_history",
		"iceberg.tables.auto-create-enabled":   "true",
		"iceberg.tables.evolve-schema-enabled": "true",
		"iceberg.table.inventory.customers.id-columns":      "id",
		"iceberg.table.inventory.customers.version-column":  "source.lsn",
		"iceberg.table.inventory.customers_history.raw-cdc": "true",
		"iceberg.catalog.type":                              "sql",
		"iceberg.catalog.uri":                               "jdbc:sqlite:" + catDB,
		"iceberg.catalog.warehouse":                         filepath.Join(dir, "warehouse"),
		"iceberg.control.commit.interval-ms":                "10000",
		// the SCD Type 2 table of the history (docs/SCD.md), refreshed every 30 s
		"iceberg.tables.scd.tables":                           "inventory.customers_history",
		"iceberg.table.inventory.customers_history.scd-table": "inventory.dim_customers",
		"iceberg.tables.scd.attributes":                       "first_name,last_name,email,status",
		"iceberg.tables.scd.skip-unchanged":                   "true",
		"iceberg.tables.scd.interval-ms":                      "30000",
	}
	notes := []string{
		fmt.Sprintf("iceberg (commits every 10 s): scripts/iceberg-query.sh %s inventory.customers 'SELECT * FROM t ORDER BY id'", catDB),
		fmt.Sprintf("                              scripts/iceberg-query.sh %s inventory.customers_history 'SELECT operation, source_version, kafka_partition, kafka_offset FROM t ORDER BY kafka_offset DESC LIMIT 10'", catDB),
		fmt.Sprintf("iceberg SCD (every 30 s):     scripts/iceberg-query.sh %s inventory.dim_customers 'SELECT business_key, email, status, valid_from, valid_to, is_current FROM t ORDER BY business_key, valid_from'", catDB),
	}
	return c, notes
}
