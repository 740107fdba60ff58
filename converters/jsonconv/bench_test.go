package jsonconv

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/jsonvalue"
)

func debeziumFixture(b *testing.B, schemas bool) []byte {
	fx := loadFixtures(b)
	key := "schemas.enable=false,decimal.format=BASE64,replace.null.with.default=true"
	if schemas {
		key = "schemas.enable=true,decimal.format=BASE64,replace.null.with.default=true"
	}
	for _, c := range fx.Encode {
		if c.Name == "debezium-envelope" {
			return []byte(c.Outputs[key]["bytes"].(string))
		}
	}
	b.Fatal("no debezium-envelope fixture")
	return nil
}

// BenchmarkJSONToConnect decodes a Debezium-like change event (about 2 KB with its schema).
func BenchmarkJSONToConnect(b *testing.B) {
	for _, tc := range []struct {
		name    string
		schemas bool
	}{{"schemas", true}, {"schemaless", false}} {
		b.Run(tc.name, func(b *testing.B) {
			in := debeziumFixture(b, tc.schemas)
			c := &Converter{}
			require.NoError(b, c.Configure(map[string]string{"schemas.enable": map[bool]string{true: "true", false: "false"}[tc.schemas]}, false))
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.ToConnectData("t", nil, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJSONFromConnect encodes the same event.
func BenchmarkJSONFromConnect(b *testing.B) {
	in := debeziumFixture(b, true)
	c := New()
	sv, err := c.ToConnectData("t", nil, in)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.FromConnectData("t", nil, sv.Schema, sv.Value); err != nil {
			b.Fatal(err)
		}
	}
}

// flatRecord is a flat schemaless object of ~406 bytes and 9 fields (the records of
// scripts/bench-iceberg-jvm.sh) and a schemaless converter.
func flatRecord(b *testing.B) ([]byte, *Converter) {
	in := []byte(`{"id":123456,"name":"customer-0123456","email":"customer-0123456@example.com","region":"us-east","amount":23456.56,"qty":9,"ts":"2026-01-02T10:17:36Z","version":1,"note":"` +
		strings.Repeat("abcdefghijklmnopqrstuvwxyz", 9)[:222] + `"}`)
	c := &Converter{}
	require.NoError(b, c.Configure(map[string]string{"schemas.enable": "false"}, false))
	return in, c
}

// BenchmarkSchemalessJSONObjectFlat checks the record of BenchmarkJSONToConnectFlat without converting
// it, as the worker does before handing the bytes to a sink that takes them (jsonvalue.Value).
func BenchmarkSchemalessJSONObjectFlat(b *testing.B) {
	in, c := flatRecord(b)
	b.SetBytes(int64(len(in)))
	var members []jsonvalue.Member
	for b.Loop() {
		var ok bool
		if members, ok = c.SchemalessJSONObject(in, members[:0]); !ok {
			b.Fatal("refused")
		}
	}
}

// BenchmarkJSONToConnectFlat decodes a flat schemaless object of ~406 bytes and 9 fields (the records of
// scripts/bench-iceberg-jvm.sh).
func BenchmarkJSONToConnectFlat(b *testing.B) {
	in, c := flatRecord(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ToConnectData("t", nil, in); err != nil {
			b.Fatal(err)
		}
	}
}
