// Package transforms holds the single message transforms of Apache Iceberg's Kafka Connect sink
// (org.apache.iceberg:iceberg-kafka-connect-transforms, a separate artifact from the sink on the JVM too),
// listed by Plugins under their Apache class names and, where Tabular shipped them, Tabular's
// io.tabular.iceberg.connect.transforms.* names.
package transforms

import (
	"strings"

	"github.com/connectd/connectd/connect"
)

// Version is the version the transforms report (the Iceberg sink's).
const Version = "1.0.0"

// Class names of the transforms.
const (
	DebeziumTransformClass      = "org.apache.iceberg.connect.transforms.DebeziumTransform"
	KafkaMetadataTransformClass = "org.apache.iceberg.connect.transforms.KafkaMetadataTransform"
	CopyValueClass              = "org.apache.iceberg.connect.transforms.CopyValue"
	DmsTransformClass           = "org.apache.iceberg.connect.transforms.DmsTransform"
	JsonToMapTransformClass     = "org.apache.iceberg.connect.transforms.JsonToMapTransform"
	MongoDebeziumTransformClass = "org.apache.iceberg.connect.transforms.MongoDebeziumTransform"
	// tabularTransforms is the package of the same SMTs in Tabular's iceberg-kafka-connect, accepted as aliases.
	tabularTransforms = "io.tabular.iceberg.connect.transforms."
)

// tabularAlias is the Tabular class name of an Apache Iceberg SMT class, for those Tabular shipped (all but
// CopyValue).
func tabularAlias(class string) []string {
	if class == CopyValueClass {
		return nil
	}
	return []string{tabularTransforms + class[strings.LastIndexByte(class, '.')+1:]}
}

// Plugins lists the transforms, for a runtime's registry.
func Plugins() []connect.Plugin {
	smt := func(class string, mk func() any) connect.Plugin {
		return connect.Plugin{Class: class, Aliases: tabularAlias(class), Type: connect.PluginTransformation, Version: Version, New: mk}
	}
	return []connect.Plugin{
		smt(DebeziumTransformClass, func() any { return &DebeziumTransform{} }),
		smt(KafkaMetadataTransformClass, func() any { return &KafkaMetadataTransform{} }),
		smt(CopyValueClass, func() any { return &CopyValue{} }),
		smt(DmsTransformClass, func() any { return &DmsTransform{} }),
		smt(JsonToMapTransformClass, func() any { return &JsonToMapTransform{} }),
		smt(MongoDebeziumTransformClass, func() any { return &MongoDebeziumTransform{} }),
	}
}
