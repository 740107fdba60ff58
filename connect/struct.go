package connect

import (
	"bytes"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"time"
)

// Struct is a STRUCT value: a schema and one value per field.
type Struct struct {
	schema *Schema
	values []any
}

// NewStruct creates an empty struct of a STRUCT schema.
func NewStruct(s *Schema) *Struct {
	if s == nil || s.Type != TypeStruct {
		panic("connect: NewStruct needs a STRUCT schema")
	}
	return &Struct{schema: s, values: make([]any, len(s.fields))}
}

// Schema is the struct's schema.
func (s *Struct) Schema() *Schema { return s.schema }

// Put validates v against the field's schema and sets it.
func (s *Struct) Put(name string, v any) error {
	f, ok := s.schema.Field(name)
	if !ok {
		return DataErrorf("%s is not a valid field name", name)
	}
	if err := ValidateValue(f.Schema, v); err != nil {
		return DataErrorf("invalid value for field %q: %v", name, err)
	}
	s.values[f.Index] = v
	return nil
}

// MustPut is Put for values known to be valid; it panics otherwise.
func (s *Struct) MustPut(name string, v any) *Struct {
	if err := s.Put(name, v); err != nil {
		panic(err)
	}
	return s
}

// PutIndex sets a field by index without validation (hot paths that built the value from the schema).
func (s *Struct) PutIndex(i int, v any) { s.values[i] = v }

// Get returns the field value, or the field's default when the value is null (as the JVM does).
func (s *Struct) Get(name string) any {
	f, ok := s.schema.Field(name)
	if !ok {
		return nil
	}
	return s.GetIndex(f.Index)
}

// GetIndex is Get by field index.
func (s *Struct) GetIndex(i int) any {
	v := s.values[i]
	if v == nil {
		return s.schema.fields[i].Schema.Default
	}
	return v
}

// GetWithoutDefault returns the raw field value (nil when unset).
func (s *Struct) GetWithoutDefault(name string) any {
	f, ok := s.schema.Field(name)
	if !ok {
		return nil
	}
	return s.values[f.Index]
}

// Has reports whether name is a field of the schema.
func (s *Struct) Has(name string) bool { _, ok := s.schema.Field(name); return ok }

// Validate checks every field against its schema (required fields set, types right).
func (s *Struct) Validate() error {
	for i, f := range s.schema.fields {
		if err := ValidateValue(f.Schema, s.GetIndex(i)); err != nil {
			return DataErrorf("invalid value for field %q: %v", f.Name, err)
		}
	}
	return nil
}

// Equal compares schema and values.
func (s *Struct) Equal(o *Struct) bool {
	if s == nil || o == nil {
		return s == o
	}
	if !s.schema.Equal(o.schema) || len(s.values) != len(o.values) {
		return false
	}
	for i := range s.values {
		if !ValuesEqual(s.values[i], o.values[i]) {
			return false
		}
	}
	return true
}

func (s *Struct) String() string {
	var b strings.Builder
	b.WriteString("Struct{")
	first := true
	for i, f := range s.schema.fields {
		if s.values[i] == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%s=%v", f.Name, s.values[i])
	}
	b.WriteByte('}')
	return b.String()
}

// ValidateValue checks that v is a valid value for schema s (nil schema accepts anything).
func ValidateValue(s *Schema, v any) error {
	if s == nil {
		return nil
	}
	if v == nil {
		if s.Optional || s.Default != nil {
			return nil
		}
		return DataErrorf("invalid value: null used for required field, schema type: %s", s.Type)
	}
	switch s.Name {
	case DecimalName:
		if _, ok := v.(Decimal); ok {
			return nil
		}
		return DataErrorf("invalid Java object for schema with type %s: %T for logical type %s", s.Type, v, s.Name)
	case DateName, TimeName, TimestampName:
		if _, ok := v.(time.Time); ok {
			return nil
		}
		return DataErrorf("invalid Java object for schema with type %s: %T for logical type %s", s.Type, v, s.Name)
	}
	ok := false
	switch s.Type {
	case TypeInt8:
		_, ok = v.(int8)
	case TypeInt16:
		_, ok = v.(int16)
	case TypeInt32:
		_, ok = v.(int32)
	case TypeInt64:
		_, ok = v.(int64)
	case TypeFloat32:
		_, ok = v.(float32)
	case TypeFloat64:
		_, ok = v.(float64)
	case TypeBoolean:
		_, ok = v.(bool)
	case TypeString:
		_, ok = v.(string)
	case TypeBytes:
		_, ok = v.([]byte)
	case TypeArray:
		arr, isArr := v.([]any)
		if !isArr {
			break
		}
		for _, e := range arr {
			if err := ValidateValue(s.valSchema, e); err != nil {
				return err
			}
		}
		return nil
	case TypeMap:
		switch m := v.(type) {
		case map[any]any:
			return validateMap(s, m)
		case map[string]any:
			return validateMap(s, m)
		}
	case TypeStruct:
		st, isStruct := v.(*Struct)
		if !isStruct {
			break
		}
		if !st.schema.Equal(s) {
			return DataErrorf("struct schemas do not match")
		}
		return st.Validate()
	}
	if !ok {
		return DataErrorf("invalid Java object for schema with type %s: %T", s.Type, v)
	}
	return nil
}

func validateMap[K comparable](s *Schema, m map[K]any) error {
	for k, e := range m {
		if err := ValidateValue(s.keySchema, k); err != nil {
			return err
		}
		if err := ValidateValue(s.valSchema, e); err != nil {
			return err
		}
	}
	return nil
}

// ValuesEqual compares Connect values deeply ([]byte by content, Decimal by value and scale, time by instant).
func ValuesEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case Decimal:
		y, ok := b.(Decimal)
		return ok && x.Scale == y.Scale && cmpBig(x.Unscaled, y.Unscaled)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case *Struct:
		y, ok := b.(*Struct)
		return ok && x.Equal(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !ValuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && mapValuesEqual(x, y)
	case map[any]any:
		y, ok := b.(map[any]any)
		return ok && mapValuesEqual(x, y)
	}
	return reflect.DeepEqual(a, b)
}

func mapValuesEqual[K comparable](x, y map[K]any) bool {
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		w, ok := y[k]
		if !ok || !ValuesEqual(v, w) {
			return false
		}
	}
	return true
}

func cmpBig(a, b *big.Int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Cmp(b) == 0
}

// SchemaAndValue pairs a value with its (possibly nil) schema.
type SchemaAndValue struct {
	Schema *Schema
	Value  any
}

// NullSchemaAndValue is the result of converting a null.
var NullSchemaAndValue = SchemaAndValue{}
