package connect

import (
	"fmt"
	"sort"
	"strings"
)

// Type is a Connect schema type; String gives the JVM enum name (INT8, STRUCT, ...).
type Type int8

const (
	TypeInt8 Type = iota + 1
	TypeInt16
	TypeInt32
	TypeInt64
	TypeFloat32
	TypeFloat64
	TypeBoolean
	TypeString
	TypeBytes
	TypeArray
	TypeMap
	TypeStruct
)

var typeNames = [...]string{"", "INT8", "INT16", "INT32", "INT64", "FLOAT32", "FLOAT64", "BOOLEAN", "STRING", "BYTES", "ARRAY", "MAP", "STRUCT"}

func (t Type) String() string {
	if t > 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", int8(t))
}

// Lower is the lower-case name used by the JSON converter envelope ("int32", "struct", ...).
func (t Type) Lower() string { return strings.ToLower(t.String()) }

// IsPrimitive reports whether t is neither ARRAY, MAP nor STRUCT.
func (t Type) IsPrimitive() bool { return t >= TypeInt8 && t <= TypeBytes }

// ParseType accepts the JVM enum name in any case ("int32", "INT32").
func ParseType(s string) (Type, error) {
	u := strings.ToUpper(s)
	for i, n := range typeNames {
		if i > 0 && n == u {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("unknown schema type %q", s)
}

// Field is one field of a STRUCT schema.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

// Schema describes a Connect value. Treat a Schema as immutable once built (share it freely across
// records and goroutines); build new ones with SchemaBuilder.
type Schema struct {
	Type       Type
	Optional   bool
	Default    any
	Name       string
	Version    *int32
	Doc        string
	Parameters map[string]string

	fields     []Field
	fieldIndex map[string]int
	keySchema  *Schema
	valSchema  *Schema
}

// Fields returns the fields of a STRUCT schema (nil otherwise). The slice must not be modified.
func (s *Schema) Fields() []Field { return s.fields }

// Field returns the named field of a STRUCT schema.
func (s *Schema) Field(name string) (Field, bool) {
	if i, ok := s.fieldIndex[name]; ok {
		return s.fields[i], true
	}
	return Field{}, false
}

// KeySchema is the key schema of a MAP.
func (s *Schema) KeySchema() *Schema { return s.keySchema }

// ValueSchema is the value schema of a MAP or the element schema of an ARRAY.
func (s *Schema) ValueSchema() *Schema { return s.valSchema }

// IsOptional is nil-safe: a nil (absent) schema accepts anything including null.
func (s *Schema) IsOptional() bool { return s == nil || s.Optional }

// String renders the schema roughly as the JVM's ConnectSchema.toString does.
func (s *Schema) String() string {
	if s == nil {
		return "null"
	}
	if s.Name != "" {
		return fmt.Sprintf("Schema{%s:%s}", s.Name, s.Type)
	}
	return fmt.Sprintf("Schema{%s}", s.Type)
}

// Equal compares two schemas structurally (type, optionality, default, name, version, doc, parameters,
// fields, key and value schemas), as the JVM's ConnectSchema.equals does.
func (s *Schema) Equal(o *Schema) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil {
		return false
	}
	if s.Type != o.Type || s.Optional != o.Optional || s.Name != o.Name || s.Doc != o.Doc {
		return false
	}
	if (s.Version == nil) != (o.Version == nil) || (s.Version != nil && *s.Version != *o.Version) {
		return false
	}
	if !stringMapsEqual(s.Parameters, o.Parameters) || !ValuesEqual(s.Default, o.Default) {
		return false
	}
	if len(s.fields) != len(o.fields) {
		return false
	}
	for i := range s.fields {
		if s.fields[i].Name != o.fields[i].Name || !s.fields[i].Schema.Equal(o.fields[i].Schema) {
			return false
		}
	}
	return s.keySchema.Equal(o.keySchema) && s.valSchema.Equal(o.valSchema)
}

func stringMapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// SchemaBuilder builds a Schema fluently, like the JVM's SchemaBuilder.
type SchemaBuilder struct {
	s   Schema
	err error
}

// NewSchemaBuilder starts a schema of the given type.
func NewSchemaBuilder(t Type) *SchemaBuilder { return &SchemaBuilder{s: Schema{Type: t}} }

func Int8Builder() *SchemaBuilder    { return NewSchemaBuilder(TypeInt8) }
func Int16Builder() *SchemaBuilder   { return NewSchemaBuilder(TypeInt16) }
func Int32Builder() *SchemaBuilder   { return NewSchemaBuilder(TypeInt32) }
func Int64Builder() *SchemaBuilder   { return NewSchemaBuilder(TypeInt64) }
func Float32Builder() *SchemaBuilder { return NewSchemaBuilder(TypeFloat32) }
func Float64Builder() *SchemaBuilder { return NewSchemaBuilder(TypeFloat64) }
func BoolBuilder() *SchemaBuilder    { return NewSchemaBuilder(TypeBoolean) }
func StringBuilder() *SchemaBuilder  { return NewSchemaBuilder(TypeString) }
func BytesBuilder() *SchemaBuilder   { return NewSchemaBuilder(TypeBytes) }
func StructBuilder() *SchemaBuilder  { return NewSchemaBuilder(TypeStruct) }

// ArrayBuilder starts an ARRAY of elem.
func ArrayBuilder(elem *Schema) *SchemaBuilder {
	b := NewSchemaBuilder(TypeArray)
	b.s.valSchema = elem
	return b
}

// MapBuilder starts a MAP from key to value.
func MapBuilder(key, value *Schema) *SchemaBuilder {
	b := NewSchemaBuilder(TypeMap)
	b.s.keySchema, b.s.valSchema = key, value
	return b
}

// BuilderFrom starts a builder holding a copy of s (fields, parameters), to derive a changed schema.
func BuilderFrom(s *Schema) *SchemaBuilder {
	b := &SchemaBuilder{s: *s}
	b.s.fields = nil
	b.s.fieldIndex = nil
	if s.Parameters != nil {
		b.s.Parameters = make(map[string]string, len(s.Parameters))
		for k, v := range s.Parameters {
			b.s.Parameters[k] = v
		}
	}
	for _, f := range s.fields {
		b.Field(f.Name, f.Schema)
	}
	return b
}

func (b *SchemaBuilder) Optional() *SchemaBuilder { b.s.Optional = true; return b }
func (b *SchemaBuilder) Required() *SchemaBuilder { b.s.Optional = false; return b }
func (b *SchemaBuilder) Name(n string) *SchemaBuilder {
	b.s.Name = n
	return b
}
func (b *SchemaBuilder) Doc(d string) *SchemaBuilder { b.s.Doc = d; return b }
func (b *SchemaBuilder) Version(v int32) *SchemaBuilder {
	b.s.Version = &v
	return b
}

// DefaultValue sets the default; it is validated against the schema at Build.
func (b *SchemaBuilder) DefaultValue(v any) *SchemaBuilder { b.s.Default = v; return b }

// Parameter adds one schema parameter.
func (b *SchemaBuilder) Parameter(k, v string) *SchemaBuilder {
	if b.s.Parameters == nil {
		b.s.Parameters = map[string]string{}
	}
	b.s.Parameters[k] = v
	return b
}

// Field appends a STRUCT field; a duplicate name is an error reported by Build.
func (b *SchemaBuilder) Field(name string, s *Schema) *SchemaBuilder {
	if b.s.Type != TypeStruct {
		b.err = fmt.Errorf("cannot create fields on type %s", b.s.Type)
		return b
	}
	if s == nil {
		b.err = fmt.Errorf("field schema for %q cannot be null", name)
		return b
	}
	if b.s.fieldIndex == nil {
		b.s.fieldIndex = map[string]int{}
	}
	if _, dup := b.s.fieldIndex[name]; dup {
		b.err = fmt.Errorf("cannot create field because of field name duplication %s", name)
		return b
	}
	b.s.fieldIndex[name] = len(b.s.fields)
	b.s.fields = append(b.s.fields, Field{Name: name, Index: len(b.s.fields), Schema: s})
	return b
}

// Build returns the schema or the first error met while building it.
func (b *SchemaBuilder) Build() (*Schema, error) {
	if b.err != nil {
		return nil, b.err
	}
	s := b.s
	if s.Type == TypeStruct && s.fieldIndex == nil {
		s.fieldIndex = map[string]int{}
	}
	if s.Default != nil {
		if err := ValidateValue(&s, s.Default); err != nil {
			return nil, fmt.Errorf("invalid default value: %w", err)
		}
	}
	return &s, nil
}

// MustBuild is Build for schemas known to be valid (package-level vars, tests).
func (b *SchemaBuilder) MustBuild() *Schema {
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	return s
}

// Predefined primitive schemas, as in the JVM's Schema constants.
var (
	Int8Schema            = &Schema{Type: TypeInt8}
	Int16Schema           = &Schema{Type: TypeInt16}
	Int32Schema           = &Schema{Type: TypeInt32}
	Int64Schema           = &Schema{Type: TypeInt64}
	Float32Schema         = &Schema{Type: TypeFloat32}
	Float64Schema         = &Schema{Type: TypeFloat64}
	BoolSchema            = &Schema{Type: TypeBoolean}
	StringSchema          = &Schema{Type: TypeString}
	BytesSchema           = &Schema{Type: TypeBytes}
	OptionalInt8Schema    = &Schema{Type: TypeInt8, Optional: true}
	OptionalInt16Schema   = &Schema{Type: TypeInt16, Optional: true}
	OptionalInt32Schema   = &Schema{Type: TypeInt32, Optional: true}
	OptionalInt64Schema   = &Schema{Type: TypeInt64, Optional: true}
	OptionalFloat32Schema = &Schema{Type: TypeFloat32, Optional: true}
	OptionalFloat64Schema = &Schema{Type: TypeFloat64, Optional: true}
	OptionalBoolSchema    = &Schema{Type: TypeBoolean, Optional: true}
	OptionalStringSchema  = &Schema{Type: TypeString, Optional: true}
	OptionalBytesSchema   = &Schema{Type: TypeBytes, Optional: true}
)

// PrimitiveSchema returns the shared schema for a primitive type and optionality.
func PrimitiveSchema(t Type, optional bool) *Schema {
	if !t.IsPrimitive() {
		return nil
	}
	if optional {
		return []*Schema{nil, OptionalInt8Schema, OptionalInt16Schema, OptionalInt32Schema, OptionalInt64Schema, OptionalFloat32Schema, OptionalFloat64Schema, OptionalBoolSchema, OptionalStringSchema, OptionalBytesSchema}[t]
	}
	return []*Schema{nil, Int8Schema, Int16Schema, Int32Schema, Int64Schema, Float32Schema, Float64Schema, BoolSchema, StringSchema, BytesSchema}[t]
}

// sortedKeys is used wherever output must be deterministic.
func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// InferType is the schema type of a schemaless value (the JVM's ConnectSchema.schemaType of its class); 0
// when the Go type is not a Connect value type.
func InferType(v any) Type {
	switch v.(type) {
	case int8:
		return TypeInt8
	case int16:
		return TypeInt16
	case int32:
		return TypeInt32
	case int64:
		return TypeInt64
	case float32:
		return TypeFloat32
	case float64:
		return TypeFloat64
	case bool:
		return TypeBoolean
	case string:
		return TypeString
	case []byte:
		return TypeBytes
	case []any:
		return TypeArray
	case map[string]any, map[any]any:
		return TypeMap
	case *Struct:
		return TypeStruct
	}
	return 0
}
