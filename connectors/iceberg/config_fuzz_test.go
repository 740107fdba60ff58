package iceberg

import (
	"maps"
	"slices"
	"testing"
)

// configKeys are the keys the fuzz targets replace: every ConfigDef key and the per-table ones.
func configKeys() []string {
	var keys []string
	for _, k := range ConfigDef().Keys() {
		keys = append(keys, k.Name)
	}
	for _, s := range []string{tblIDColumns, tblPartitionBy, tblCommitBranch, tblRouteRegex, tblVersionColumn,
		tblCDCVersion, tblRawCDC, tblSortOrder, "retention-column", "retention-max-age-ms"} {
		keys = append(keys, "iceberg.table.db.t."+s)
	}
	slices.Sort(keys)
	return keys
}

// FuzzParseConfig: a REST body's connector config never panics ParseConfig, whatever one key holds.
func FuzzParseConfig(f *testing.F) {
	base := map[string]string{"name": "x", "iceberg.catalog.type": "rest", "iceberg.catalog.uri": "http://x",
		KeyTables: "db.t", KeyMaintenanceInterval: "60000"}
	if _, err := ParseConfig(base); err != nil {
		f.Fatal(err)
	}
	keys := configKeys()
	for i, v := range []string{"", " ", "-1", "9223372036854775808", "-9223372036854775809", "1e400", "\xff\xfe",
		"day(ts), bucket(k1,16)", "id desc nulls last, ts", "(", "a{1000}{1000}", "true", "apache", "compact,vacuum"} {
		f.Add(uint(i*7), v, "", "")
	}
	f.Add(uint(0), "db.t", "iceberg.table.db.t.route-regex", "(")
	f.Add(uint(0), "db.t", "iceberg.table..sort-order", "x")
	f.Add(uint(0), "db.t", "iceberg.tables.scd.tables", "a.b,c")
	f.Fuzz(func(t *testing.T, i uint, v, extraKey, extraValue string) {
		p := maps.Clone(base)
		p[keys[i%uint(len(keys))]] = v
		if extraKey != "" {
			p[extraKey] = extraValue
		}
		_, _ = ParseConfig(p)
	})
}
