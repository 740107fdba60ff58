package erase

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/configfuzz"
)

func eraseProps() map[string]string {
	return map[string]string{"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:/tmp/c.db",
		"iceberg.table": "cdc.customers", "clickhouse.hostname": "ch", "clickhouse.port": "9000", "clickhouse.table": "customers",
		"key.columns": "id", KeyHistoryTables: "cdc.customers_history", KeySCDTables: "cdc.customers_scd",
		KeySCDKeyColumn: "business_key", KeyDeletesTable: "none", KeyNoClickHouse: "false"}
}

// FuzzParseConfig: ParseConfig never panics, and an error names a key of the config.
func FuzzParseConfig(f *testing.F) {
	configfuzz.OneKey(f, eraseProps(), []string{"", " ", "x", "a.b,c", ",", "-1", "99999999999999999999", "\xff", "true"},
		func(p map[string]string) error { _, err := ParseConfig(p); return err })
}

// FuzzParseKey: ParseKey never panics, and a single-column key reads back from its Text.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{" s1-k1 ", "x", `{"a": 7, "b": "x"}`, `{"a": 7}`, `{"a":1,"a":2}`, `{"a":null,"b":1}`,
		`{"a":{"x":1},"b":[1]}`, `{"a":1} trailing`, "{", "", " ", "\xff", "-1", "1e400", strings.Repeat("9", 400)} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, composite bool) {
		cols := []string{"id"}
		if composite {
			cols = []string{"a", "b"}
		}
		k, err := ParseKey(s, cols)
		if err != nil || composite {
			return
		}
		again, err := ParseKey(k.Text(cols), cols)
		require.NoError(t, err)
		require.Equal(t, k, again)
	})
}

// FuzzReadKeys: a keys file never panics ReadKeys, and each key it reads has every key column.
func FuzzReadKeys(f *testing.F) {
	f.Add("# erased on request\nk1\n\nk2\n", false)
	f.Add("{\"a\":1,\"b\":2}\r\n#x\n{\"a\":\"\",\"b\":3}", true)
	f.Add(strings.Repeat("k", 300)+"\n#"+strings.Repeat(" ", 300), false)
	f.Add("\x00\n\xff\n{", false)
	f.Fuzz(func(t *testing.T, file string, composite bool) {
		cols := []string{"id"}
		if composite {
			cols = []string{"a", "b"}
		}
		keys, err := ReadKeys(strings.NewReader(file), cols)
		if err != nil {
			return
		}
		for _, k := range keys {
			require.Len(t, k.Values, len(cols))
		}
	})
}
