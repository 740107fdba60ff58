// Package connect is the public SPI and data model of the runtime: schemas, structs, sink records, the
// connector, task, converter, transformation and predicate interfaces, config definitions, the plugin
// registry, and what the runtime lends plugins (metrics, Kafka clients, the values a worker's plugin
// instances share). It mirrors Kafka's connect-api in Go idiom so that a Connect engineer finds the same concepts.
//
// Value representation (what a Schema of each Type holds):
//
//	INT8 int8, INT16 int16, INT32 int32, INT64 int64, FLOAT32 float32, FLOAT64 float64, BOOLEAN bool,
//	STRING string, BYTES []byte, ARRAY []any, MAP map[any]any, STRUCT *Struct.
//	Logical types: Decimal → Decimal (unscaled big.Int + scale), Date/Time/Timestamp → time.Time (UTC).
//
// Schemaless values (a nil schema) use the same Go types, except that objects decoded from schemaless
// JSON are map[string]any, as the JVM's schemaless SMTs expect a Map<String,Object>.
//
// This package imports nothing else of the module: connectors depend only on it.
package connect
