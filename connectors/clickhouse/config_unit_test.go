package clickhouse

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	base := func(kv ...string) map[string]string {
		p := map[string]string{"hostname": "h"}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		check func(t *testing.T, c *Config)
		err   string
	}{
		{"defaults", base(), func(t *testing.T, c *Config) {
			require.Equal(t, 9000, c.Port)
			require.False(t, c.SSL)
			require.Equal(t, "default", c.Database)
			require.Equal(t, "lz4", c.Compression)
			require.Equal(t, 60*time.Second, c.RetryTimeout)
			require.Equal(t, []Setting{{"async_insert", "0"}}, c.insertSettings())
		}, ""},
		{"http ports mapped on request", base("port", "8443", "ssl", "true", "port.mapHttpPorts", "true"), func(t *testing.T, c *Config) { require.Equal(t, 9440, c.Port) }, ""},
		{"http port 8123 mapped on request", base("port", "8123", "port.mapHttpPorts", "true"), func(t *testing.T, c *Config) { require.Equal(t, 9000, c.Port) }, ""},
		{"https port refused", base("port", "8443", "ssl", "true"), nil, "Invalid value 8443 for configuration port: 8443 is ClickHouse's HTTPS port, but this sink speaks the native protocol: use port 9000 (or 9440 with ssl=true), or set port.mapHttpPorts=true"},
		{"http port refused", base("port", "8123"), nil, "Invalid value 8123 for configuration port: 8123 is ClickHouse's HTTP port, but this sink speaks the native protocol"},
		{"native ports untouched", base("port", "9440", "port.mapHttpPorts", "true"), func(t *testing.T, c *Config) { require.Equal(t, 9440, c.Port) }, ""},
		{"no mapping", base("port", "8123", "port.mapHttpPorts", "false"), func(t *testing.T, c *Config) { require.Equal(t, 8123, c.Port) }, ""},
		{"retry timeout seconds", base("errors.retry.timeout", "60"), func(t *testing.T, c *Config) { require.Equal(t, time.Minute, c.RetryTimeout) }, ""},
		{"retry timeout ms", base("errors.retry.timeout", "5000"), func(t *testing.T, c *Config) { require.Equal(t, 5*time.Second, c.RetryTimeout) }, ""},
		{"user async_insert wins", base("clickhouseSettings", "async_insert=1, wait_for_async_insert=1"), func(t *testing.T, c *Config) {
			require.Equal(t, []Setting{{"async_insert", "1"}, {"wait_for_async_insert", "1"}}, c.insertSettings())
		}, ""},
		{"routing", base("topic2TableMap", "a=t1, b = t2", "enableDbTopicSplit", "true", "dbTopicSplitChar", "."), func(t *testing.T, c *Config) {
			db, tb := c.tableFor("a")
			require.Equal(t, "default.t1", db+"."+tb)
			db, tb = c.tableFor("sales.orders")
			require.Equal(t, "sales.orders", db+"."+tb)
			db, tb = c.tableFor("plain")
			require.Equal(t, "default.plain", db+"."+tb)
		}, ""},
		{"missing hostname", map[string]string{}, nil, "hostname"},
		{"bad map", base("topic2TableMap", "a"), nil, "topic2TableMap"},
		{"bad settings", base("clickhouseSettings", "x"), nil, "clickhouseSettings"},
		{"bad compression", base("compression", "snappy"), nil, "compression"},
		{"exactly-once with flush time", base("exactlyOnce", "true", "bufferFlushTime", "100"), nil, "bufferFlushTime"},
		{"split without char", base("enableDbTopicSplit", "true"), nil, "dbTopicSplitChar"},
		{"ignored official keys", base("jdbcConnectionProperties", "?ssl=true", "proxyType", "http", "bypassRowBinary", "true"), func(t *testing.T, c *Config) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig(tc.props)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}

func TestDedupWindowDetection(t *testing.T) {
	for _, tc := range []struct {
		engine, full string
		want         bool
	}{
		{"MergeTree", "MergeTree ORDER BY id SETTINGS index_granularity = 8192", false},
		{"MergeTree", "MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100, index_granularity = 8192", true},
		{"MergeTree", "MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 0", false},
		{"ReplicatedReplacingMergeTree", "ReplicatedReplacingMergeTree('/t', '{replica}') ORDER BY id", true},
		{"SharedMergeTree", "SharedMergeTree ORDER BY id", true},
	} {
		ti := &tableInfo{engine: tc.engine, engineFull: tc.full}
		require.Equal(t, tc.want, ti.dedupWindow(), tc.full)
	}
}

func TestTypeParsing(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		err  string
		name string
	}{
		{typ: "Map(LowCardinality(String), Array(Tuple(a Nullable(Decimal(18, 4)), `b c` DateTime64(9, 'Europe/Paris'))))"},
		{typ: "Enum8('a,b' = 1, 'c)' = 2)"},
		{typ: "JSON", err: "unsupported ClickHouse type JSON"},
		{typ: "Variant(String, UInt64)", err: "unsupported"},
		{typ: "DateTime('Nowhere/Invalid')", err: "unknown time zone"},
	} {
		c, err := newColumn(tc.typ)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.typ)
			continue
		}
		require.NoError(t, err, tc.typ)
		require.Equal(t, tc.typ, string(c.Type()))
	}
}

// /config/validate reports an HTTP interface port on the port key, and nothing once port.mapHttpPorts is set.
func TestValidateHTTPPort(t *testing.T) {
	c := &Connector{}
	got := c.Validate(map[string]string{"hostname": "h", "port": "8443", "ssl": "true"})
	require.Len(t, got, 1)
	require.Equal(t, "port", got[0].Name)
	require.Len(t, got[0].Errors, 1)
	require.Contains(t, got[0].Errors[0], "8443 is ClickHouse's HTTPS port, but this sink speaks the native protocol")
	require.Empty(t, c.Validate(map[string]string{"hostname": "h", "port": "8443", "port.mapHttpPorts": "true"}))
	require.Empty(t, c.Validate(map[string]string{"hostname": "h", "port": "8123", "port.mapHttpPorts": "false"}))
	require.Empty(t, c.Validate(map[string]string{"hostname": "h", "port": "9000"}))
	require.Empty(t, c.Validate(map[string]string{"hostname": "h"}))
	require.Error(t, c.Start(map[string]string{"hostname": "h", "port": "8123"}))
}
