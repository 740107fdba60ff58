// Package avrotype is the vocabulary of Avro schemas that the Avro converter and the Iceberg sink's Avro
// event codec share: the schema types, their names, and full names split into namespace and simple name.
package avrotype

import "strings"

// Kind is an Avro schema type.
type Kind uint8

const (
	Null Kind = iota
	Boolean
	Int
	Long
	Float
	Double
	Bytes
	String
	Record
	Enum
	Array
	Map
	Union
	Fixed
)

var names = [...]string{"null", "boolean", "int", "long", "float", "double", "bytes", "string", "record", "enum",
	"array", "map", "union", "fixed"}

// String is the type's name in a schema ("long", "record", ...).
func (k Kind) String() string {
	if int(k) < len(names) {
		return names[k]
	}
	return "invalid"
}

// Named reports whether schemas of kind k have a name (record, enum, fixed).
func (k Kind) Named() bool { return k == Record || k == Enum || k == Fixed }

// Primitive is the primitive type of a type name ("null" ... "string"); ok is false for any other name.
func Primitive(name string) (k Kind, ok bool) {
	switch name {
	case "null":
		return Null, true
	case "boolean":
		return Boolean, true
	case "int":
		return Int, true
	case "long":
		return Long, true
	case "float":
		return Float, true
	case "double":
		return Double, true
	case "bytes":
		return Bytes, true
	case "string":
		return String, true
	}
	return 0, false
}

// SplitName splits a full name into its namespace ("" for Avro's null namespace) and simple name.
func SplitName(full string) (namespace, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// FullName is name in namespace ns: a name with a dot is already full.
func FullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}
