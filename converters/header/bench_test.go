package header

import (
	"testing"

	"github.com/connectd/connectd/connect"
)

// Per-record header conversion: typical header values (ids, trace context, content types, numbers, booleans)
// and one structured value.
func BenchmarkSimpleHeaderToConnect(b *testing.B) {
	cases := []struct{ name, in string }{
		{"uuid", "550e8400-e29b-41d4-a716-446655440000"},
		{"traceparent", "00-4bf92f3577b34da6a71e0ce6b7d0d77a-00f067aa0ba902b7-01"},
		{"content-type", "application/json"},
		{"int", "1700000000000"},
		{"bool", "true"},
		{"float", "3.14159"},
		{"timestamp", "2024-01-02T12:34:56.789Z"},
		{"array", `[1,2,3,4,5,6,7,8]`},
		{"map", `{"a":1,"b":"x","c":true}`},
	}
	c := &Converter{}
	for _, tc := range cases {
		in := []byte(tc.in)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				if _, err := c.ToConnectHeader("t", "h", in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSimpleHeaderFromConnect(b *testing.B) {
	c := &Converter{}
	cases := []struct {
		name string
		v    any
	}{
		{"string", "550e8400-e29b-41d4-a716-446655440000"},
		{"int64", int64(1700000000000)},
		{"float64", 3.14159},
		{"array", []any{int8(1), int8(2), int8(3)}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := c.FromConnectHeader("t", "h", connect.StringSchema, tc.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
