package main

// The Iceberg sink (org.apache.iceberg.connect.IcebergSinkConnector, Tabular alias) and its SMTs.
import (
	_ "github.com/connectd/connectd/connectors/iceberg"
	_ "github.com/connectd/connectd/connectors/iceberg/transforms"
)
