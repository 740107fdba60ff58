// Package plugins lists the plugins built into connectd: the one place a plugin package is wired into the
// runtime's registry.
package plugins

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/transforms"
	"github.com/connectd/connectd/connectors/clickhouse"
	"github.com/connectd/connectd/connectors/dlq"
	"github.com/connectd/connectd/connectors/file"
	"github.com/connectd/connectd/connectors/iceberg"
	icebergtransforms "github.com/connectd/connectd/connectors/iceberg/transforms"
	"github.com/connectd/connectd/converters/avro"
	"github.com/connectd/connectd/converters/bytesconv"
	"github.com/connectd/connectd/converters/header"
	"github.com/connectd/connectd/converters/jsonconv"
	"github.com/connectd/connectd/converters/str"
)

// Builtin returns a fresh registry of the built-in connectors, converters, SMTs and predicates.
func Builtin() *connect.Registry {
	return connect.NewRegistry(
		// Kafka's SMTs and predicates, Debezium's ExtractNewRecordState.
		transforms.Plugins(),
		// Converters.
		jsonconv.Plugins(),
		str.Plugins(),
		bytesconv.Plugins(),
		header.Plugins(),
		avro.Plugins(),
		// Sinks.
		file.Plugins(),
		dlq.Plugins(),
		clickhouse.Plugins(),
		// The Iceberg sink (org.apache.iceberg.connect.IcebergSinkConnector, Tabular alias) and its SMTs.
		iceberg.Plugins(),
		icebergtransforms.Plugins(),
	)
}
