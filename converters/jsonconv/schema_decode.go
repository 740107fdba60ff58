package jsonconv

import "github.com/connectd/connectd/connect"

// asConnectSchema reads the envelope's "schema" JSON at i into a connect.Schema, as JsonConverter.asConnectSchema.
func (c *Converter) asConnectSchema(b []byte, i int) (*connect.Schema, error) {
	if isNull(b, i) {
		return nil, nil
	}
	if b[i] != '{' {
		return nil, dataErr("Schema must contain 'type' field")
	}
	ti := objectGet(b, i, "type")
	if ti < 0 || b[ti] != '"' {
		return nil, dataErr("Schema must contain 'type' field")
	}
	typ, _ := stringAt(b, ti)
	var sb *connect.SchemaBuilder
	switch typ {
	case "boolean":
		sb = connect.BoolBuilder()
	case "int8":
		sb = connect.Int8Builder()
	case "int16":
		sb = connect.Int16Builder()
	case "int32":
		sb = connect.Int32Builder()
	case "int64":
		sb = connect.Int64Builder()
	case "float":
		sb = connect.Float32Builder()
	case "double":
		sb = connect.Float64Builder()
	case "bytes":
		sb = connect.BytesBuilder()
	case "string":
		sb = connect.StringBuilder()
	case "array":
		ei := objectGet(b, i, "items")
		if isNull(b, ei) {
			return nil, dataErr("Array schema did not specify the element type")
		}
		elem, err := c.asConnectSchema(b, ei)
		if err != nil {
			return nil, err
		}
		sb = connect.ArrayBuilder(elem)
	case "map":
		ki := objectGet(b, i, "keys")
		if ki < 0 {
			return nil, dataErr("Map schema did not specify the key type")
		}
		vi := objectGet(b, i, "values")
		if vi < 0 {
			return nil, dataErr("Map schema did not specify the value type")
		}
		ks, err := c.asConnectSchema(b, ki)
		if err != nil {
			return nil, err
		}
		vs, err := c.asConnectSchema(b, vi)
		if err != nil {
			return nil, err
		}
		if ks == nil {
			return nil, schemaBuilderErr("keySchema cannot be null.")
		}
		if vs == nil {
			return nil, schemaBuilderErr("valueSchema cannot be null.")
		}
		sb = connect.MapBuilder(ks, vs)
	case "struct":
		sb = connect.StructBuilder()
		fi := objectGet(b, i, "fields")
		if fi < 0 || b[fi] != '[' {
			return nil, dataErr("Struct schema's \"fields\" argument is not an array.")
		}
		seen := map[string]bool{}
		err := arrayElems(b, fi, func(f int) error {
			ni := -1
			if b[f] == '{' {
				ni = objectGet(b, f, "field")
			}
			if ni < 0 || b[ni] != '"' {
				return dataErr("Struct schema's field name not specified properly")
			}
			name, _ := stringAt(b, ni)
			fs, err := c.asConnectSchema(b, f)
			if err != nil {
				return err
			}
			if seen[name] {
				return schemaBuilderErr("Cannot create field because of field name duplication " + name)
			}
			seen[name] = true
			sb.Field(name, fs)
			return nil
		})
		if err != nil {
			return nil, err
		}
	default:
		return nil, dataErr("Unknown schema type: %s", typ)
	}
	if oi := objectGet(b, i, "optional"); oi >= 0 && b[oi] == 't' {
		sb.Optional()
	}
	if ni := objectGet(b, i, "name"); ni >= 0 && b[ni] == '"' {
		n, _ := stringAt(b, ni)
		sb.Name(n)
	}
	if vi := objectGet(b, i, "version"); isNumber(b, vi) {
		if tok, integral := numberToken(b, vi); integral {
			sb.Version(int32(intBits(tok, true)))
		}
	}
	if di := objectGet(b, i, "doc"); di >= 0 && b[di] == '"' {
		d, _ := stringAt(b, di)
		sb.Doc(d)
	}
	if pi := objectGet(b, i, "parameters"); pi >= 0 && b[pi] == '{' {
		var perr error
		objectFields(b, pi, func(k []byte, v int) bool {
			if b[v] != '"' {
				perr = dataErr("Schema parameters must have string values.")
				return false
			}
			s, _ := stringAt(b, v)
			sb.Parameter(string(k), s)
			return true
		})
		if perr != nil {
			return nil, perr
		}
	}
	partial, err := sb.Build()
	if err != nil {
		return nil, schemaBuilderErr(err.Error())
	}
	if di := objectGet(b, i, "default"); di >= 0 {
		// As the JVM: the default is converted against the schema built so far (no default yet).
		v, err := c.convert(b, partial, di)
		if err != nil {
			return nil, err
		}
		if err := jvmValidate(partial, v, "value"); err != nil || partial.Type == connect.TypeStruct && v != nil {
			cause := "Struct schemas do not match."
			if err != nil {
				cause = err.Error()
			}
			return nil, &SchemaBuilderError{Msg: "Invalid default value", Cause: cause}
		}
		if v != nil {
			s := *partial
			s.Default = v
			return &s, nil
		}
	}
	return partial, nil
}

// SchemaBuilderError is the JVM's SchemaBuilderException (a DataException).
type SchemaBuilderError struct {
	Msg   string
	Cause string
}

func (e *SchemaBuilderError) Error() string { return e.Msg }
func (e *SchemaBuilderError) ClassName() string {
	return "org.apache.kafka.connect.errors.SchemaBuilderException"
}

func schemaBuilderErr(msg string) error {
	return &connect.DataError{Err: &SchemaBuilderError{Msg: msg}}
}
