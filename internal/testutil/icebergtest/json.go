package icebergtest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/converters/jsonconv"
)

// SchemalessConverter is JsonConverter with schemas.enable=false, as the worker configures it.
func SchemalessConverter(t testing.TB) *jsonconv.Converter {
	t.Helper()
	conv := &jsonconv.Converter{}
	require.NoError(t, conv.Configure(map[string]string{"schemas.enable": "false"}, false))
	return conv
}

// ConvertedShape is the converter's map of a schemaless JSON object, its inferred struct type and the
// members the converter listed (ok false: not such an object).
func ConvertedShape(t testing.TB, conv *jsonconv.Converter, data []byte) (map[string]any, *ice.StructType, []jsonvalue.Member, bool) {
	members, ok := conv.SchemalessJSONObject(data, []jsonvalue.Member{})
	if !ok {
		return nil, nil, nil, false
	}
	sv, err := conv.ToConnectData("t", nil, data)
	require.NoError(t, err)
	m := sv.Value.(map[string]any)
	return m, icerow.NewSchemaCache().ForSchemaless(m), members, true
}

// ArrowSchemaOf is the table schema (with field ids) auto-created for a schemaless record.
func ArrowSchemaOf(t testing.TB, record string) *arrow.Schema {
	conv := SchemalessConverter(t)
	sv, err := conv.ToConnectData("t", nil, []byte(record))
	require.NoError(t, err)
	st := icerow.NewSchemaCache().ForSchemaless(sv.Value.(map[string]any))
	sc, err := table.SchemaToArrowSchema(ice.NewSchema(0, st.FieldList...), nil, true, false)
	require.NoError(t, err)
	return sc
}

// BenchShapeRecord is one flat record of the Iceberg benchmark's shape (~406 B, 9 members: longs, a
// double, strings) and its inferred struct type.
func BenchShapeRecord(b testing.TB) ([]byte, *ice.StructType) {
	rec := []byte(`{"id":123456,"name":"customer-0123456","email":"customer-0123456@example.com","region":"eu-west",` +
		`"amount":12345.67,"qty":7,"ts":"2026-01-02T10:17:36Z","version":3,"note":"` + strings.Repeat("abcdefghijklmnopqrstuvwxyz", 9) + `"}`)
	sv, err := SchemalessConverter(b).ToConnectData("t", nil, rec)
	require.NoError(b, err)
	return rec, icerow.NewSchemaCache().ForSchemaless(sv.Value.(map[string]any))
}

// ModelSeed is the seed of a model test: def, or the value of the environment variable env; logged, so
// that a failure can be replayed.
func ModelSeed(t testing.TB, env string, def int64) int64 {
	seed := def
	if s := os.Getenv(env); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", env, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (%s)", seed, env)
	return seed
}
