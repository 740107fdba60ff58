package jsonconv

import (
	"encoding/base64"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
)

func dataErr(format string, args ...any) error { return connect.DataErrorf(format, args...) }

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
		return convertSchemaless(b, i, &c.keys)
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

// convertSchemaless infers the type from the JSON node, as convertToConnect with a null schema. keys
// interns object member names (nil: none).
func convertSchemaless(b []byte, i int, keys *keyTable) (any, error) {
	if i < 0 {
		return nil, nil
	}
	v, _ := schemaless(b, i, keys)
	return v, nil
}

// member is an object member collected before the object's map is made, so that the map is made at
// its size instead of growing member by member.
type member struct {
	k string
	v any
}

// schemaless converts the (valid) value at i and returns the index after it, so that containers
// need not scan each member a second time to find the next.
func schemaless(b []byte, i int, keys *keyTable) (any, int) {
	switch b[i] {
	case 'n':
		return nil, i + 4
	case 't':
		return true, i + 4
	case 'f':
		return false, i + 5
	case '"':
		return stringAt(b, i)
	case '[':
		out := []any{}
		i = skipWS(b, i+1)
		if b[i] == ']' {
			return out, i + 1
		}
		for {
			var v any
			v, i = schemaless(b, i, keys)
			out = append(out, v)
			i = skipWS(b, i)
			if b[i] == ']' {
				return out, i + 1
			}
			i = skipWS(b, i+1) // ','
		}
	case '{':
		var buf [16]member
		ms := buf[:0]
		i = skipWS(b, i+1)
		for b[i] != '}' {
			raw, e, plain := rawString(b, i)
			var k string
			if plain {
				k = keys.intern(raw)
			} else {
				k = unescape(raw)
			}
			i = skipWS(b, e)
			i = skipWS(b, i+1) // ':'
			var v any
			v, i = schemaless(b, i, keys)
			ms = append(ms, member{k, v})
			i = skipWS(b, i)
			if b[i] == ',' {
				i = skipWS(b, i+1)
			}
		}
		out := make(map[string]any, len(ms))
		for _, m := range ms {
			out[m.k] = m.v // in document order: the last of repeated names wins, as in Jackson's ObjectNode
		}
		return out, i + 1
	}
	tok, integral := numberToken(b, i)
	if integral {
		return int64(intBits(tok, true)), i + len(tok)
	}
	return parseFloat(tok, 64), i + len(tok)
}

// keyTable interns the member names of schemaless objects: a stream's records repeat the same names, and
// each would otherwise be a new string per record. A slot keeps the last name hashed to it; safe for
// concurrent use.
type keyTable [256]atomic.Pointer[string]

// maxInterned bounds the names kept: long ones are rarely repeated names.
const maxInterned = 64

func (t *keyTable) intern(k []byte) string {
	if t == nil || len(k) > maxInterned {
		return string(k)
	}
	h := uint32(2166136261) // FNV-1a
	for _, c := range k {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &t[h%uint32(len(t))]
	if p := slot.Load(); p != nil && *p == string(k) {
		return *p
	}
	s := string(k)
	slot.Store(&s)
	return s
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
