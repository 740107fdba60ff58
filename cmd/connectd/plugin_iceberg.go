package main

// The Iceberg sink (org.apache.iceberg.connect.IcebergSinkConnector, Tabular alias), its SMTs and
// the table maintenance it runs with iceberg.tables.maintenance.interval-ms.
import (
	_ "github.com/connectd/connectd/connectors/iceberg"
	_ "github.com/connectd/connectd/connectors/iceberg/transforms"
)
