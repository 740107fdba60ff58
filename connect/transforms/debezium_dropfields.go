package transforms

import (
	"errors"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/values"
)

// The drop.fields.* options of Debezium's ExtractNewRecordState (debezium-core 3.4.3): a header, named by
// drop.fields.header.name, carries a list of field names (e.g. the header.changed.name / header.unchanged.name
// list header of Debezium's ExtractChangedRecordState) that are removed from the unwrapped value, and with
// drop.fields.from.key from the key too. With drop.fields.keep.schema.compatible (default true) only fields whose schema is optional are
// removed, so the schemas stay compatible; with false every listed field is excluded, whatever its
// optionality. The removal itself is Kafka's ReplaceField with exclude=<the names joined by ','>.

const (
	dropFieldsHeaderKey          = "drop.fields.header.name"
	dropFieldsFromKeyKey         = "drop.fields.from.key"
	dropFieldsKeepCompatibleKey  = "drop.fields.keep.schema.compatible"
	debeziumUnableToValidateConf = "Unable to validate config."
)

// errUnableToValidate is the ConnectException debezium-core throws from configure() when a field of the
// transformation fails io.debezium.config.Field validation.
var errUnableToValidate = errors.New(debeziumUnableToValidateConf)

// validateDebeziumBoolean is io.debezium.config.Field.isBoolean: an absent value passes, a present one must be
// 'true' or 'false' ignoring case and surrounding blanks.
func validateDebeziumBoolean(props map[string]string, key string) error {
	v, ok := props[key]
	if !ok {
		return nil
	}
	v = values.JavaTrim(v)
	if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") {
		return nil
	}
	return errUnableToValidate
}

// javaCastError is the JVM's ClassCastException.
type javaCastError struct{ msg string }

func (e *javaCastError) Error() string     { return e.msg }
func (e *javaCastError) ClassName() string { return "java.lang.ClassCastException" }

func classCastToList(v any) error {
	from := javaClassName(v)
	if strings.HasPrefix(from, "java.") || strings.HasPrefix(from, "[") {
		return &javaCastError{msg: "class " + from + " cannot be cast to class java.util.List (" + from +
			" and java.util.List are in module java.base of loader 'bootstrap')"}
	}
	return &javaCastError{msg: "class " + from + " cannot be cast to class java.util.List (" + from +
		" is in unnamed module of loader 'app'; java.util.List is in module java.base of loader 'bootstrap')"}
}

// javaNPE is the JVM's NullPointerException (helpful message form of Java 14+).
type javaNPE struct{ msg string }

func (e *javaNPE) Error() string     { return e.msg }
func (e *javaNPE) ClassName() string { return "java.lang.NullPointerException" }

// dropFields is ExtractNewRecordState.dropFields.
func (t *ExtractNewRecordState) dropFields(r *connect.SinkRecord) (*connect.SinkRecord, error) {
	if values.JavaTrim(t.dropHeader) == "" {
		return r, nil
	}
	var h *connect.Header
	for i := range r.Headers { // getHeaderByName: the first header with the name
		if r.Headers[i].Key == t.dropHeader {
			h = &r.Headers[i]
			break
		}
	}
	if h == nil || h.Value == nil {
		return r, nil
	}
	var names []any
	switch v := h.Value.(type) {
	case []any:
		names = v
	case []string:
		for _, s := range v {
			names = append(names, s)
		}
	default:
		return nil, classCastToList(h.Value)
	}
	if len(names) == 0 {
		return r, nil
	}
	r, err := t.dropSideFields(r, keySide, names)
	if err != nil {
		return nil, err
	}
	return t.dropSideFields(r, valueSide, names)
}

// dropSideFields is dropKeyFields / dropValueFields.
func (t *ExtractNewRecordState) dropSideFields(r *connect.SinkRecord, sd side, names []any) (*connect.SinkRecord, error) {
	if sd == keySide && (!t.dropFromKey || r.Key == nil) {
		return r, nil
	}
	drop, err := t.fieldsToDrop(sd.schema(r), names)
	if err != nil {
		return nil, err
	}
	if len(drop) == 0 {
		return r, nil
	}
	// Strings.join(",", list): toString of every element, nulls skipped
	var parts []string
	for _, n := range drop {
		if n != nil {
			parts = append(parts, javaToString(n))
		}
	}
	rf := &ReplaceField{side: sd}
	if err := rf.Configure(map[string]string{"exclude": strings.Join(parts, ",")}); err != nil {
		return nil, err
	}
	return rf.Apply(r)
}

// fieldsToDrop is getFieldsToDropFromSchema.
func (t *ExtractNewRecordState) fieldsToDrop(s *connect.Schema, names []any) ([]any, error) {
	if !t.dropKeepCompatible {
		return names, nil
	}
	if s == nil {
		return nil, &javaNPE{msg: `Cannot invoke "org.apache.kafka.connect.data.Schema.fields()" because "schema" is null`}
	}
	if s.Type != connect.TypeStruct {
		return nil, connect.DataErrorf("Cannot list fields on non-struct type")
	}
	var out []any
	for _, f := range s.Fields() {
		if !f.Schema.Optional {
			continue
		}
		for _, n := range names {
			if str, ok := n.(string); ok && str == f.Name {
				out = append(out, f.Name)
				break
			}
		}
	}
	return out, nil
}
