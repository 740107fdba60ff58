package iceberg

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/commit"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
	"github.com/connectd/connectd/connectors/iceberg/scd"
)

// Class names accepted for the connector (Apache and Tabular).
const (
	ApacheClass  = "org.apache.iceberg.connect.IcebergSinkConnector"
	TabularClass = "io.tabular.iceberg.connect.IcebergSinkConnector"
)

// Config keys. Keys marked "extension" are ours (the upstream sinks lack them); all live under
// the same prefixes.
const (
	KeyTables               = "iceberg.tables"
	KeyDynamicEnabled       = "iceberg.tables.dynamic-enabled"
	KeyRouteField           = "iceberg.tables.route-field"
	KeyDefaultCommitBranch  = "iceberg.tables.default-commit-branch"
	KeyDefaultIDColumns     = "iceberg.tables.default-id-columns"
	KeyDefaultPartitionBy   = "iceberg.tables.default-partition-by"
	KeyAutoCreateEnabled    = "iceberg.tables.auto-create-enabled"
	KeyEvolveSchemaEnabled  = "iceberg.tables.evolve-schema-enabled"
	KeySchemaForceOptional  = "iceberg.tables.schema-force-optional"
	KeySchemaCaseInsens     = "iceberg.tables.schema-case-insensitive"
	KeyUpsertModeEnabled    = "iceberg.tables.upsert-mode-enabled" // Tabular
	KeyCDCField             = "iceberg.tables.cdc-field"           // Tabular
	KeyAutoCreatePropsPfx   = "iceberg.tables.auto-create-props."
	KeyWritePropsPfx        = "iceberg.tables.write-props."
	KeyWritePropsPfxTabular = "iceberg.table.write-props." // what Tabular's code reads
	KeyCatalogName          = "iceberg.catalog"
	KeyCatalogPfx           = "iceberg.catalog."
	KeyControlTopic         = "iceberg.control.topic"
	KeyControlGroupID       = "iceberg.control.group-id" // Tabular
	KeyControlGroupIDPrefix = "iceberg.control.group-id-prefix"
	KeyConnectGroupID       = "iceberg.connect.group-id"
	KeyCommitIntervalMs     = "iceberg.control.commit.interval-ms"
	KeyCommitTimeoutMs      = "iceberg.control.commit.timeout-ms"
	KeyCommitThreads        = "iceberg.control.commit.threads"
	KeyTxnPrefix            = "iceberg.coordinator.transactional.prefix"
	KeyTxnSuffix            = "iceberg.coordinator.transactional.suffix" // the Apache sink's, set per task
	KeyHadoopConfDir        = "iceberg.hadoop-conf-dir"
	KeyExecutorKeepAliveMs  = "iceberg.coordinator-executor-keep-alive-timeout-ms"
	// Extensions.
	KeyVersionColumn      = "iceberg.tables.upsert-version-column"
	KeyCDCVersionColumn   = "iceberg.tables.cdc-version-column"
	KeyMaxBufferedRecords = "iceberg.control.commit.max-buffered-records"
	KeyTargetFileSize     = "iceberg.tables.target-file-size-bytes"
	KeySortOrder          = "iceberg.tables.sort-order"
	KeyCommitRetryMs      = "iceberg.control.commit.retry-backoff-ms"
	KeyCoordination       = "iceberg.control.coordination"
	KeyControlProtocol    = "iceberg.control.protocol"
	KeyKafkaPfx           = "iceberg.kafka."
	// KeyMaintenancePfx starts the maintenance keys; package maintenance reads the policy ones.
	KeyMaintenancePfx      = "iceberg.tables.maintenance."
	KeyMaintenanceInterval = KeyMaintenancePfx + "interval-ms"
	KeyMaintenanceActions  = KeyMaintenancePfx + "actions"
)

// DefaultCDCVersionColumn is the metadata column holding envelope versions.
const DefaultCDCVersionColumn = "_cdc_version"

// per-table keys: iceberg.table.<name>.<suffix>
const (
	tblIDColumns     = "id-columns"
	tblPartitionBy   = "partition-by"
	tblCommitBranch  = "commit-branch"
	tblRouteRegex    = "route-regex"
	tblVersionColumn = "version-column"     // extension
	tblCDCVersion    = "cdc-version-column" // extension: metadata column of envelope versions
	tblRawCDC        = "raw-cdc"            // extension: write the raw CDC history model
	tblSortOrder     = "sort-order"         // extension: sort order of a table the sink creates
)

// ConfigDef documents every key (unknown keys are accepted, as the JVM does).
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	s := func(name string, def any, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.ConfigString, Default: def, Importance: connect.Medium, Doc: doc})
	}
	b := func(name string, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Doc: doc})
	}
	l := func(name string, def any, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.ConfigLong, Default: def, Importance: connect.Medium, Doc: doc})
	}
	// The Apache sink's keys first, as IcebergSinkConfig defines them (names, types, defaults, importance, docs,
	// order; testdata/iceberg/configdef), then Tabular's and connectd's own.
	key := func(name string, typ connect.ConfigType, def any, imp connect.Importance, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: typ, Default: def, Importance: imp, Doc: doc})
	}
	key(KeyTables, connect.ConfigList, nil, connect.High, "Comma-delimited list of destination tables")
	b(KeyDynamicEnabled, "Enable dynamic routing to tables based on a record value")
	s(KeyRouteField, nil, "Source record field for routing records to tables")
	s(KeyDefaultCommitBranch, nil, "Default branch for commits")
	s(KeyDefaultIDColumns, nil, "Default ID columns for tables, comma-separated")
	s(KeyDefaultPartitionBy, nil, "Default partition spec to use when creating tables, comma-separated")
	b(KeyAutoCreateEnabled, "Set to true to automatically create destination tables, false otherwise")
	b(KeySchemaForceOptional, "Set to true to set columns as optional during table create and evolution, false to respect schema")
	b(KeySchemaCaseInsens, "Set to true to look up table columns by case-insensitive name, false for case-sensitive")
	b(KeyEvolveSchemaEnabled, "Set to true to add any missing record fields to the table schema, false otherwise")
	s(KeyCatalogName, "iceberg", "Iceberg catalog name")
	s(KeyControlTopic, "control-iceberg", "Name of the control topic")
	key(KeyControlGroupIDPrefix, connect.ConfigString, "cg-control-", connect.Low, "Prefix of the control consumer group")
	key(KeyConnectGroupID, connect.ConfigString, nil, connect.Low, "Name of the Connect consumer group, should not be set under normal conditions")
	key(KeyCommitIntervalMs, connect.ConfigInt, "300000", connect.Medium, "Coordinator interval for performing Iceberg table commits, in millis")
	key(KeyCommitTimeoutMs, connect.ConfigInt, "30000", connect.Medium, "Coordinator time to wait for worker responses before committing, in millis")
	d.Define(connect.ConfigKey{Name: KeyCommitThreads, Type: connect.ConfigInt, Default: strconv.Itoa(2 * runtime.GOMAXPROCS(0)),
		DefaultDoc: "cores × 2", Importance: connect.Medium, Doc: "Coordinator threads to use for table commits, default is (cores * 2)"})
	key(KeyTxnPrefix, connect.ConfigString, nil, connect.Low, "Optional prefix of the transactional id for the coordinator")
	s(KeyHadoopConfDir, nil, "If specified, Hadoop config files in this directory will be loaded")
	// accepted and unused: connectd's committer keeps no thread pool to expire
	key(KeyExecutorKeepAliveMs, connect.ConfigLong, int64(120000), connect.Low, "config to control coordinator executor keep alive time")
	b(KeyUpsertModeEnabled, "Set to true to treat all appends as upserts (Tabular)")
	s(KeyCDCField, nil, "Source record field that identifies the type of operation (insert, update, or delete) (Tabular)")
	s(KeyControlGroupID, nil, "Tabular's control group id (accepted; source offsets live in the snapshot summary)")
	s(KeyVersionColumn, nil, "Extension: what orders versions of one key in upsert mode: a column of the row (e.g. updated_at), or a position in the Debezium envelope (source, source.lsn, source.pos, source.scn, source.change_lsn, source.commit_lsn, source.ts_ms); the highest wins, older records are dropped")
	s(KeyCDCVersionColumn, DefaultCDCVersionColumn, "Extension: metadata column added to upsert tables whose version comes from the Debezium envelope; holds each row's normalized source position")
	l(KeyMaxBufferedRecords, int64(200000), "Extension: records a task buffers in memory that trigger an early commit; at twice this, put waits for the commit")
	l(KeyTargetFileSize, int64(0), "Extension: target data file size in bytes (0: table default)")
	s(KeySortOrder, nil, "Extension: sort order of the tables the sink creates (iceberg.table.<name>.sort-order per table), comma-separated terms <column> [asc|desc] [nulls first|nulls last], e.g. \"id, ts desc\"; the writer sorts the rows of each data file and compaction the rows of each file it writes by a table's own sort order")
	l(KeyCommitRetryMs, int64(1000), "Extension: backoff before retrying a failed commit round")
	l(KeyMaintenanceInterval, int64(0), "Extension: interval of the maintenance of the connector's tables (manifest rewrite, compaction, snapshot expiry, orphan removal, see docs/MAINTENANCE.md) by the process that commits, between its commit rounds; 0 turns it off")
	s(maintenance.KeyRetentionColumn, nil, "Extension: timestamp or date column by which maintenance ages rows out of the connector's tables (iceberg.table.<name>.retention-column per table, e.g. for raw CDC history tables), with "+maintenance.KeyRetentionMaxAge+"; see docs/MAINTENANCE.md")
	l(maintenance.KeyRetentionMaxAge, nil, "Extension: rows whose retention column is older than this many milliseconds are deleted by each maintenance run (iceberg.table.<name>.retention-max-age-ms per table): whole partitions of a time transform of the column dropped, other rows deleted, their files removed by the snapshot expiry")
	s(KeyMaintenanceActions, "rewrite-manifests,compact,expire-snapshots,remove-orphans", "Extension: the maintenance actions the connector runs, comma-separated")
	s(KeyCoordination, "auto", "Extension: how commits are coordinated: topic (one committer for all worker processes, through the control topic), local (one committer per worker process), auto (topic in distributed mode, local in standalone and dev mode)")
	s(KeyControlProtocol, "auto", "Extension: the control topic's protocol: apache (the Apache Iceberg sink's events, so that JVM workers running the Apache sink can host tasks of the same connector), connectd (this sink's own, which upsert and CDC tables need), auto (apache unless upsert mode, a cdc-field, id columns or a version column are set)")
	// SCD Type 2 materialization (docs/SCD.md); scd.ParseConfig reads them.
	s(scd.KeyTables, nil, "Extension: history tables to materialize as SCD Type 2 tables, comma-separated namespace.name")
	l(scd.KeyInterval, int64(0), "Extension: interval of the SCD runs inside the connector, on the process that commits, beside its commit loop; 0: never")
	s(scd.KeyTargetSuffix, "_scd", "Extension: the SCD table of <history> is <history><suffix> (iceberg.table.<history>.scd-table names one)")
	s(scd.KeyAttributes, nil, "Extension: attribute columns taken from the row image, comma-separated (iceberg.table.<history>.scd-attributes per table); unset: one attributes column with the whole row image as JSON")
	b(scd.KeySkipUnchanged, "Extension: leave out versions whose attributes equal the previous version's")
	b(scd.KeyDeleteMarkers, "Extension: write a row per delete with is_deleted=true")
	l(scd.KeyTargetFile, nil, "Extension: target size of the SCD data files in bytes (unset: the table's)")
	s(scd.KeyKeyColumn, nil, "Extension: key column of a history table that is not the raw CDC model")
	s(scd.KeyVersionColumn, nil, "Extension: version column of a history table that is not the raw CDC model")
	s(scd.KeyValidFromColumn, nil, "Extension: validity time column of a history table that is not the raw CDC model")
	s(scd.KeyOpColumn, nil, "Extension: operation column (optional) of a history table that is not the raw CDC model")
	s(scd.KeyPayloadColumn, nil, "Extension: JSON row image column (optional) of a history table that is not the raw CDC model; without it the attributes are its columns")
	return d
}

// SinkConfig is the parsed connector configuration.
type SinkConfig struct {
	Name             string
	Tables           []string
	DynamicEnabled   bool
	RouteField       string
	DefaultBranch    string
	DefaultIDColumns []string
	DefaultPartition []string
	SortOrder        []icetable.SortTerm // iceberg.tables.sort-order
	AutoCreate       bool
	Evolve           bool
	ForceOptional    bool
	CaseInsensitive  bool
	Upsert           bool
	CDCField         string
	VersionColumn    string
	CDCVersionColumn string
	AutoCreateProps  map[string]string
	WriteProps       map[string]string
	CatalogName      string
	CatalogProps     map[string]string
	GroupID          string
	CommitInterval   time.Duration
	CommitTimeout    time.Duration
	MaxBuffered      int
	TargetFileSize   int64
	RetryBackoff     time.Duration
	CommitThreads    int
	ControlTopic     string
	Coordination     string            // auto, local, topic
	ControlProtocol  commit.Protocol   // apache or connectd (auto resolved by ParseConfig)
	KafkaProps       map[string]string // iceberg.kafka.* (control topic client overrides)
	Topics           []string          // the connector's topics (or TopicsRegex)
	TopicsRegex      string
	PerTable         map[string]*PerTable
	// MaintenanceInterval is how often the committer maintains the tables (0: never).
	MaintenanceInterval time.Duration
	maintain            MaintainTable
	// SCD is the SCD Type 2 materialization of iceberg.tables.scd.* (scd_schedule.go).
	SCD scd.Config
	raw map[string]string
}

// PerTable holds iceberg.table.<name>.* settings.
type PerTable struct {
	IDColumns        []string
	PartitionBy      []string
	CommitBranch     string
	RouteRegex       *regexp.Regexp
	VersionColumn    string
	CDCVersionColumn string
	RawCDC           bool
	SortOrder        []icetable.SortTerm
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ParseConfig parses connector/task properties.
func ParseConfig(props map[string]string) (*SinkConfig, error) {
	c, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	sc := &SinkConfig{
		Name:             props["name"],
		Tables:           c.List(KeyTables),
		DynamicEnabled:   c.Bool(KeyDynamicEnabled),
		RouteField:       c.String(KeyRouteField),
		DefaultBranch:    c.String(KeyDefaultCommitBranch),
		DefaultIDColumns: splitList(c.String(KeyDefaultIDColumns)),
		DefaultPartition: icetable.ParsePartitionBy(c.String(KeyDefaultPartitionBy)),
		AutoCreate:       c.Bool(KeyAutoCreateEnabled),
		Evolve:           c.Bool(KeyEvolveSchemaEnabled),
		ForceOptional:    c.Bool(KeySchemaForceOptional),
		CaseInsensitive:  c.Bool(KeySchemaCaseInsens),
		Upsert:           c.Bool(KeyUpsertModeEnabled),
		CDCField:         c.String(KeyCDCField),
		VersionColumn:    c.String(KeyVersionColumn),
		CDCVersionColumn: c.String(KeyCDCVersionColumn),
		AutoCreateProps:  connect.WithPrefix(props, KeyAutoCreatePropsPfx),
		WriteProps:       connect.WithPrefix(props, KeyWritePropsPfx),
		CatalogName:      c.String(KeyCatalogName),
		CommitInterval:   time.Duration(c.Long(KeyCommitIntervalMs)) * time.Millisecond,
		CommitTimeout:    time.Duration(c.Long(KeyCommitTimeoutMs)) * time.Millisecond,
		MaxBuffered:      int(c.Long(KeyMaxBufferedRecords)),
		TargetFileSize:   c.Long(KeyTargetFileSize),
		RetryBackoff:     time.Duration(c.Long(KeyCommitRetryMs)) * time.Millisecond,
		CommitThreads:    c.Int(KeyCommitThreads),
		ControlTopic:     c.String(KeyControlTopic),
		Coordination:     strings.ToLower(c.String(KeyCoordination)),
		ControlProtocol:  commit.Protocol(strings.ToLower(c.String(KeyControlProtocol))),
		KafkaProps:       connect.WithPrefix(props, KeyKafkaPfx),
		Topics:           splitList(props["topics"]),
		TopicsRegex:      props["topics.regex"],
		PerTable:         map[string]*PerTable{},
		raw:              props,
	}
	if sc.SortOrder, err = icetable.ParseSortOrder(c.String(KeySortOrder)); err != nil {
		return nil, &connect.ConfigError{Name: KeySortOrder, Value: c.String(KeySortOrder), Message: err.Error()}
	}
	for k, v := range connect.WithPrefix(props, KeyWritePropsPfxTabular) {
		if _, ok := sc.WriteProps[k]; !ok {
			sc.WriteProps[k] = v
		}
	}
	switch sc.Coordination {
	case "auto", "local", "topic":
	default:
		return nil, &connect.ConfigError{Name: KeyCoordination, Value: sc.Coordination, Message: "must be one of auto, local, topic"}
	}
	sc.CatalogProps = map[string]string{}
	for k, v := range connect.WithPrefix(props, KeyCatalogPfx) {
		sc.CatalogProps[k] = v
	}
	sc.GroupID = c.String(KeyConnectGroupID)
	if sc.GroupID == "" {
		sc.GroupID = "connect-" + sc.Name
	}
	if len(sc.Tables) == 0 && !sc.DynamicEnabled {
		return nil, &connect.ConfigError{Name: KeyTables, Message: "Must specify table name(s) with static routing or enable dynamic routing"}
	}
	if len(sc.Tables) > 0 && sc.DynamicEnabled {
		return nil, &connect.ConfigError{Name: KeyTables, Message: "Cannot specify both static and dynamic table names"}
	}
	if sc.DynamicEnabled && sc.RouteField == "" {
		return nil, &connect.ConfigError{Name: KeyRouteField, Message: "Must specify a route field if using dynamic routing"}
	}
	if len(sc.CatalogProps) == 0 {
		return nil, &connect.ConfigError{Name: KeyCatalogPfx + "*", Message: "Catalog properties are required (iceberg.catalog.type or catalog-impl, uri, warehouse, ...)"}
	}
	if sc.CommitThreads <= 0 {
		sc.CommitThreads = 2 * runtime.GOMAXPROCS(0) // Apache: cores x 2
	}
	if sc.CommitInterval <= 0 {
		sc.CommitInterval = 300 * time.Second
	}
	if ms := c.Long(KeyMaintenanceInterval); ms < 0 {
		return nil, &connect.ConfigError{Name: KeyMaintenanceInterval, Value: ms, Message: "must be 0 (off) or positive"}
	} else if ms > 0 {
		if sc.maintain, err = connectorMaintenance(props); err != nil {
			var ce *connect.ConfigError
			if errors.As(err, &ce) {
				return nil, ce
			}
			return nil, &connect.ConfigError{Name: KeyMaintenanceInterval, Value: ms, Message: err.Error()}
		}
		sc.MaintenanceInterval = time.Duration(ms) * time.Millisecond
	}
	if sc.SCD, err = scd.ParseConfig(props); err != nil {
		return nil, &connect.ConfigError{Name: scd.KeyPrefix + "*", Message: err.Error()}
	}
	// per-table settings: iceberg.table.<ns.name>.<suffix>; names contain dots, suffixes do not.
	for k, v := range props {
		if !strings.HasPrefix(k, "iceberg.table.") || strings.HasPrefix(k, KeyWritePropsPfxTabular) {
			continue
		}
		rest := k[len("iceberg.table."):]
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue
		}
		name, suffix := rest[:i], rest[i+1:]
		pt := sc.table(name)
		switch suffix {
		case tblIDColumns:
			pt.IDColumns = splitList(v)
		case tblPartitionBy:
			pt.PartitionBy = icetable.ParsePartitionBy(v)
		case tblCommitBranch:
			pt.CommitBranch = v
		case tblRouteRegex:
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, &connect.ConfigError{Name: k, Value: v, Message: err.Error()}
			}
			pt.RouteRegex = re
		case tblVersionColumn:
			pt.VersionColumn = v
		case tblCDCVersion:
			pt.CDCVersionColumn = v
		case tblSortOrder:
			terms, err := icetable.ParseSortOrder(v)
			if err != nil {
				return nil, &connect.ConfigError{Name: k, Value: v, Message: err.Error()}
			}
			pt.SortOrder = terms
		case maintenance.TableRetentionColumn, maintenance.TableRetentionMaxAge:
			ck, ak := maintenance.TableRetentionKeys(name)
			if _, err := maintenance.ParseRetention(props, ck, ak); err != nil {
				return nil, err
			}
		case tblRawCDC:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, &connect.ConfigError{Name: k, Value: v, Message: err.Error()}
			}
			pt.RawCDC = b
		}
	}
	switch sc.ControlProtocol {
	case "auto":
		// a connector the Apache sink can host (appends) speaks its protocol
		sc.ControlProtocol = commit.ProtocolApache
		if sc.keyed() {
			sc.ControlProtocol = commit.ProtocolConnectd
		}
	case commit.ProtocolApache:
		if sc.Upsert || sc.CDCField != "" {
			return nil, &connect.ConfigError{Name: KeyControlProtocol, Value: string(sc.ControlProtocol),
				Message: "the Apache sink's control events cannot carry what upsert mode and cdc-field need (the snapshot each answer was planned on); use the connectd protocol"}
		}
	case commit.ProtocolConnectd:
	default:
		return nil, &connect.ConfigError{Name: KeyControlProtocol, Value: string(sc.ControlProtocol), Message: "must be one of auto, apache, connectd"}
	}
	return sc, nil
}

// keyed reports whether the config asks for upserts or deletes by key: upsert mode, a cdc-field, id columns
// or a version column, for all tables or one.
func (c *SinkConfig) keyed() bool {
	if c.Upsert || c.CDCField != "" || len(c.DefaultIDColumns) > 0 || c.VersionColumn != "" {
		return true
	}
	for _, pt := range c.PerTable {
		if !pt.RawCDC && (len(pt.IDColumns) > 0 || pt.VersionColumn != "") {
			return true
		}
	}
	return false
}

func (c *SinkConfig) table(name string) *PerTable {
	pt, ok := c.PerTable[name]
	if !ok {
		pt = &PerTable{}
		c.PerTable[name] = pt
	}
	return pt
}

// TableOptions resolves the effective options of one table.
func (c *SinkConfig) TableOptions(name string) icetable.TableOptions {
	pt := c.PerTable[name]
	if pt == nil {
		pt = &PerTable{}
	}
	o := icetable.TableOptions{
		IDColumns:       pt.IDColumns,
		PartitionBy:     pt.PartitionBy,
		CommitBranch:    pt.CommitBranch,
		AutoCreate:      c.AutoCreate,
		AutoCreateProps: c.AutoCreateProps,
		WriteProps:      c.WriteProps,
		EvolveSchema:    c.Evolve,
		ForceOptional:   c.ForceOptional,
		CaseInsensitive: c.CaseInsensitive,
		UpsertMode:      c.Upsert,
		VersionColumn:   pt.VersionColumn,
		OffsetsKey:      icetable.OffsetsSummaryKey(c.GroupID),
		TargetFileSize:  c.TargetFileSize,
	}
	if len(o.IDColumns) == 0 {
		o.IDColumns = c.DefaultIDColumns
	}
	if len(o.PartitionBy) == 0 {
		o.PartitionBy = c.DefaultPartition
	}
	if o.SortOrder = pt.SortOrder; len(o.SortOrder) == 0 {
		o.SortOrder = c.SortOrder
	}
	if o.CommitBranch == "" {
		o.CommitBranch = c.DefaultBranch
	}
	if o.VersionColumn == "" {
		o.VersionColumn = c.VersionColumn
	}
	if icerow.IsEnvelopePath(o.VersionColumn) {
		o.CDCVersionColumn = pt.CDCVersionColumn
		if o.CDCVersionColumn == "" {
			o.CDCVersionColumn = c.CDCVersionColumn
		}
		if o.CDCVersionColumn == "" {
			o.CDCVersionColumn = DefaultCDCVersionColumn
		}
	}
	if o.TargetFileSize == 0 {
		if v, err := strconv.ParseInt(c.WriteProps["write.target-file-size-bytes"], 10, 64); err == nil {
			o.TargetFileSize = v
		}
	}
	if pt.RawCDC {
		o.IDColumns, o.VersionColumn, o.CDCVersionColumn, o.UpsertMode = nil, "", "", false
		if len(pt.PartitionBy) == 0 {
			o.PartitionBy = nil
		}
	}
	o.DeltaMode = len(o.IDColumns) > 0 && (c.Upsert || c.CDCField != "")
	return o
}

// routing is the configuration's table routing, as the task's router takes it.
func (c *SinkConfig) routing() icerow.Routing {
	r := icerow.Routing{Tables: c.Tables, RouteField: c.RouteField, Dynamic: c.DynamicEnabled, CDCField: c.CDCField,
		RouteRegex: map[string]*regexp.Regexp{}}
	for name, pt := range c.PerTable {
		if pt.RouteRegex != nil {
			r.RouteRegex[name] = pt.RouteRegex
		}
	}
	return r
}

func (c *SinkConfig) String() string {
	return fmt.Sprintf("iceberg sink %q tables=%v", c.Name, c.Tables)
}
