package reconcile

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"

	"github.com/connectd/connectd/connectors/clickhouse"
)

// chConn is one native-protocol connection to ClickHouse, with the sink's connection settings.
type chConn struct {
	cfg *clickhouse.Config
	c   *ch.Client
}

func dialClickHouse(ctx context.Context, cfg *clickhouse.Config, clientName string) (*chConn, error) {
	o := ch.Options{
		Address:     net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)),
		Database:    cfg.Database,
		User:        cfg.User,
		Password:    cfg.Password,
		ClientName:  clientName,
		DialTimeout: cfg.Timeout,
	}
	switch cfg.Compression {
	case "zstd":
		o.Compression = ch.CompressionZSTD
	case "none":
	default:
		o.Compression = ch.CompressionLZ4
	}
	if cfg.SSL {
		o.TLS = &tls.Config{ServerName: cfg.Host, MinVersion: tls.VersionTLS12}
	}
	c, err := ch.Dial(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: connect %s: %w", o.Address, err)
	}
	return &chConn{cfg: cfg, c: c}, nil
}

func (c *chConn) Close() error { return c.c.Close() }

func (c *chConn) exec(ctx context.Context, sql string) error {
	if err := c.c.Do(ctx, ch.Query{Body: sql}); err != nil {
		return fmt.Errorf("clickhouse: %s: %w", firstWords(sql), err)
	}
	return nil
}

// query runs sql whose n result columns are all Nullable(String) (or String, cast by the caller) and calls
// row for each row (nil: NULL).
func (c *chConn) query(ctx context.Context, sql string, n int, row func(vals []string, nulls []bool) error) error {
	cols := make([]*proto.ColNullable[string], n)
	res := make(proto.Results, n)
	for i := range cols {
		cols[i] = proto.NewColNullable[string](new(proto.ColStr))
		res[i] = proto.ResultColumn{Data: cols[i]} // the name is taken from the first block
	}
	vals := make([]string, n)
	nulls := make([]bool, n)
	err := c.c.Do(ctx, ch.Query{Body: sql, Result: res, OnResult: func(ctx context.Context, b proto.Block) error {
		for r := 0; r < b.Rows; r++ {
			for i, col := range cols {
				v := col.Row(r)
				vals[i], nulls[i] = v.Value, !v.Set
			}
			if err := row(vals, nulls); err != nil {
				return err
			}
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("clickhouse: %s: %w", firstWords(sql), err)
	}
	return nil
}

// strings runs a query of n columns, each cast to Nullable(String) by the caller, and returns its rows.
func (c *chConn) rows(ctx context.Context, sql string, n int) ([][]string, error) {
	var out [][]string
	err := c.query(ctx, sql, n, func(vals []string, _ []bool) error {
		out = append(out, append([]string(nil), vals...))
		return nil
	})
	return out, err
}

// chTable is what reconcile needs to know of a ClickHouse table.
type chTable struct {
	db, name       string
	columns        []string
	types          map[string]string
	engine         string
	version        string // ReplacingMergeTree version column
	deleted        string // ReplacingMergeTree is_deleted column
	replacing      bool
	createQuery    string
	sortingKeyExpr string
}

func (t *chTable) quoted() string { return quoteIdent(t.db) + "." + quoteIdent(t.name) }

func (c *chConn) describe(ctx context.Context, db, table string) (*chTable, error) {
	t := &chTable{db: db, name: table, types: map[string]string{}}
	rows, err := c.rows(ctx, "SELECT CAST(name AS Nullable(String)), CAST(type AS Nullable(String)) FROM system.columns WHERE database = "+
		quoteString(db)+" AND table = "+quoteString(table)+" AND default_kind NOT IN ('MATERIALIZED', 'ALIAS') ORDER BY position", 2)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("clickhouse: table %s.%s does not exist (or the user has no grant on it)", db, table)
	}
	for _, r := range rows {
		t.columns = append(t.columns, r[0])
		t.types[r[0]] = r[1]
	}
	info, err := c.rows(ctx, "SELECT CAST(engine AS Nullable(String)), CAST(engine_full AS Nullable(String)), CAST(create_table_query AS Nullable(String)), CAST(sorting_key AS Nullable(String)) FROM system.tables WHERE database = "+
		quoteString(db)+" AND name = "+quoteString(table), 4)
	if err != nil {
		return nil, err
	}
	if len(info) == 1 {
		t.engine, t.createQuery, t.sortingKeyExpr = info[0][0], info[0][2], info[0][3]
		if strings.HasPrefix(t.engine, "Replacing") || strings.Contains(t.engine, "ReplacingMergeTree") {
			t.replacing = true
			args := engineArgs(info[0][1])
			if len(args) > 0 {
				t.version = args[0]
			}
			if len(args) > 1 {
				t.deleted = args[1]
			}
		}
	}
	return t, nil
}

// engineArgs returns the column arguments of "ReplacingMergeTree(ver, is_deleted) ORDER BY ...".
func engineArgs(full string) []string {
	i := strings.Index(full, "ReplacingMergeTree(")
	if i < 0 {
		return nil
	}
	rest := full[i+len("ReplacingMergeTree("):]
	j := strings.IndexByte(rest, ')')
	if j < 0 {
		return nil
	}
	var out []string
	for _, a := range strings.Split(rest[:j], ",") {
		a = strings.Trim(strings.TrimSpace(a), "`\"")
		if a != "" && !strings.HasPrefix(a, "'") {
			out = append(out, a)
		}
	}
	return out
}

// chOffsets are the ClickHouse sink's committed positions for one table, from its exactly-once state table.
type chOffsets struct {
	next     map[tp]int64 // next offset not yet in the table (AFTER max + 1)
	inFlight map[tp]bool  // a block is between BEFORE/STAGED and AFTER: its records may or may not be in the table
	end      map[tp]int64 // per in-flight partition: the offset after the block
}

// stateOffsets reads the exactly-once state rows `<zkPath>/<db>.<table>/<topic>-<partition>` of the table.
// found is false when the state table does not exist.
func (c *chConn) stateOffsets(ctx context.Context, db, table string) (o chOffsets, found bool, err error) {
	o = chOffsets{next: map[tp]int64{}, inFlight: map[tp]bool{}, end: map[tp]int64{}}
	stateDB := db
	exists, err := c.rows(ctx, "SELECT CAST(count() AS Nullable(String)) FROM system.tables WHERE database = "+quoteString(stateDB)+
		" AND name = "+quoteString(c.cfg.StateTable), 1)
	if err != nil {
		return o, false, err
	}
	if len(exists) == 0 || exists[0][0] == "0" {
		return o, false, nil
	}
	prefix := c.cfg.StatePrefix + "/" + db + "." + table + "/"
	rows, err := c.rows(ctx, "SELECT CAST(key AS Nullable(String)), CAST(toString(minOffset) AS Nullable(String)), CAST(toString(maxOffset) AS Nullable(String)), CAST(state AS Nullable(String)) FROM "+
		quoteIdent(stateDB)+"."+quoteIdent(c.cfg.StateTable)+" FINAL WHERE startsWith(key, "+quoteString(prefix)+")", 4)
	if err != nil {
		return o, true, err
	}
	for _, r := range rows {
		rest := strings.TrimPrefix(r[0], prefix)
		i := strings.LastIndexByte(rest, '-')
		if i <= 0 {
			continue
		}
		p, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			continue
		}
		minOff, _ := strconv.ParseInt(r[1], 10, 64)
		maxOff, _ := strconv.ParseInt(r[2], 10, 64)
		k := tp{Topic: rest[:i], Partition: int32(p)}
		switch r[3] {
		case "AFTER":
			o.next[k] = maxOff + 1
		default: // BEFORE, STAGED: [min, max] may be partly or wholly in the table
			o.next[k] = minOff
			o.inFlight[k] = true
			o.end[k] = maxOff + 1
		}
	}
	return o, true, nil
}

func firstWords(sql string) string {
	f := strings.Fields(sql)
	if len(f) > 6 {
		f = f[:6]
	}
	return strings.Join(f, " ")
}

// setState makes the ClickHouse sink's exactly-once state of the table say that it holds exactly the
// records before next (per partition); partitions absent from next hold nothing. Without a state table
// (exactlyOnce off) there is nothing to set.
func (c *chConn) setState(ctx context.Context, db, table string, next map[tp]int64) error {
	cur, found, err := c.stateOffsets(ctx, db, table)
	if err != nil || !found {
		return err
	}
	all := map[tp]int64{}
	for k := range cur.next {
		all[k] = 0
	}
	for k, v := range next {
		all[k] = v
	}
	if len(all) == 0 {
		return nil
	}
	var (
		key, state proto.ColStr
		mn, mx     proto.ColInt64
		ver        proto.ColUInt64
	)
	v := uint64(time.Now().UnixNano())
	for k, n := range all {
		key.Append(c.cfg.StatePrefix + "/" + db + "." + table + "/" + k.Topic + "-" + strconv.Itoa(int(k.Partition)))
		mn.Append(n - 1)
		mx.Append(n - 1)
		state.Append("AFTER")
		ver.Append(v)
	}
	err = c.c.Do(ctx, ch.Query{
		Body: "INSERT INTO " + quoteIdent(db) + "." + quoteIdent(c.cfg.StateTable) + " (key, minOffset, maxOffset, state, ver) VALUES",
		Input: proto.Input{{Name: "key", Data: &key}, {Name: "minOffset", Data: &mn}, {Name: "maxOffset", Data: &mx},
			{Name: "state", Data: &state}, {Name: "ver", Data: &ver}},
		Settings: []ch.Setting{ch.SettingInt("async_insert", 0), ch.SettingInt("insert_deduplicate", 0)},
	})
	if err != nil {
		return fmt.Errorf("clickhouse: setting the exactly-once state of %s.%s: %w", db, table, err)
	}
	return nil
}
