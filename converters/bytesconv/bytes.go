// Package bytes holds org.apache.kafka.connect.converters.ByteArrayConverter and the JVM's number
// converters (Boolean, Double, Float, Integer, Long, Short), all pass-through binary encodings.
package bytesconv

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/connectd/connectd/connect"
)

const ByteArrayClassName = "org.apache.kafka.connect.converters.ByteArrayConverter"

// Plugins lists ByteArrayConverter and the number converters, for a runtime's registry.
func Plugins() []connect.Plugin {
	out := []connect.Plugin{{Class: ByteArrayClassName, Type: connect.PluginConverter, New: func() any { return ByteArrayConverter{} }}}
	for _, n := range numberKinds {
		n := n
		out = append(out, connect.Plugin{Class: "org.apache.kafka.connect.converters." + n.class, Type: connect.PluginConverter,
			New: func() any { return &NumberConverter{kind: n} }})
	}
	return out
}

// ByteArrayConverter passes bytes through with an optional BYTES schema.
type ByteArrayConverter struct{}

func (ByteArrayConverter) Configure(map[string]string, bool) error { return nil }

// ConfigDef implements connect.Configurable: ConverterConfig's only key (the converter's role).
func (ByteArrayConverter) ConfigDef() *connect.ConfigDef { return converterTypeDef() }

// converterTypeDef is the JVM's ConverterConfig (and NumberConverterConfig) definition.
func converterTypeDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "converter.type", Type: connect.ConfigString, Default: nil,
		Validator: connect.InIgnoreCase("key", "value", "header"), Importance: connect.Low, Doc: "How this converter will be used."})
}

func (ByteArrayConverter) ToConnectData(_ string, _ connect.Headers, value []byte) (connect.SchemaAndValue, error) {
	return connect.SchemaAndValue{Schema: connect.OptionalBytesSchema, Value: bytesOrNil(value)}, nil
}

func bytesOrNil(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

func (ByteArrayConverter) FromConnectData(_ string, _ connect.Headers, schema *connect.Schema, value any) ([]byte, error) {
	if schema != nil && schema.Type != connect.TypeBytes {
		return nil, connect.DataErrorf("Invalid schema type for ByteArrayConverter: %s", schema.Type)
	}
	if value == nil {
		return nil, nil
	}
	b, ok := value.([]byte)
	if !ok {
		return nil, connect.DataErrorf("ByteArrayConverter is not compatible with objects of type %s", javaClass(value))
	}
	return b, nil
}

func (c ByteArrayConverter) ToConnectHeader(topic, _ string, value []byte) (connect.SchemaAndValue, error) {
	return c.ToConnectData(topic, nil, value)
}

func (c ByteArrayConverter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return c.FromConnectData(topic, nil, schema, value)
}

type numberKind struct {
	class, typeName, deser string
	schema                 *connect.Schema
	size                   int
}

var numberKinds = []numberKind{
	{"BooleanConverter", "boolean", "BooleanDeserializer", connect.OptionalBoolSchema, 1},
	{"DoubleConverter", "double", "DoubleDeserializer", connect.OptionalFloat64Schema, 8},
	{"FloatConverter", "float", "FloatDeserializer", connect.OptionalFloat32Schema, 4},
	{"IntegerConverter", "integer", "IntegerDeserializer", connect.OptionalInt32Schema, 4},
	{"LongConverter", "long", "LongDeserializer", connect.OptionalInt64Schema, 8},
	{"ShortConverter", "short", "ShortDeserializer", connect.OptionalInt16Schema, 2},
}

// NumberConverter is the JVM's NumberConverter family (and BooleanConverter): Kafka's fixed-size
// big-endian serializers.
type NumberConverter struct{ kind numberKind }

// NewNumberConverter returns the converter for a JVM simple class name such as "LongConverter".
func NewNumberConverter(class string) (*NumberConverter, bool) {
	for _, k := range numberKinds {
		if k.class == class {
			return &NumberConverter{kind: k}, true
		}
	}
	return nil, false
}

func (c *NumberConverter) Configure(map[string]string, bool) error { return nil }

// ConfigDef implements connect.Configurable: NumberConverterConfig's only key (the converter's role).
func (c *NumberConverter) ConfigDef() *connect.ConfigDef { return converterTypeDef() }

func (c *NumberConverter) ToConnectData(_ string, _ connect.Headers, value []byte) (connect.SchemaAndValue, error) {
	k := c.kind
	if value == nil {
		return connect.SchemaAndValue{Schema: k.schema}, nil
	}
	if len(value) != k.size {
		msg := fmt.Sprintf("Size of data received by %s is not %d", k.deser, k.size)
		if k.size == 1 {
			msg = fmt.Sprintf("Size of data received by %s is not 1", k.deser)
		}
		return connect.SchemaAndValue{}, connect.DataErrorf("Failed to deserialize %s: %s", k.typeName, msg)
	}
	var v any
	switch k.typeName {
	case "boolean":
		if value[0] != 0 && value[0] != 1 {
			return connect.SchemaAndValue{}, connect.DataErrorf("Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: %d", int8(value[0]))
		}
		v = value[0] == 1
	case "double":
		v = math.Float64frombits(binary.BigEndian.Uint64(value))
	case "float":
		v = math.Float32frombits(binary.BigEndian.Uint32(value))
	case "integer":
		v = int32(binary.BigEndian.Uint32(value))
	case "long":
		v = int64(binary.BigEndian.Uint64(value))
	case "short":
		v = int16(binary.BigEndian.Uint16(value))
	}
	return connect.SchemaAndValue{Schema: k.schema, Value: v}, nil
}

func (c *NumberConverter) FromConnectData(_ string, _ connect.Headers, _ *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	k := c.kind
	bad := func() ([]byte, error) {
		return nil, connect.DataErrorf("Failed to serialize to %s (was %s): ", k.typeName, javaClass(value))
	}
	switch k.typeName {
	case "boolean":
		x, ok := value.(bool)
		if !ok {
			return bad()
		}
		if x {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case "double":
		x, ok := value.(float64)
		if !ok {
			return bad()
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(x)), nil
	case "float":
		x, ok := value.(float32)
		if !ok {
			return bad()
		}
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(x)), nil
	case "integer":
		x, ok := value.(int32)
		if !ok {
			return bad()
		}
		return binary.BigEndian.AppendUint32(nil, uint32(x)), nil
	case "long":
		x, ok := value.(int64)
		if !ok {
			return bad()
		}
		return binary.BigEndian.AppendUint64(nil, uint64(x)), nil
	default:
		x, ok := value.(int16)
		if !ok {
			return bad()
		}
		return binary.BigEndian.AppendUint16(nil, uint16(x)), nil
	}
}

func (c *NumberConverter) ToConnectHeader(topic, _ string, value []byte) (connect.SchemaAndValue, error) {
	return c.ToConnectData(topic, nil, value)
}

func (c *NumberConverter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return c.FromConnectData(topic, nil, schema, value)
}

func javaClass(v any) string {
	switch v.(type) {
	case string:
		return "class java.lang.String"
	case int8:
		return "class java.lang.Byte"
	case int16:
		return "class java.lang.Short"
	case int32:
		return "class java.lang.Integer"
	case int64:
		return "class java.lang.Long"
	case float32:
		return "class java.lang.Float"
	case float64:
		return "class java.lang.Double"
	case bool:
		return "class java.lang.Boolean"
	}
	return fmt.Sprintf("class %T", v)
}
