// Package json is org.apache.kafka.connect.json.JsonConverter: Connect data to and from JSON, with the
// {"schema":...,"payload":...} envelope when schemas.enable is true.
//
// Known differences from the JVM (see also testdata/converters/README.md):
//   - Schema parameters and map entries are written in sorted key order (Go maps keep no insertion order);
//     the JVM writes a LinkedHashMap's insertion order and a HashMap's hash order.
//   - Syntax error texts (the cause under "Converting byte[] to Kafka Connect data failed due to
//     serialization error: ") are ours, not Jackson's.
//   - Double.toString is the shortest representation (JDK 19+); JDK 17 prints a few values with extra digits.
//   - Decoded schema'd maps are map[any]any; []byte keys become string and Decimal keys their string form
//     (Go map keys must be comparable).
package jsonconv

import (
	"bytes"
	"container/list"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
)

const (
	SchemasEnableConfig          = "schemas.enable"
	SchemasCacheSizeConfig       = "schemas.cache.size"
	DecimalFormatConfig          = "decimal.format"
	ReplaceNullWithDefaultConfig = "replace.null.with.default"
	ConverterTypeConfig          = "converter.type"
	ClassName                    = "org.apache.kafka.connect.json.JsonConverter"
	envelopeError                = "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."
	serializationErrorPrefix     = "Converting byte[] to Kafka Connect data failed due to serialization error: "
)

// ConfigDef is JsonConverterConfig's definition.
func ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: ConverterTypeConfig, Type: connect.ConfigString, Default: nil,
			Validator: connect.InIgnoreCase("key", "value", "header"), Importance: connect.Low,
			Doc: "How this converter will be used."}).
		Define(connect.ConfigKey{Name: SchemasEnableConfig, Type: connect.ConfigBoolean, Default: true, Importance: connect.High,
			Doc: "Include schemas within each of the serialized values and keys.", Group: "Schemas", OrderInGroup: 0,
			Width: connect.WidthMedium, DisplayName: "Enable Schemas"}).
		Define(connect.ConfigKey{Name: SchemasCacheSizeConfig, Type: connect.ConfigInt, Default: 1000, Importance: connect.High,
			Doc: "The maximum number of schemas that can be cached in this converter instance.", Group: "Schemas", OrderInGroup: 1,
			Width: connect.WidthMedium, DisplayName: "Schema Cache Size"}).
		Define(connect.ConfigKey{Name: DecimalFormatConfig, Type: connect.ConfigString, Default: "BASE64",
			Validator: connect.InIgnoreCase("NUMERIC", "BASE64") /* the JVM lists them in this order */, Importance: connect.Low,
			Doc:   "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
			Group: "Serialization", OrderInGroup: 0, Width: connect.WidthMedium, DisplayName: "Decimal Format"}).
		Define(connect.ConfigKey{Name: ReplaceNullWithDefaultConfig, Type: connect.ConfigBoolean, Default: true, Importance: connect.Low,
			Doc:   "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
			Group: "Serialization", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Replace null with default"})
}

// ConfigDef implements connect.Configurable (the converter's keys in a connector's validate answer).
func (*Converter) ConfigDef() *connect.ConfigDef { return ConfigDef() }

// Plugins lists the converter, for a runtime's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{Class: ClassName, Type: connect.PluginConverter, New: func() any { return New() }}}
}

// Converter is the JsonConverter; it is also a HeaderConverter. Safe for concurrent use once configured.
type Converter struct {
	schemasEnabled bool
	decimalNumeric bool
	replaceNull    bool
	toCache        *lru[string, *connect.Schema]
	fromCache      *lru[*connect.Schema, []byte]
	// last is the schema of the previous record with its JSON text: a stream's records mostly
	// repeat one schema, and comparing bytes is much cheaper than scanning the schema to
	// find its end and copying it into a cache key.
	last atomic.Pointer[rawSchema]
	keys keyTable
}

type rawSchema struct {
	raw    []byte
	schema *connect.Schema
}

// New returns a converter with the default configuration (schemas enabled, BASE64 decimals).
func New() *Converter {
	c := &Converter{}
	_ = c.configure(map[string]string{})
	return c
}

func (c *Converter) configure(props map[string]string) error {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	c.schemasEnabled = cfg.Bool(SchemasEnableConfig)
	c.decimalNumeric = strings.EqualFold(cfg.String(DecimalFormatConfig), "NUMERIC")
	c.replaceNull = cfg.Bool(ReplaceNullWithDefaultConfig)
	size := cfg.Int(SchemasCacheSizeConfig)
	c.toCache = newLRU[string, *connect.Schema](size)
	c.fromCache = newLRU[*connect.Schema, []byte](size)
	return nil
}

// Configure implements connect.Converter.
func (c *Converter) Configure(configs map[string]string, isKey bool) error {
	m := make(map[string]string, len(configs)+1)
	for k, v := range configs {
		m[k] = v
	}
	m[ConverterTypeConfig] = "value"
	if isKey {
		m[ConverterTypeConfig] = "key"
	}
	return c.configure(m)
}

// ToConnectData implements connect.Converter.
func (c *Converter) ToConnectData(_ string, _ connect.Headers, value []byte) (connect.SchemaAndValue, error) {
	if value == nil {
		return connect.NullSchemaAndValue, nil
	}
	if schema, pi, ok := c.sameSchemaEnvelope(value); ok {
		v, err := c.convert(value, schema, pi)
		if err != nil {
			return connect.SchemaAndValue{}, err
		}
		return connect.SchemaAndValue{Schema: schema, Value: v}, nil
	}
	start, _, err := validate(value)
	if err != nil {
		return connect.SchemaAndValue{}, &connect.DataError{Err: &causeError{msg: serializationErrorPrefix, cause: err}}
	}
	if !c.schemasEnabled {
		v, err := convertSchemaless(value, start, &c.keys)
		if err != nil {
			return connect.SchemaAndValue{}, err
		}
		return connect.SchemaAndValue{Value: v}, nil
	}
	if start < 0 || value[start] != '{' {
		return connect.SchemaAndValue{}, dataErr(envelopeError)
	}
	si, pi := -1, -1
	ok := true
	objectFields(value, start, func(k []byte, v int) bool {
		switch string(k) {
		case "schema":
			si = v
		case "payload":
			pi = v
		default:
			ok = false
			return false
		}
		return true
	})
	if !ok || si < 0 || pi < 0 {
		return connect.SchemaAndValue{}, dataErr(envelopeError)
	}
	var schema *connect.Schema
	if !isNull(value, si) {
		raw := value[si:skip(value, si)]
		var hit bool
		if schema, hit = c.toCache.get(string(raw)); !hit {
			if schema, err = c.asConnectSchema(value, si); err != nil {
				return connect.SchemaAndValue{}, err
			}
			c.toCache.put(string(raw), schema)
		}
		if c.toCache.max > 0 && raw[0] == '{' {
			c.last.Store(&rawSchema{raw: bytes.Clone(raw), schema: schema})
		}
	}
	v, err := c.convert(value, schema, pi)
	if err != nil {
		return connect.SchemaAndValue{}, err
	}
	return connect.SchemaAndValue{Schema: schema, Value: v}, nil
}

// SchemalessJSONObject implements jsonvalue.Converter: a JSON object that ToConnectData turns
// into a map without error (a schemaless converter, a valid document whose first value is an object).
// Its members are listed as the check goes, so that a sink reads the object without finding them again.
func (c *Converter) SchemalessJSONObject(value []byte, members []jsonvalue.Member) ([]jsonvalue.Member, bool) {
	if c.schemasEnabled || value == nil {
		return members, false
	}
	i := skipWS(value, 0)
	if i == len(value) || value[i] != '{' {
		return members, false
	}
	// the whole document as validate checks it: after an object, trailing bytes are not looked at
	n := len(members)
	out, _, err := validObject(value, i, 0, members, len(value) <= jsonvalue.MaxListedBytes)
	if err != nil {
		return out[:n], false
	}
	return out, true
}

// sameSchemaEnvelope recognises {"schema":S,"payload":P} where S is byte for byte the schema of
// the previous record (the layout JsonConverter writes): then only P is validated and scanned,
// instead of validating the whole document, scanning S to find its end and copying it into a
// cache key. Anything else (other spacing, another schema, bad JSON) takes the general path,
// which also produces the JVM's error messages.
func (c *Converter) sameSchemaEnvelope(value []byte) (*connect.Schema, int, bool) {
	l := c.last.Load()
	if l == nil || !c.schemasEnabled {
		return nil, 0, false
	}
	const pre, mid = `{"schema":`, `,"payload":`
	i := skipWS(value, 0)
	rest := value[i:]
	if !bytes.HasPrefix(rest, []byte(pre)) || !bytes.HasPrefix(rest[len(pre):], l.raw) ||
		!bytes.HasPrefix(rest[len(pre)+len(l.raw):], []byte(mid)) {
		return nil, 0, false
	}
	pi := i + len(pre) + len(l.raw) + len(mid)
	e, err := validValue(value, pi, 1)
	if err != nil {
		return nil, 0, false
	}
	if e = skipWS(value, e); e >= len(value) || value[e] != '}' {
		return nil, 0, false
	}
	return l.schema, pi, true
}

// FromConnectData implements connect.Converter.
func (c *Converter) FromConnectData(_ string, _ connect.Headers, schema *connect.Schema, value any) ([]byte, error) {
	if schema == nil && value == nil {
		return nil, nil
	}
	out := make([]byte, 0, 128)
	var err error
	if c.schemasEnabled {
		out = append(out, `{"schema":`...)
		if out, err = c.appendSchemaOrNull(out, schema); err != nil {
			return nil, err
		}
		out = append(out, `,"payload":`...)
		if out, err = c.appendValue(out, schema, value); err != nil {
			return nil, err
		}
		return append(out, '}'), nil
	}
	return c.appendValue(out, schema, value)
}

// Configure as a header converter (connect.HeaderConverter has no isKey).
type headerConverter struct{ *Converter }

// AsHeaderConverter returns the converter in its HeaderConverter role.
func (c *Converter) AsHeaderConverter() connect.HeaderConverter { return headerConverter{c} }

func (h headerConverter) Configure(configs map[string]string) error {
	m := make(map[string]string, len(configs)+1)
	for k, v := range configs {
		m[k] = v
	}
	if _, ok := m[ConverterTypeConfig]; !ok {
		m[ConverterTypeConfig] = "header"
	}
	return h.configure(m)
}

// ToConnectHeader implements connect.HeaderConverter.
func (c *Converter) ToConnectHeader(topic, _ string, value []byte) (connect.SchemaAndValue, error) {
	return c.ToConnectData(topic, nil, value)
}

// FromConnectHeader implements connect.HeaderConverter.
func (c *Converter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return c.FromConnectData(topic, nil, schema, value)
}

// ---- a small synchronized LRU (the JVM's SynchronizedCache(LRUCache)) ----------------------------------

type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	k K
	v V
}

func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{max: max, ll: list.New(), items: map[K]*list.Element{}}
}

func (l *lru[K, V]) get(k K) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.items[k]; ok {
		l.ll.MoveToFront(e)
		return e.Value.(*lruEntry[K, V]).v, true
	}
	var zero V
	return zero, false
}

func (l *lru[K, V]) put(k K, v V) {
	if l.max <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.items[k]; ok {
		e.Value.(*lruEntry[K, V]).v = v
		l.ll.MoveToFront(e)
		return
	}
	l.items[k] = l.ll.PushFront(&lruEntry[K, V]{k, v})
	for l.ll.Len() > l.max {
		last := l.ll.Back()
		l.ll.Remove(last)
		delete(l.items, last.Value.(*lruEntry[K, V]).k)
	}
}
