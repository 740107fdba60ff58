package transforms

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// jvmError is an exception of a named JVM class.
type jvmError struct{ class, msg string }

func (e *jvmError) Error() string     { return e.msg }
func (e *jvmError) ClassName() string { return e.class }

// errEmptyFieldName is SchemaBuilder.field's check (null or empty names).
var errEmptyFieldName = &jvmError{"org.apache.kafka.connect.errors.SchemaBuilderException", "fieldName cannot be null."}

func npe(msg string) error { return &jvmError{"java.lang.NullPointerException", msg} }

// javaClassOf is the JVM's value.getClass().getName().
var javaClassOf = connect.JavaClassName

func requireMap(v any, purpose string) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	if m, ok := v.(map[any]any); ok {
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[fmt.Sprint(k)] = e
		}
		return out, nil
	}
	return nil, connect.DataErrorf("Only Map objects supported in absence of schema for [%s], found: %s", purpose, javaClassOf(v))
}

func requireStruct(v any, purpose string) (*connect.Struct, error) {
	if s, ok := v.(*connect.Struct); ok {
		return s, nil
	}
	return nil, connect.DataErrorf("Only Struct objects supported for [%s], found: %s", purpose, javaClassOf(v))
}

func runtimeErr(msg string) error { return &jvmError{"java.lang.RuntimeException", msg} }
