package clickhouse

import (
	"maps"
	"slices"
	"testing"
)

// FuzzParseConfig: a REST body's connector config never panics ParseConfig, whatever one key holds.
func FuzzParseConfig(f *testing.F) {
	base := map[string]string{"hostname": "h", "transforms": "unwrap",
		"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState", "transforms.unwrap.add.fields": "lsn"}
	if _, err := ParseConfig(base); err != nil {
		f.Fatal(err)
	}
	keys := []string{"transforms", "transforms.unwrap.add.fields", "transforms.unwrap.add.fields.prefix",
		"transforms.unwrap.delete.tombstone.handling.mode", "transforms.unwrap.type", keyErrorsRetryTimeout}
	for _, k := range configDef().Keys() {
		keys = append(keys, k.Name)
	}
	slices.Sort(keys)
	for i, v := range []string{"", " ", "-1", "8123", "65536", "9223372036854775808", "-9223372036854775809", "\xff",
		"t1=a,t2=b", "=", ",", "source.lsn:__l,file,pos", "source.a.b:", "zstd", "true", "unwrap,,unwrap"} {
		f.Add(uint(i*5), v, "", "")
	}
	f.Add(uint(0), "h", keyDebeziumCDC, "true")
	f.Add(uint(0), "h", keyPortMapHTTP, "maybe")
	f.Fuzz(func(t *testing.T, i uint, v, extraKey, extraValue string) {
		p := maps.Clone(base)
		p[keys[i%uint(len(keys))]] = v
		if extraKey != "" {
			p[extraKey] = extraValue
		}
		_, _ = ParseConfig(p)
	})
}
