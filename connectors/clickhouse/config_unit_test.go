package clickhouse

import (
	"log/slog"
	"strings"
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
		{"https port mapped by default", base("port", "8443", "ssl", "true"), func(t *testing.T, c *Config) {
			require.Equal(t, 9440, c.Port)
			require.Equal(t, "port 8443 is ClickHouse's HTTPS port; this sink speaks the native protocol and connects to port 9440 instead (port.mapHttpPorts=false uses 8443 as given, port.refuseHttpPorts=true refuses it)", c.PortNote)
		}, ""},
		{"http port mapped by default", base("port", "8123"), func(t *testing.T, c *Config) {
			require.Equal(t, 9000, c.Port)
			require.Contains(t, c.PortNote, "8123 is ClickHouse's HTTP port")
		}, ""},
		{"https port refused on request", base("port", "8443", "ssl", "true", "port.refuseHttpPorts", "true"), nil, "Invalid value 8443 for configuration port: 8443 is ClickHouse's HTTPS port, but this sink speaks the native protocol: use port 9000 (or 9440 with ssl=true), or set port.mapHttpPorts=true"},
		{"http port refused on request", base("port", "8123", "port.refuseHttpPorts", "true"), nil, "Invalid value 8123 for configuration port: 8123 is ClickHouse's HTTP port, but this sink speaks the native protocol"},
		{"mapHttpPorts wins over refuseHttpPorts", base("port", "8123", "port.refuseHttpPorts", "true", "port.mapHttpPorts", "true"), func(t *testing.T, c *Config) { require.Equal(t, 9000, c.Port) }, ""},
		{"native ports untouched", base("port", "9440", "port.mapHttpPorts", "true"), func(t *testing.T, c *Config) { require.Equal(t, 9440, c.Port); require.Empty(t, c.PortNote) }, ""},
		{"native ports untouched by default", base("port", "9440", "port.refuseHttpPorts", "true"), func(t *testing.T, c *Config) { require.Equal(t, 9440, c.Port); require.Empty(t, c.PortNote) }, ""},
		{"no mapping", base("port", "8123", "port.mapHttpPorts", "false"), func(t *testing.T, c *Config) { require.Equal(t, 8123, c.Port); require.Empty(t, c.PortNote) }, ""},
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

// /config/validate accepts an HTTP interface port (mapped at start) and reports it on the port key when
// port.refuseHttpPorts=true, unless port.mapHttpPorts is set.
func TestValidateHTTPPort(t *testing.T) {
	c := &Connector{}
	require.Empty(t, c.Validate(map[string]string{"hostname": "h", "port": "8443", "ssl": "true"}))
	got := c.Validate(map[string]string{"hostname": "h", "port": "8443", "ssl": "true", "port.refuseHttpPorts": "true"})
	require.Len(t, got, 1)
	require.Equal(t, "port", got[0].Name)
	require.Len(t, got[0].Errors, 1)
	require.Contains(t, got[0].Errors[0], "8443 is ClickHouse's HTTPS port, but this sink speaks the native protocol")
	require.Empty(t, c.Validate(map[string]string{"hostname": "h", "port": "8443", "port.mapHttpPorts": "true", "port.refuseHttpPorts": "true"}))
	require.Empty(t, c.Validate(map[string]string{"hostname": "h", "port": "8123", "port.mapHttpPorts": "false", "port.refuseHttpPorts": "true"}))
	require.Empty(t, c.Validate(map[string]string{"hostname": "h", "port": "9000", "port.refuseHttpPorts": "true"}))
	require.Empty(t, c.Validate(map[string]string{"hostname": "h"}))
	require.Error(t, c.Start(map[string]string{"hostname": "h", "port": "8123", "port.refuseHttpPorts": "true"}))
}

// A mapped HTTP interface port is said once at the connector's start, as a WARN and as its status note; its
// tasks say nothing more. A native port gives neither.
func TestHTTPPortMappedSaidOnce(t *testing.T) {
	var logs strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	c := &Connector{}
	props := map[string]string{"name": "ch", "hostname": "h", "port": "8443", "ssl": "true"}
	require.NoError(t, c.Start(props))
	require.Equal(t, "port 8443 is ClickHouse's HTTPS port; this sink speaks the native protocol and connects to port 9440 instead (port.mapHttpPorts=false uses 8443 as given, port.refuseHttpPorts=true refuses it)", c.StatusNote())
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), logs.String())
	require.Contains(t, logs.String(), "connects to port 9440 instead")
	tcs, err := c.TaskConfigs(2)
	require.NoError(t, err)
	for _, tc := range tcs {
		cfg, err := ParseConfig(tc)
		require.NoError(t, err)
		require.Equal(t, 9440, cfg.Port)
	}
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"), "tasks repeat nothing")

	native := &Connector{}
	require.NoError(t, native.Start(map[string]string{"name": "ch", "hostname": "h", "port": "9440", "ssl": "true"}))
	require.Empty(t, native.StatusNote())
	require.Equal(t, 1, strings.Count(logs.String(), "level=WARN"))
}
