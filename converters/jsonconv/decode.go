package jsonconv

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/connectd/connectd/connect"
)

func dataErr(format string, args ...any) error { return connect.DataErrorf(format, args...) }

// ---- schema: the envelope's "schema" JSON to a connect.Schema (JsonConverter.asConnectSchema) ------------

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

// jvmValidate is ConnectSchema.validateValue for values this decoder produced: their Go types always fit
// the schema, so only nulls are checked, with the JVM's messages.
func jvmValidate(s *connect.Schema, v any, location string) error {
	if v == nil {
		if !s.Optional {
			return dataErr("Invalid value: null used for required %s, schema type: %s", location, s.Type)
		}
		return nil
	}
	switch s.Type {
	case connect.TypeArray:
		arr, _ := v.([]any)
		loc := "element of array " + location
		for _, e := range arr {
			if err := jvmValidate(s.ValueSchema(), e, loc); err != nil {
				return err
			}
		}
	case connect.TypeMap:
		m, _ := v.(map[any]any)
		for k, e := range m {
			if err := jvmValidate(s.KeySchema(), k, "key of map "+location); err != nil {
				return err
			}
			if err := jvmValidate(s.ValueSchema(), e, "value of map "+location); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- values (JsonConverter.convertToConnect) ----------------------------------------------------------

// convert converts the value at i (i < 0: missing) for schema s; a nil s infers the type from the JSON.
func (c *Converter) convert(b []byte, s *connect.Schema, i int) (any, error) {
	if s == nil {
		return convertSchemaless(b, i)
	}
	if isNull(b, i) {
		if s.Default != nil && c.replaceNull {
			return s.Default, nil
		}
		if s.Optional {
			return nil, nil
		}
		return nil, dataErr("Invalid null value for required %s field", s.Type)
	}
	switch s.Name {
	case connect.DecimalName:
		return decimalToConnect(b, s, i)
	case connect.DateName:
		v, ok := isInt(b, i)
		if !ok {
			return nil, dataErr("Invalid type for Date, underlying representation should be integer but was %s", nodeType(b, i))
		}
		return connect.DateFromDays(v), nil
	case connect.TimeName:
		v, ok := isInt(b, i)
		if !ok {
			return nil, dataErr("Invalid type for Time, underlying representation should be integer but was %s", nodeType(b, i))
		}
		if v < 0 || v > 86400000 {
			return nil, dataErr("Time values must use number of milliseconds greater than 0 and less than 86400000")
		}
		return connect.TimeFromMillis(v), nil
	case connect.TimestampName:
		if isNumber(b, i) {
			if tok, integral := numberToken(b, i); integral {
				return time.UnixMilli(int64(intBits(tok, true))).UTC(), nil
			}
		}
		return nil, dataErr("Invalid type for Timestamp, underlying representation should be integral but was %s", nodeType(b, i))
	}
	switch s.Type {
	case connect.TypeBoolean:
		return b[i] == 't', nil
	case connect.TypeInt8:
		return int8(numBits(b, i)), nil
	case connect.TypeInt16:
		return int16(numBits(b, i)), nil
	case connect.TypeInt32:
		return int32(numBits(b, i)), nil
	case connect.TypeInt64:
		return int64(numBits(b, i)), nil
	case connect.TypeFloat32:
		return float32(numFloat(b, i, 32)), nil
	case connect.TypeFloat64:
		return numFloat(b, i, 64), nil
	case connect.TypeString:
		if b[i] != '"' {
			return nil, nil // textValue() of a non-text node
		}
		str, _ := stringAt(b, i)
		return str, nil
	case connect.TypeBytes:
		if b[i] != '"' {
			return nil, nil
		}
		raw, err := base64At(b, i)
		if err != nil {
			return nil, &connect.DataError{Err: &causeError{msg: "Invalid bytes field", cause: err}}
		}
		return raw, nil
	case connect.TypeArray:
		out := []any{}
		elem := s.ValueSchema()
		switch b[i] {
		case '[':
			err := arrayElems(b, i, func(e int) error {
				v, err := c.convert(b, elem, e)
				if err != nil {
					return err
				}
				out = append(out, v)
				return nil
			})
			if err != nil {
				return nil, err
			}
		case '{': // iterating an ObjectNode yields its values
			var ferr error
			objectFields(b, i, func(_ []byte, e int) bool {
				v, err := c.convert(b, elem, e)
				if err != nil {
					ferr = err
					return false
				}
				out = append(out, v)
				return true
			})
			if ferr != nil {
				return nil, ferr
			}
		}
		return out, nil
	case connect.TypeMap:
		ks, vs := s.KeySchema(), s.ValueSchema()
		out := map[any]any{}
		if ks.Type == connect.TypeString {
			if b[i] != '{' {
				return nil, dataErr("Maps with string fields should be encoded as JSON objects, but found %s", nodeType(b, i))
			}
			var ferr error
			objectFields(b, i, func(k []byte, e int) bool {
				v, err := c.convert(b, vs, e)
				if err != nil {
					ferr = err
					return false
				}
				out[string(k)] = v
				return true
			})
			return out, ferr
		}
		if b[i] != '[' {
			return nil, dataErr("Maps with non-string fields should be encoded as JSON array of tuples, but found %s", nodeType(b, i))
		}
		err := arrayElems(b, i, func(e int) error {
			if b[e] != '[' {
				return dataErr("Found invalid map entry instead of array tuple: %s", nodeType(b, e))
			}
			var pair [2]int
			n := 0
			_ = arrayElems(b, e, func(x int) error {
				if n < 2 {
					pair[n] = x
				}
				n++
				return nil
			})
			if n != 2 {
				return dataErr("Found invalid map entry, expected length 2 but found :%d", n)
			}
			k, err := c.convert(b, ks, pair[0])
			if err != nil {
				return err
			}
			v, err := c.convert(b, vs, pair[1])
			if err != nil {
				return err
			}
			out[mapKey(k)] = v
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	case connect.TypeStruct:
		if b[i] != '{' {
			return nil, dataErr("Structs should be encoded as JSON objects, but found %s", nodeType(b, i))
		}
		fields := s.Fields()
		var buf [32]int
		var spans []int
		if len(fields) <= len(buf) {
			spans = buf[:len(fields)]
		} else {
			spans = make([]int, len(fields))
		}
		for k := range spans {
			spans[k] = -1
		}
		objectFields(b, i, func(k []byte, e int) bool {
			if f, ok := s.Field(string(k)); ok {
				spans[f.Index] = e
			}
			return true
		})
		st := connect.NewStruct(s)
		for k, f := range fields {
			v, err := c.convert(b, f.Schema, spans[k])
			if err != nil {
				return nil, err
			}
			if err := jvmValidate(f.Schema, v, `field: "`+f.Name+`"`); err != nil {
				return nil, err
			}
			st.PutIndex(k, v)
		}
		return st, nil
	}
	return nil, dataErr("Unknown schema type: %s", s.Type)
}

// mapKey makes a decoded key usable as a Go map key ([]byte and Decimal are not comparable by value).
func mapKey(k any) any {
	switch x := k.(type) {
	case []byte:
		return string(x)
	case connect.Decimal:
		return x.String()
	}
	return k
}

// convertSchemaless infers the type from the JSON node, as convertToConnect with a null schema.
func convertSchemaless(b []byte, i int) (any, error) {
	if isNull(b, i) {
		return nil, nil
	}
	switch b[i] {
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case '"':
		s, _ := stringAt(b, i)
		return s, nil
	case '[':
		out := []any{}
		err := arrayElems(b, i, func(e int) error {
			v, err := convertSchemaless(b, e)
			if err != nil {
				return err
			}
			out = append(out, v)
			return nil
		})
		return out, err
	case '{':
		out := map[string]any{}
		var ferr error
		objectFields(b, i, func(k []byte, e int) bool {
			v, err := convertSchemaless(b, e)
			if err != nil {
				ferr = err
				return false
			}
			out[string(k)] = v
			return true
		})
		return out, ferr
	}
	tok, integral := numberToken(b, i)
	if integral {
		return int64(intBits(tok, true)), nil
	}
	return parseFloat(tok, 64), nil
}

// isInt is Jackson's isInt(): an integral token that fits an int.
func isInt(b []byte, i int) (int32, bool) {
	if !isNumber(b, i) {
		return 0, false
	}
	tok, integral := numberToken(b, i)
	if !integral {
		return 0, false
	}
	v, err := strconv.ParseInt(string(tok), 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(v), true
}

// numBits is intValue()/longValue() of any node: the low 64 bits of the number truncated toward zero,
// 0 for non-numbers.
func numBits(b []byte, i int) uint64 {
	if !isNumber(b, i) {
		return 0
	}
	tok, integral := numberToken(b, i)
	return intBits(tok, integral)
}

func intBits(tok []byte, integral bool) uint64 {
	if integral {
		if v, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return uint64(v)
		}
		n, ok := new(big.Int).SetString(string(tok), 10)
		if !ok {
			return 0
		}
		return lowBits(n)
	}
	d, err := connect.ParseDecimal(string(tok))
	if err != nil {
		return 0
	}
	if d.Scale <= -64 { // a multiple of 10^64, so of 2^64
		return 0
	}
	if d.Scale > 0 {
		if int(d.Scale) > len(tok) { // |value| < 1
			return 0
		}
		q := new(big.Int).Quo(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
		return lowBits(q)
	}
	return lowBits(new(big.Int).Mul(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)))
}

// lowBits is BigInteger.longValue(): the low 64 bits of the two's complement.
func lowBits(n *big.Int) uint64 {
	m := new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64))
	return m.Uint64()
}

func numFloat(b []byte, i int, bits int) float64 {
	if !isNumber(b, i) {
		return 0
	}
	tok, _ := numberToken(b, i)
	return parseFloat(tok, bits)
}

// parseFloat converts like BigDecimal.doubleValue()/floatValue(): correctly rounded, overflow to infinity,
// and no negative zero (BigDecimal has none).
func parseFloat(tok []byte, bits int) float64 {
	f, err := strconv.ParseFloat(string(tok), bits)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0
	}
	if f == 0 {
		return 0
	}
	return f
}

func base64At(b []byte, i int) ([]byte, error) {
	raw, _, plain := rawString(b, i)
	if !plain {
		raw = []byte(unescape(raw))
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(out, raw)
	if err != nil {
		return nil, fmt.Errorf("Cannot access contents of TextNode as binary due to broken Base64 encoding: %v", err)
	}
	return out[:n], nil
}

func decimalToConnect(b []byte, s *connect.Schema, i int) (any, error) {
	if isNumber(b, i) {
		tok, _ := numberToken(b, i)
		d, err := connect.ParseDecimal(string(tok))
		if err != nil {
			return nil, dataErr("Invalid decimal %s", tok)
		}
		return d, nil
	}
	if b[i] == '"' {
		raw, err := base64At(b, i)
		if err == nil {
			var scale int32
			if scale, err = connect.DecimalScale(s); err == nil {
				if len(raw) == 0 {
					err = fmt.Errorf("Zero length BigInteger")
				} else {
					return connect.DecimalFromBytes(raw, scale), nil
				}
			}
		}
		return nil, &connect.DataError{Err: &causeError{msg: "Invalid bytes for Decimal field", cause: err}}
	}
	return nil, dataErr("Invalid type for Decimal, underlying representation should be numeric or bytes but was %s", nodeType(b, i))
}

// causeError carries the JVM's message and keeps the underlying cause for errors.Unwrap.
type causeError struct {
	msg   string
	cause error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.cause }
