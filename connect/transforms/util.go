// Package transforms implements Kafka Connect's built-in single message transforms (SMTs) and predicates
// (org.apache.kafka.connect.transforms.*), Debezium's ExtractNewRecordState, and Chain, which builds a
// transformation chain from a connector configuration. Plugins lists every class under its JVM name.
package transforms

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
	"sync"

	"github.com/connectd/connectd/connect"
)

const kt = "org.apache.kafka.connect.transforms."

// replaceNullWithDefaultKey is KIP-1040's key, shared by several SMTs.
const replaceNullWithDefaultKey = "replace.null.with.default"

func rnwdKey() connect.ConfigKey {
	return connect.ConfigKey{Name: replaceNullWithDefaultKey, Type: connect.ConfigBoolean, Default: true, Importance: connect.Medium,
		Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."}
}

// side selects the record key or value, as the JVM's $Key / $Value subclasses.
type side bool

const (
	keySide   side = true
	valueSide side = false
)

func (s side) schema(r *connect.SinkRecord) *connect.Schema {
	if s == keySide {
		return r.KeySchema
	}
	return r.ValueSchema
}

func (s side) value(r *connect.SinkRecord) any {
	if s == keySide {
		return r.Key
	}
	return r.Value
}

func (s side) newRecord(r *connect.SinkRecord, sch *connect.Schema, v any) *connect.SinkRecord {
	if s == keySide {
		return r.WithKey(sch, v)
	}
	return r.WithValue(sch, v)
}

func (s side) suffix() string {
	if s == keySide {
		return "$Key"
	}
	return "$Value"
}

// javaClassName is what the JVM's value.getClass().getName() gives for a Connect value.
var javaClassName = connect.JavaClassName

func requireSchema(s *connect.Schema, purpose string) error {
	if s == nil {
		return connect.DataErrorf("Schema required for [%s]", purpose)
	}
	return nil
}

// requireMap accepts schemaless objects (map[string]any, or map[any]any with string keys).
func requireMap(v any, purpose string) (map[string]any, error) {
	switch m := v.(type) {
	case map[string]any:
		return m, nil
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			ks, ok := k.(string)
			if !ok {
				ks = fmt.Sprint(k)
			}
			out[ks] = x
		}
		return out, nil
	}
	return nil, connect.DataErrorf("Only Map objects supported in absence of schema for [%s], found: %s", purpose, javaClassName(v))
}

func requireMapOrNull(v any, purpose string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	return requireMap(v, purpose)
}

func requireStruct(v any, purpose string) (*connect.Struct, error) {
	s, ok := v.(*connect.Struct)
	if !ok || s == nil {
		return nil, connect.DataErrorf("Only Struct objects supported for [%s], found: %s", purpose, javaClassName(v))
	}
	return s, nil
}

func requireStructOrNull(v any, purpose string) (*connect.Struct, error) {
	if v == nil {
		return nil, nil
	}
	return requireStruct(v, purpose)
}

// copySchemaBasics copies name, version, doc and parameters of src onto b (SchemaUtil.copySchemaBasics).
func copySchemaBasics(src *connect.Schema, b *connect.SchemaBuilder) *connect.SchemaBuilder {
	if src.Name != "" {
		b.Name(src.Name)
	}
	if src.Version != nil {
		b.Version(*src.Version)
	}
	if src.Doc != "" {
		b.Doc(src.Doc)
	}
	for _, k := range sortedKeys(src.Parameters) {
		b.Parameter(k, src.Parameters[k])
	}
	return b
}

// newBuilderLike starts a builder of src's type (with its key/value schemas for MAP and ARRAY), without
// fields, names or flags: new SchemaBuilder(type).
func newBuilderOfType(src *connect.Schema) *connect.SchemaBuilder {
	switch src.Type {
	case connect.TypeArray:
		return connect.ArrayBuilder(src.ValueSchema())
	case connect.TypeMap:
		return connect.MapBuilder(src.KeySchema(), src.ValueSchema())
	}
	return connect.NewSchemaBuilder(src.Type)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// schemaCache is the JVM's SynchronizedCache<LRUCache<Schema,Schema>>, keyed by schema identity.
type schemaCache struct {
	mu sync.Mutex
	m  map[*connect.Schema]*connect.Schema
}

func (c *schemaCache) get(s *connect.Schema) *connect.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[s]
}

func (c *schemaCache) put(k, v *connect.Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 256 {
		c.m = map[*connect.Schema]*connect.Schema{}
	}
	c.m[k] = v
}

// structGet returns a field value with or without its default (replace.null.with.default).
func structGet(s *connect.Struct, name string, withDefault bool) any {
	if withDefault {
		return s.Get(name)
	}
	return s.GetWithoutDefault(name)
}

// copyMap is new HashMap<>(m).
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// nonEmptyList is the JVM's NonEmptyListValidator.
var nonEmptyList = connect.ValidatorFunc{Desc: "non-empty list", Fn: func(name string, v any) error {
	if v == nil {
		return &connect.ConfigError{Name: name, Value: nil, Message: "Empty list"}
	}
	if l, _ := v.([]string); len(l) == 0 {
		return &connect.ConfigError{Name: name, Value: "[]", Message: "Empty list"}
	}
	return nil
}}

// nonNullNonEmptyList is nonEmptyList that rejects null as the JVM's ValidList does.
var nonNullNonEmptyList = connect.ValidatorFunc{Desc: "non-empty list", Fn: func(name string, v any) error {
	if v == nil {
		return &connect.ConfigError{Message: "Configuration '" + name + "' values must not be null."}
	}
	return nonEmptyList.Fn(name, v)
}}

// javaList renders a list as Java's List.toString.
func javaList(l []string) string { return "[" + strings.Join(l, ", ") + "]" }

// Java numeric narrowing (Number.byteValue() etc.).

// f2l is Java's (long) cast of a double.
var f2l = connect.JavaDoubleToLong

func f2i(f float64) int32 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// numberLong is Number.longValue for integral values; ok=false if v is not a Number.
func numberLong(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float32:
		return f2l(float64(x)), true
	case float64:
		return f2l(x), true
	case connect.Decimal:
		q := new(big.Int).Quo(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(x.Scale))), nil))
		if x.Scale < 0 {
			q = new(big.Int).Mul(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-x.Scale)), nil))
		}
		// BigInteger.longValue keeps the low 64 bits.
		return int64(new(big.Int).And(q, new(big.Int).SetUint64(math.MaxUint64)).Uint64()), true
	}
	return 0, false
}

func abs32(i int32) int32 {
	if i < 0 {
		return -i
	}
	return i
}

// numberInt is Number.intValue (floating values saturate to int32 first, as Java's (int) cast).
func numberInt(v any) (int32, bool) {
	switch x := v.(type) {
	case float32:
		return f2i(float64(x)), true
	case float64:
		return f2i(x), true
	}
	l, ok := numberLong(v)
	return int32(l), ok
}

func numberDouble(v any) (float64, bool) {
	switch x := v.(type) {
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case connect.Decimal:
		return x.Float64(), true
	}
	return 0, false
}

func fmtAny(v any) string { return fmt.Sprint(v) }
