package jsonconv

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/jsonvalue"
)

// FuzzJSONToConnect feeds arbitrary bytes to ToConnectData in both modes: it must never panic, and what
// it decodes must encode again.
func FuzzJSONToConnect(f *testing.F) {
	fx := loadFixtures(f)
	for _, c := range fx.Decode {
		if c.Input != nil {
			if b, err := base64.StdEncoding.DecodeString(*c.Input); err == nil {
				f.Add(b)
			}
		}
	}
	withSchemas, plain := New(), &Converter{}
	_ = plain.Configure(map[string]string{"schemas.enable": "false"}, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*Converter{withSchemas, plain} {
			sv, err := c.ToConnectData("t", nil, data)
			if err != nil {
				continue
			}
			if _, err := c.FromConnectData("t", nil, sv.Schema, sv.Value); err != nil && sv.Schema == nil {
				t.Fatalf("schemaless value did not encode again: %v (%#v)", err, sv.Value)
			}
		}
	})
}

// FuzzJSONSameSchemaFastPath: a converter that has seen the Debezium fixture's schema (so its
// same-schema fast path is armed) decodes anything exactly as a converter without the fast path
// (cache size 0): the same value, or the same error.
func FuzzJSONSameSchemaFastPath(f *testing.F) {
	fx := loadFixtures(f)
	var seed []byte
	for _, c := range fx.Encode {
		if c.Name == "debezium-envelope" {
			seed = []byte(c.Outputs["schemas.enable=true,decimal.format=BASE64,replace.null.with.default=true"]["bytes"].(string))
		}
	}
	if seed == nil {
		f.Fatal("no debezium-envelope fixture")
	}
	f.Add(seed)
	i := bytes.Index(seed, []byte(`,"payload":`)) + len(`,"payload":`)
	for _, v := range []string{`null}`, `{}}`, `{"before":null}`, `{"after":1}} trailing`, `{"op":"c"},"x":1}`, `{"op":`, `[1]}`, `{"op":"c"}  }`} {
		f.Add(append(seed[:i:i], v...))
	}
	f.Add(append([]byte(" \n"), seed...))
	armed := New()
	if _, err := armed.ToConnectData("t", nil, seed); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		plain := &Converter{}
		if err := plain.Configure(map[string]string{"schemas.cache.size": "0"}, false); err != nil {
			t.Fatal(err)
		}
		want, werr := plain.ToConnectData("t", nil, data)
		got, gerr := armed.ToConnectData("t", nil, data)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("errors differ: fast path %v, general %v", gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("values differ:\nfast path %#v\ngeneral   %#v", got, want)
		}
		if _, err := armed.ToConnectData("t", nil, seed); err != nil { // re-arm on the fixture's schema
			t.Fatal(err)
		}
	})
}

// FuzzSchemaless: the one-pass schemaless decoder gives what a plain walk over the validated document
// gives (member by member through objectFields and arrayElems, each value's end found by skip).
func FuzzSchemaless(f *testing.F) {
	fx := loadFixtures(f)
	for _, c := range fx.Decode {
		if c.Input != nil {
			if b, err := base64.StdEncoding.DecodeString(*c.Input); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"a":1,"b":"x\"y","a":[1.5,null,true,{"c":"\u00e9"}],"long-name-long-name-long-name-long-name-long-name-long-name-long":-0}`))
	var ref func(b []byte, i int) any
	ref = func(b []byte, i int) any {
		switch b[i] {
		case 'n':
			return nil
		case 't':
			return true
		case 'f':
			return false
		case '"':
			s, _ := stringAt(b, i)
			return s
		case '[':
			out := []any{}
			_ = arrayElems(b, i, func(e int) error { out = append(out, ref(b, e)); return nil })
			return out
		case '{':
			out := map[string]any{}
			objectFields(b, i, func(k []byte, e int) bool { out[string(k)] = ref(b, e); return true })
			return out
		}
		tok, integral := numberToken(b, i)
		if integral {
			return int64(intBits(tok, true))
		}
		return parseFloat(tok, 64)
	}
	var keys keyTable
	f.Fuzz(func(t *testing.T, data []byte) {
		start, _, err := validate(data)
		if err != nil || start < 0 {
			return
		}
		for range 2 { // the second time with the names interned
			got, _ := convertSchemaless(data, start, &keys)
			if want := ref(data, start); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: got %#v, want %#v", data, got, want)
			}
		}
	})
}

// FuzzSchemalessMembers: SchemalessJSONObject takes what validate takes as an object, and lists its
// members where a plain walk over the validated document finds them; what it refuses leaves the list
// as it was.
func FuzzSchemalessMembers(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x\"y","a":[1.5,null,true,{"c":"\u00e9"}],"d\n":-0.5e3, "e" : 00 }`, ` {"s":"` + "\xc3\xa9" + `"} tail`,
		`{}`, `{"a":}`, `{"a":1,}`, `[1]`, `{"a":{"b":{"c":[]}}}`, `{"x":12345678901234567890,"y":-1E+2}`,
	} {
		f.Add([]byte(s))
	}
	c := &Converter{}
	require.NoError(f, c.Configure(map[string]string{"schemas.enable": "false"}, false))
	prefix := []jsonvalue.Member{{Name: 7, NameEnd: 8, Value: 9, ValueEnd: 10}}
	f.Fuzz(func(t *testing.T, data []byte) {
		start, _, err := validate(data)
		isObject := err == nil && start >= 0 && data[start] == '{'
		got, ok := c.SchemalessJSONObject(data, append([]jsonvalue.Member(nil), prefix...))
		require.Equal(t, isObject, ok, "%q", data)
		require.Equal(t, prefix, got[:1], "%q", data)
		if !ok {
			require.Len(t, got, 1, "%q", data)
			return
		}
		want := []jsonvalue.Member{}
		i := skipWS(data, start+1)
		for data[i] != '}' {
			ne, namePlain := scanString(data, i)
			v := skipWS(data, skipWS(data, ne)+1)
			m := jsonvalue.Member{Name: int32(i), NameEnd: int32(ne), Value: int32(v), ValueEnd: int32(skip(data, v))}
			if !namePlain {
				m.Flags |= jsonvalue.NameEscaped
			}
			if data[v] == '"' {
				if _, plain := scanString(data, v); !plain {
					m.Flags |= jsonvalue.ValueEscaped
				}
			} else if isNumber(data, v) {
				if _, integral := numberToken(data, v); !integral {
					m.Flags |= jsonvalue.ValueFraction
				}
			}
			want = append(want, m)
			if i = skipWS(data, int(m.ValueEnd)); data[i] == ',' {
				i = skipWS(data, i+1)
			}
		}
		require.Equal(t, want, got[1:], "%q", data)
	})
}
