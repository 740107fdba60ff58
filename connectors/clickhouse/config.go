package clickhouse

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Config keys. The first group has the names, defaults and meaning of ClickHouse's official sink
// (com.clickhouse.kafka.connect.ClickHouseSinkConnector); docs/guides/clickhouse-sink.md lists the keys
// that have no meaning over the native protocol (accepted and ignored) and the keys added here.
const (
	keyHostname             = "hostname"
	keyPort                 = "port"
	keyDatabase             = "database"
	keyUsername             = "username"
	keyPassword             = "password"
	keySSL                  = "ssl"
	keyTimeoutSeconds       = "timeoutSeconds"
	keyRetryCount           = "retryCount"
	keyInsertTimeoutMs      = "clickhouseClientInsertTimeoutMs"
	keyTopic2TableMap       = "topic2TableMap"
	keyEnableDbTopicSplit   = "enableDbTopicSplit"
	keyDbTopicSplitChar     = "dbTopicSplitChar"
	keyTableRefreshInterval = "tableRefreshInterval"
	keySuppressTableExists  = "suppressTableExistenceException"
	keyExactlyOnce          = "exactlyOnce"
	keyZkPath               = "zkPath"
	keyZkDatabase           = "zkDatabase"
	keyKeeperOnCluster      = "keeperOnCluster"
	keyTolerateMismatch     = "tolerateStateMismatch"
	keyDebeziumCDC          = "debeziumCDCEnabled"
	keyIgnorePartitions     = "ignorePartitionsWhenBatching"
	keyBufferCount          = "bufferCount"
	keyBufferFlushTime      = "bufferFlushTime"
	keyAutoEvolve           = "auto.evolve"
	keyClickhouseSettings   = "clickhouseSettings"
	keyErrorsRetryTimeout   = "errors.retry.timeout"

	// Native-protocol keys added by this connector.
	keyCompression      = "compression"
	keyBatchMaxRows     = "batch.max.rows"
	keyBatchMaxBytes    = "batch.max.bytes"
	keyPoolSize         = "connection.pool.size"
	keyPortMapHTTP      = "port.mapHttpPorts"
	keyPortRefuseHTTP   = "port.refuseHttpPorts"
	keyCDCVersionColumn = "cdc.version.column"
	keyCDCDeletedColumn = "cdc.deleted.column"
	keyCDCVersionField  = "cdc.version.field"
	keyAutoCreate       = "auto.create.tables"
	keyAutoCreateOrder  = "auto.create.tables.order.by"
	keyAutoCreatePart   = "auto.create.tables.partition.by"
	keyAutoCreateTTL    = "auto.create.tables.ttl"
)

// accepted but meaningless over the native protocol (docs/guides/clickhouse-sink.md).
var ignoredKeys = []string{
	"jdbcConnectionProperties", "ssl_socket_sni", "proxyType", "proxyHost", "proxyPort", "clientVersion",
	"bypassRowBinary", "dateTimeFormats", "customInsertFormat", "insertFormat", "bypassSchemaValidation",
	"bypassFieldCleanup", "reportInsertedOffsets", "auto.evolve.ddl.refresh.retries", "auto.evolve.struct.to.json",
	"clusterName",
}

func configDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	add := func(name string, t connect.ConfigType, def any, imp connect.Importance, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: t, Default: def, Importance: imp, Doc: doc, Group: "ClickHouse"})
	}
	add(keyHostname, connect.ConfigString, connect.NoDefault, connect.High, "ClickHouse hostname.")
	add(keyPort, connect.ConfigInt, "9000", connect.High, "ClickHouse native TCP port (9000, or 9440 with ssl). The HTTP ports of the official sink's examples are mapped to the native ones (8123 to 9000, 8443 to 9440) with a warning; see port.mapHttpPorts and port.refuseHttpPorts.")
	add(keyDatabase, connect.ConfigString, "default", connect.High, "ClickHouse database name.")
	add(keyUsername, connect.ConfigString, "default", connect.High, "ClickHouse user.")
	add(keyPassword, connect.ConfigPassword, "", connect.Low, "ClickHouse password.")
	add(keySSL, connect.ConfigBoolean, "false", connect.High, "Use TLS to connect.")
	add(keyTimeoutSeconds, connect.ConfigInt, "30", connect.Low, "Connect and query timeout in seconds.")
	add(keyRetryCount, connect.ConfigInt, "3", connect.Low, "Attempts for a retriable insert failure before giving the batch back to the runtime.")
	add(keyInsertTimeoutMs, connect.ConfigLong, "240000", connect.Low, "Timeout of one INSERT in milliseconds.")
	add(keyTopic2TableMap, connect.ConfigString, "", connect.Medium, "Map of topics to tables: topic1=table1,topic2=table2.")
	add(keyEnableDbTopicSplit, connect.ConfigBoolean, "false", connect.Low, "Topics named <db><dbTopicSplitChar><table> name the database.")
	add(keyDbTopicSplitChar, connect.ConfigString, "", connect.Low, "Separator of database and table in topic names.")
	add(keyTableRefreshInterval, connect.ConfigLong, "0", connect.Low, "Seconds between refreshes of the table-definition cache (0: refresh only on a miss or a mapping error).")
	add(keySuppressTableExists, connect.ConfigBoolean, "false", connect.Low, "Skip records whose table does not exist instead of failing.")
	add(keyExactlyOnce, connect.ConfigBoolean, "false", connect.High, "Keep per-partition inserted offset ranges in ClickHouse so that replays insert nothing twice.")
	add(keyZkPath, connect.ConfigString, "/kafka-connect", connect.Low, "Prefix of the exactly-once state keys.")
	add(keyZkDatabase, connect.ConfigString, "connect_state", connect.Low, "Name of the exactly-once state table (a ReplacingMergeTree in the sink's database; no Keeper needed).")
	add(keyKeeperOnCluster, connect.ConfigString, "", connect.Low, "Adds ON CLUSTER to the state table DDL.")
	add(keyTolerateMismatch, connect.ConfigBoolean, "false", connect.Low, "Accepted for compatibility with the official sink; has no effect: a state row of another sink fails the task, and replays below the committed range are dropped.")
	add(keyDebeziumCDC, connect.ConfigBoolean, "false", connect.Medium, "Values are Debezium envelopes: write after (c/r/u) or before (d) with the version and is_deleted columns.")
	add(keyIgnorePartitions, connect.ConfigBoolean, "false", connect.Low, "Batch records of all partitions of a topic together (ignored with exactlyOnce).")
	add(keyBufferCount, connect.ConfigLong, "0", connect.Low, "Buffer up to this many records per partition across polls before inserting (0: insert each poll's records).")
	add(keyBufferFlushTime, connect.ConfigLong, "0", connect.Low, "Insert buffered records after this many milliseconds even below bufferCount.")
	add(keyAutoEvolve, connect.ConfigBoolean, "false", connect.Low, "Add new record fields as columns (ALTER TABLE ADD COLUMN IF NOT EXISTS).")
	add(keyClickhouseSettings, connect.ConfigString, "", connect.Low, "Comma-separated ClickHouse settings k=v sent with every insert.")
	add(keyCompression, connect.ConfigString, "lz4", connect.Low, "Native protocol compression: lz4, zstd, none.")
	add(keyBatchMaxRows, connect.ConfigInt, "100000", connect.Medium, "Maximum rows in one insert block (one INSERT per block, so the dedup token covers the whole block).")
	add(keyBatchMaxBytes, connect.ConfigLong, "67108864", connect.Low, "Approximate maximum encoded bytes in one insert block.")
	add(keyPoolSize, connect.ConfigInt, "4", connect.Low, "Connections per task; partitions are inserted in parallel up to this number.")
	add(keyPortMapHTTP, connect.ConfigBoolean, nil, connect.Low, "For a port of ClickHouse's HTTP interface (8123, 8443): true maps it to the native port (9000, 9440), false uses it as given. Unset, such a port is mapped unless port.refuseHttpPorts is true.")
	add(keyPortRefuseHTTP, connect.ConfigBoolean, "false", connect.Low, "true refuses a port of ClickHouse's HTTP interface (8123, 8443) unless port.mapHttpPorts is set, instead of mapping it to the native port.")
	add(keyCDCVersionColumn, connect.ConfigString, "_version", connect.Medium, "Version column of ReplacingMergeTree(ver, is_deleted) tables written in CDC mode.")
	add(keyCDCDeletedColumn, connect.ConfigString, "is_deleted", connect.Medium, "is_deleted column (UInt8) written in CDC mode.")
	add(keyCDCVersionField, connect.ConfigString, "", connect.Medium, "Where the version comes from: kafka.offset, or a dotted path in the envelope (source.lsn), in the row image (updated_at) or in an unwrapped row (__lsn). Empty: the row's own version column, else the source position (PostgreSQL lsn, SQL Server commit_lsn/change_lsn, Oracle scn, MySQL file+pos+row), else source.ts_ms, else the Kafka offset (both with a warning).")
	add(keyAutoCreate, connect.ConfigBoolean, "false", connect.Medium, "Create missing tables from the record schema: ReplacingMergeTree(version, is_deleted) in CDC mode, MergeTree otherwise.")
	add(keyAutoCreateOrder, connect.ConfigString, "", connect.Low, "ORDER BY of auto-created tables (default: the record key's fields, else tuple()).")
	add(keyAutoCreatePart, connect.ConfigString, "", connect.Low, "PARTITION BY of auto-created tables (default: none).")
	add(keyAutoCreateTTL, connect.ConfigString, "", connect.Low, "TTL of auto-created tables, the hot window of a serving table, e.g. toDateTime(event_time) + INTERVAL 90 DAY (default: none, rows are kept). For an existing table: ALTER TABLE db.t MODIFY TTL <expression>.")
	for _, k := range ignoredKeys {
		d.Define(connect.ConfigKey{Name: k, Type: connect.ConfigString, Default: "", Importance: connect.Low, Group: "Ignored",
			Doc: "Accepted for compatibility with the official sink; has no effect over the native protocol."})
	}
	return d
}

// Config is the parsed sink configuration.
type Config struct {
	Host, Database, User, Password string
	Port                           int
	PortNote                       string // an HTTP interface port mapped to the native one, said how
	SSL                            bool
	Timeout, InsertTimeout         time.Duration
	RetryCount                     int
	RetryTimeout                   time.Duration
	TopicToTable                   map[string]string
	DBTopicSplit                   bool
	DBTopicSplitChar               string
	TableRefresh                   time.Duration
	SuppressTableExistence         bool
	ExactlyOnce                    bool
	StatePrefix, StateTable        string
	StateOnCluster                 string
	TolerateStateMismatch          bool
	DebeziumCDC                    bool
	IgnorePartitions               bool
	BufferCount                    int
	BufferFlushTime                time.Duration
	AutoEvolve                     bool
	Settings                       []Setting
	Compression                    string
	BatchMaxRows                   int
	BatchMaxBytes                  int
	PoolSize                       int
	VersionColumn, DeletedColumn   string
	VersionField                   string
	AutoCreate                     bool
	AutoCreateOrderBy              string
	AutoCreatePartitionBy          string
	AutoCreateTTL                  string

	unwrap      unwrapConfig // the connector's ExtractNewRecordState, if any
	cdcWarnings []string     // logged when a task starts
}

// Setting is a ClickHouse setting sent with inserts.
type Setting struct{ Key, Value string }

// ParseConfig parses and validates the sink properties.
func ParseConfig(props map[string]string) (*Config, error) {
	c, err := configDef().Parse(props)
	if err != nil {
		return nil, err
	}
	cfg := &Config{
		Host: c.String(keyHostname), Database: c.String(keyDatabase), User: c.String(keyUsername),
		Password: c.Password(keyPassword), Port: c.Int(keyPort), SSL: c.Bool(keySSL),
		Timeout:       time.Duration(c.Int(keyTimeoutSeconds)) * time.Second,
		InsertTimeout: time.Duration(c.Long(keyInsertTimeoutMs)) * time.Millisecond,
		RetryCount:    c.Int(keyRetryCount), TopicToTable: map[string]string{},
		DBTopicSplit: c.Bool(keyEnableDbTopicSplit), DBTopicSplitChar: c.String(keyDbTopicSplitChar),
		TableRefresh:           time.Duration(c.Long(keyTableRefreshInterval)) * time.Second,
		SuppressTableExistence: c.Bool(keySuppressTableExists), ExactlyOnce: c.Bool(keyExactlyOnce),
		StatePrefix: c.String(keyZkPath), StateTable: c.String(keyZkDatabase), StateOnCluster: c.String(keyKeeperOnCluster),
		TolerateStateMismatch: c.Bool(keyTolerateMismatch), DebeziumCDC: c.Bool(keyDebeziumCDC),
		IgnorePartitions: c.Bool(keyIgnorePartitions), BufferCount: int(c.Long(keyBufferCount)),
		BufferFlushTime: time.Duration(c.Long(keyBufferFlushTime)) * time.Millisecond,
		AutoEvolve:      c.Bool(keyAutoEvolve), Compression: strings.ToLower(c.String(keyCompression)),
		BatchMaxRows: c.Int(keyBatchMaxRows), BatchMaxBytes: int(c.Long(keyBatchMaxBytes)), PoolSize: c.Int(keyPoolSize),
		VersionColumn: c.String(keyCDCVersionColumn), DeletedColumn: c.String(keyCDCDeletedColumn),
		VersionField: c.String(keyCDCVersionField), AutoCreate: c.Bool(keyAutoCreate),
		AutoCreateOrderBy: c.String(keyAutoCreateOrder), AutoCreatePartitionBy: c.String(keyAutoCreatePart),
		AutoCreateTTL: c.String(keyAutoCreateTTL),
		RetryTimeout:  60 * time.Second,
	}
	if cfg.Password == "" {
		cfg.Password = strings.TrimSpace(props[keyPassword])
	}
	if v := strings.TrimSpace(props[keyErrorsRetryTimeout]); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, &connect.ConfigError{Name: keyErrorsRetryTimeout, Value: v, Message: "not a number"}
		}
		// The official docs give it in seconds ("60"), its code in milliseconds (60000): small values are seconds.
		if n < 1000 {
			cfg.RetryTimeout = time.Duration(n) * time.Second
		} else {
			cfg.RetryTimeout = time.Duration(n) * time.Millisecond
		}
	}
	if cfg.Port, cfg.PortNote, err = nativePort(cfg.Port, props[keyPortMapHTTP], props[keyPortRefuseHTTP]); err != nil {
		return nil, err
	}
	if m := strings.TrimSpace(c.String(keyTopic2TableMap)); m != "" {
		for _, pair := range strings.Split(m, ",") {
			k, v, ok := strings.Cut(pair, "=")
			if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
				return nil, &connect.ConfigError{Name: keyTopic2TableMap, Value: m, Message: "expected topic1=table1,topic2=table2"}
			}
			cfg.TopicToTable[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if s := strings.TrimSpace(c.String(keyClickhouseSettings)); s != "" {
		for _, pair := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(pair, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, &connect.ConfigError{Name: keyClickhouseSettings, Value: s, Message: "expected k1=v1,k2=v2"}
			}
			cfg.Settings = append(cfg.Settings, Setting{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	switch cfg.Compression {
	case "lz4", "zstd", "none", "":
	default:
		return nil, &connect.ConfigError{Name: keyCompression, Value: cfg.Compression, Message: "expected lz4, zstd or none"}
	}
	if cfg.BatchMaxRows <= 0 {
		return nil, &connect.ConfigError{Name: keyBatchMaxRows, Value: cfg.BatchMaxRows, Message: "must be positive"}
	}
	if cfg.PoolSize <= 0 {
		cfg.PoolSize = 1
	}
	if cfg.ExactlyOnce && cfg.BufferFlushTime > 0 {
		return nil, &connect.ConfigError{Name: keyBufferFlushTime, Value: cfg.BufferFlushTime, Message: "must be 0 with exactlyOnce (ranges must be reproducible)"}
	}
	if cfg.ExactlyOnce {
		cfg.IgnorePartitions = false
	}
	if cfg.DBTopicSplit && cfg.DBTopicSplitChar == "" {
		return nil, &connect.ConfigError{Name: keyDbTopicSplitChar, Value: "", Message: "required with enableDbTopicSplit"}
	}
	cfg.unwrap = readUnwrapConfig(props)
	if cfg.cdcWarnings, err = checkCDCConfig(cfg, cfg.unwrap); err != nil {
		return nil, err
	}
	return cfg, nil
}

// insertSettings are the settings sent with every insert; the user's values win, as in the official sink.
func (c *Config) insertSettings() []Setting {
	out := append([]Setting(nil), c.Settings...)
	has := map[string]bool{}
	for _, s := range c.Settings {
		has[s.Key] = true
	}
	if !has["async_insert"] {
		out = append(out, Setting{"async_insert", "0"})
	}
	return out
}

// versionColumn is the version column of a table written in CDC mode: the ReplacingMergeTree(ver, ...)
// argument, else cdc.version.column.
func (c *Config) versionColumn(tbl *tableInfo) string {
	if tbl.versionCol != "" {
		return tbl.versionCol
	}
	return c.VersionColumn
}

// deletedColumn is the is_deleted column of a table written in CDC mode.
func (c *Config) deletedColumn(tbl *tableInfo) string {
	if tbl.deletedCol != "" {
		return tbl.deletedCol
	}
	return c.DeletedColumn
}

// tableFor resolves the database and table of a topic.
func (c *Config) tableFor(topic string) (db, table string) {
	db, table = c.Database, topic
	if t, ok := c.TopicToTable[topic]; ok {
		table = t
	}
	if c.DBTopicSplit {
		if d, t, ok := strings.Cut(topic, c.DBTopicSplitChar); ok {
			db = d
			if _, mapped := c.TopicToTable[topic]; !mapped {
				table = t
			}
		}
	}
	return db, table
}

func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
}

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func (c *Config) String() string {
	return fmt.Sprintf("clickhouse{%s:%d db=%s exactlyOnce=%v cdc=%v}", c.Host, c.Port, c.Database, c.ExactlyOnce, c.DebeziumCDC)
}
