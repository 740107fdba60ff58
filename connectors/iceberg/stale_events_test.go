package iceberg

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// versionSource is one way of ordering the events of a key: a table column or a position in
// the source log carried by the Debezium envelope (or by ExtractNewRecordState's added fields).
// pos maps an abstract position (higher = later in the source log) to the record's fields.
type versionSource struct {
	name  string
	props map[string]string
	// source returns the envelope's source block for position p (nil: none).
	source func(p int64) map[string]any
	// unwrapped: records as ExtractNewRecordState emits them (add.fields=op,...), the added
	// fields returned by extra; deletes are rewritten rows with __deleted=true.
	unwrapped bool
	extra     func(p int64) map[string]any
}

// mysqlPos spreads positions over binlog files whose names roll over a digit (999999 ->
// 1000000), with positions restarting low in each file: neither the file name as a string
// nor pos alone orders them.
func mysqlPos(p int64) (file string, pos int64) {
	if p < 112 {
		return "mysql-bin.999999", 9000 + p
	}
	return "mysql-bin.1000000", 4 + p
}

// hexLSN renders SQL Server's change_lsn of position p; its middle part crosses 0x9 -> 0xa
// and is written in upper case for some positions: only a comparison by value orders them.
func hexLSN(p int64) string {
	s := fmt.Sprintf("00000027:%08x:0005", p*16)
	if p%2 == 0 {
		s = fmt.Sprintf("00000027:%08X:0005", p*16)
	}
	return s
}

// oracleSCN renders an SCN beyond int64 for position p, crossing a digit count.
func oracleSCN(p int64) string {
	if p < 112 {
		return fmt.Sprintf("99999999999999999%03d", p) // 20 digits
	}
	return fmt.Sprintf("1000000000000000000%03d", p) // 22 digits
}

var versionSources = []versionSource{
	{name: "table-column", props: map[string]string{KeyVersionColumn: "updated_at"},
		source: func(p int64) map[string]any { return map[string]any{"connector": "postgresql", "lsn": int64(1)} }},
	{name: "postgres-lsn", props: map[string]string{KeyVersionColumn: "source.lsn"},
		source: func(p int64) map[string]any { return map[string]any{"connector": "postgresql", "lsn": 1000 + p} }},
	{name: "mysql-binlog", props: map[string]string{KeyVersionColumn: "source.pos"},
		source: func(p int64) map[string]any {
			f, pos := mysqlPos(p)
			return map[string]any{"connector": "mysql", "file": f, "pos": pos, "row": int64(0)}
		}},
	{name: "sqlserver-change-lsn", props: map[string]string{KeyVersionColumn: "source.change_lsn"},
		source: func(p int64) map[string]any {
			return map[string]any{"connector": "sqlserver", "change_lsn": hexLSN(p), "commit_lsn": hexLSN(p)}
		}},
	{name: "oracle-scn", props: map[string]string{KeyVersionColumn: "source.scn"},
		source: func(p int64) map[string]any { return map[string]any{"connector": "oracle", "scn": oracleSCN(p)} }},
	{name: "source-auto-mysql", props: map[string]string{KeyVersionColumn: "source"},
		source: func(p int64) map[string]any {
			f, pos := mysqlPos(p)
			return map[string]any{"connector": "mysql", "file": f, "pos": pos, "row": int64(0)}
		}},
	{name: "source-ts-ms", props: map[string]string{KeyVersionColumn: "source.ts_ms"},
		source: func(p int64) map[string]any {
			return map[string]any{"connector": "postgresql", "ts_ms": 1700000000000 + p}
		}},
	{name: "unwrapped-lsn", props: map[string]string{KeyVersionColumn: "source.lsn", KeyCDCField: "__op"}, unwrapped: true,
		extra: func(p int64) map[string]any { return map[string]any{"__lsn": 1000 + p} }},
	{name: "unwrapped-binlog", props: map[string]string{KeyVersionColumn: "source.pos", KeyCDCField: "__op"}, unwrapped: true,
		extra: func(p int64) map[string]any {
			f, pos := mysqlPos(p)
			return map[string]any{"__source_file": f, "__source_pos": pos}
		}},
}

// cdcRec builds one schemaless JSON change event of key id at position p: a Debezium envelope,
// or with unwrapped the row ExtractNewRecordState makes of it; op "tomb" is the tombstone.
func (vs versionSource) cdcRec(op string, id int64, name string, p, offset int64) *connect.SinkRecord {
	r := &connect.SinkRecord{Topic: "cdc", Key: map[string]any{"id": id}, Offset: offset,
		Timestamp: 1700000000000 + offset, OriginalTopic: "cdc", OriginalOffset: offset}
	if op == "tomb" {
		return r
	}
	row := map[string]any{"id": id, "name": name, "updated_at": p}
	if vs.unwrapped {
		row["__op"] = op
		for k, v := range vs.extra(p) {
			row[k] = v
		}
		if op == "d" {
			row["__deleted"] = "true"
		} else {
			row["__deleted"] = "false"
		}
		r.Value = row
		return r
	}
	env := map[string]any{"op": op, "before": nil, "after": row, "source": vs.source(p), "ts_ms": 1700000000000 + offset}
	if op == "d" {
		env["before"], env["after"] = row, nil
	}
	r.Value = env
	return r
}

// runRounds puts each round into a task and commits it (one snapshot per round); it returns
// DuckDB's view (id|name) of the table after each round, read in one DuckDB run over the
// metadata file of every round.
func runRounds(t *testing.T, props map[string]string, table string, rounds [][]*connect.SinkRecord) [][]string {
	t.Helper()
	task, _ := startTask(t, props)
	defer task.Stop()
	var scans []string
	var last string
	scanOf := make([]int, len(rounds)) // a round that wrote nothing has the previous metadata
	for i, recs := range rounds {
		require.NoError(t, task.Put(context.Background(), recs))
		require.True(t, task.coord.CommitNow(context.Background()), "round %d: %v", i, task.coord.stats().LastError)
		_, meta := loadTable(t, props, table)
		if meta != last {
			last = meta
			meta = strings.TrimPrefix(strings.TrimPrefix(meta, "file://"), "file:")
			scans = append(scans, fmt.Sprintf("SELECT %d AS r, id, name FROM iceberg_scan('%s')", len(scans), meta))
		}
		scanOf[i] = len(scans) - 1
	}
	byScan := make([][]string, len(scans))
	for _, row := range duckRows(t, last, strings.Join(scans, " UNION ALL ")) {
		r, rest, _ := strings.Cut(row, "|")
		i, err := strconv.Atoi(r)
		require.NoError(t, err)
		byScan[i] = append(byScan[i], rest)
	}
	out := make([][]string, len(rounds))
	for i := range rounds {
		out[i] = byScan[scanOf[i]]
	}
	return out
}

// TestDeletedKeyStaysDeleted is the stale-redelivery case for every version source: round 1
// holds a create (110), update (115), delete (120) and the Debezium tombstone of key 2; round 2
// a stale redelivery of the create (110). Key 2 must stay deleted, and <table>__deletes holds
// the delete's version.
func TestDeletedKeyStaysDeleted(t *testing.T) {
	for _, vs := range versionSources {
		t.Run(vs.name, func(t *testing.T) {
			extra := map[string]string{KeyTables: "shop.c", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"}
			for k, v := range vs.props {
				extra[k] = v
			}
			props, _ := sinkProps(t, extra)
			off := int64(0)
			next := func() int64 { off++; return off - 1 }
			rounds := [][]*connect.SinkRecord{
				{
					vs.cdcRec("c", 1, "one", 100, next()),
					vs.cdcRec("c", 2, "create", 110, next()),
					vs.cdcRec("u", 2, "update", 115, next()),
					vs.cdcRec("d", 2, "update", 120, next()),
					vs.cdcRec("tomb", 2, "", 0, next()),
				},
				{vs.cdcRec("c", 2, "create", 110, next())}, // stale redelivery
			}
			got := runRounds(t, props, "shop.c", rounds)
			require.Equal(t, []string{"1|one"}, got[0], "after round 1")
			require.Equal(t, []string{"1|one"}, got[1], "after the stale redelivery")
			cat, _ := loadTable(t, props, "shop.c")
			tomb, err := cat.LoadTable(context.Background(), icetable.TombstoneIdent(catalog.ToIdentifier("shop.c")))
			require.NoError(t, err, "every versioned delete reaches <table>__deletes")
			require.Equal(t, []string{"2"}, duckRows(t, tomb.MetadataLocation(), "SELECT id FROM t"))
		})
	}
}

// ev is one change event of a scenario: op c/u/d or "tomb", key, name, source position.
type ev struct {
	op   string
	id   int64
	name string
	p    int64
}

// TestStaleEventsAcrossCommits: each scenario is a stream cut into commits; DuckDB's view after
// every commit must be the model's (highest version per key wins, a delete wins at its
// version, a tombstone deletes at the highest version known for the key).
func TestStaleEventsAcrossCommits(t *testing.T) {
	scenarios := []struct {
		name   string
		rounds [][]ev
		want   [][]string // DuckDB rows (id|name) after each round
	}{
		{"tombstone-only-delete", [][]ev{
			{{"c", 1, "one", 100}, {"c", 2, "create", 110}},
			{{"tomb", 2, "", 0}},      // deletes at the live row's version (110)
			{{"c", 2, "create", 110}}, // redelivered create: stays deleted
			{{"u", 2, "newer", 111}},  // a newer event brings it back
			{{"tomb", 2, "", 0}},      // and a bare tombstone again deletes it
			{{"u", 2, "newer", 111}},  // at 111
		}, [][]string{{"1|one", "2|create"}, {"1|one"}, {"1|one"}, {"1|one", "2|newer"}, {"1|one"}, {"1|one"}}},
		{"delete-then-recreate", [][]ev{
			{{"c", 2, "create", 110}},
			{{"d", 2, "create", 120}, {"tomb", 2, "", 0}},
			{{"c", 2, "recreated", 130}},
			{{"u", 2, "stale", 125}, {"d", 2, "create", 120}},                     // older than the re-create
			{{"u", 2, "stale", 125}, {"d", 2, "create", 120}, {"tomb", 2, "", 0}}, // the stale delete's tombstone is stale with it
		}, [][]string{{"2|create"}, nil, {"2|recreated"}, {"2|recreated"}, {"2|recreated"}}},
		{"stale-delete-then-tombstone-after-recreate", [][]ev{ // a tombstone after a stale delete belongs to it
			{{"c", 2, "create", 113}},
			{{"d", 2, "create", 116}, {"tomb", 2, "", 0}},
			{{"c", 2, "recreated", 124}},
			{{"d", 2, "create", 116}, {"d", 2, "create", 116}, {"tomb", 2, "", 0}},
			{{"c", 2, "recreated", 124}},
			{{"d", 2, "create", 116}, {"tomb", 2, "", 0}, {"u", 2, "stale", 120}, {"u", 2, "newer", 130}},
			{{"d", 2, "create", 116}, {"tomb", 2, "", 0}, {"u", 2, "between", 125}}, // not above the live row's 130
		}, [][]string{{"2|create"}, nil, {"2|recreated"}, {"2|recreated"}, {"2|recreated"}, {"2|newer"}, {"2|newer"}}},
		{"replayed-window-after-recreate", [][]ev{ // a source replays delete, tombstone and re-create
			{{"c", 2, "create", 110}, {"d", 2, "create", 120}, {"tomb", 2, "", 0}},
			{{"c", 2, "recreated", 130}},
			{{"d", 2, "create", 120}, {"tomb", 2, "", 0}, {"c", 2, "recreated", 130}},
		}, [][]string{nil, {"2|recreated"}, {"2|recreated"}}},
		{"stale-delete-and-tombstone-split-by-commits", [][]ev{ // the mark on the live row carries the delete over
			{{"c", 2, "create", 110}, {"d", 2, "create", 120}, {"tomb", 2, "", 0}},
			{{"c", 2, "recreated", 130}},
			{{"d", 2, "create", 120}},
			{{"tomb", 2, "", 0}},
			{{"tomb", 2, "", 0}},                             // a second tombstone of that delete
			{{"u", 2, "stale", 115}},                         // a later event: the next tombstone is bare
			{{"tomb", 2, "", 0}, {"u", 2, "recreated", 130}}, // deletes at 130, which the redelivery does not outrank
		}, [][]string{nil, {"2|recreated"}, {"2|recreated"}, {"2|recreated"}, {"2|recreated"}, {"2|recreated"}, nil}},
		{"recreate-in-one-commit", [][]ev{
			{{"c", 2, "create", 110}, {"d", 2, "create", 120}, {"tomb", 2, "", 0}, {"c", 2, "recreated", 130}},
			{{"u", 2, "stale", 115}},
		}, [][]string{{"2|recreated"}, {"2|recreated"}}},
		{"stale-after-delete", [][]ev{
			{{"c", 2, "create", 110}, {"u", 2, "update", 115}},
			{{"d", 2, "update", 120}, {"tomb", 2, "", 0}},
			{{"u", 2, "update", 115}},
			{{"c", 2, "create", 110}, {"u", 2, "update", 115}, {"d", 2, "update", 120}},
		}, [][]string{{"2|update"}, nil, nil, nil}},
		{"stale-before-tombstone-in-commit", [][]ev{
			{{"c", 2, "create", 110}, {"u", 2, "update", 115}},
			{{"d", 2, "update", 120}, {"u", 2, "update", 115}, {"tomb", 2, "", 0}}, // redelivery between delete and tombstone
			{{"c", 2, "create", 110}},
		}, [][]string{{"2|update"}, nil, nil}},
		{"stale-then-bare-tombstone-in-commit", [][]ev{ // the tombstone outranks the stale event: live row's version
			{{"c", 2, "create", 110}, {"u", 2, "update", 123}},
			{{"c", 2, "create", 118}, {"tomb", 2, "", 0}},
			{{"u", 2, "update", 123}},
		}, [][]string{{"2|update"}, nil, nil}},
		{"bare-tombstone-then-stale-delete-in-commit", [][]ev{ // the stale delete does not replace the tombstone
			{{"c", 2, "create", 110}, {"u", 2, "update", 142}},
			{{"tomb", 2, "", 0}, {"d", 2, "create", 126}},
			{{"u", 2, "update", 142}},
		}, [][]string{{"2|update"}, nil, nil}},
		{"bare-tombstone-then-newer-in-commit", [][]ev{ // a newer event after the tombstone brings the key back
			{{"c", 2, "create", 110}},
			{{"tomb", 2, "", 0}, {"c", 2, "stale", 105}, {"u", 2, "newer", 130}},
			{{"tomb", 2, "", 0}, {"u", 2, "stale", 120}},
		}, [][]string{{"2|create"}, {"2|newer"}, nil}},
		{"duplicate-after-tombstone-in-commit", [][]ev{
			{{"c", 2, "create", 110}, {"u", 2, "update", 115}, {"tomb", 2, "", 0}, {"u", 2, "update", 115}},
			{{"u", 2, "update", 115}},
		}, [][]string{nil, nil}},
		{"exact-duplicates", [][]ev{
			{{"c", 1, "one", 100}, {"c", 1, "one", 100}, {"c", 2, "create", 110}, {"u", 2, "update", 115}, {"u", 2, "update", 115}},
			{{"u", 2, "update", 115}, {"c", 1, "one", 100}},
			{{"d", 2, "update", 120}, {"tomb", 2, "", 0}, {"d", 2, "update", 120}, {"tomb", 2, "", 0}},
			{{"d", 2, "update", 120}, {"tomb", 2, "", 0}},
		}, [][]string{{"1|one", "2|update"}, {"1|one", "2|update"}, {"1|one"}, {"1|one"}}},
	}
	sources := map[string]versionSource{}
	for _, vs := range versionSources {
		sources[vs.name] = vs
	}
	for _, src := range []string{"table-column", "postgres-lsn", "mysql-binlog", "unwrapped-lsn"} {
		vs := sources[src]
		t.Run(src, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					extra := map[string]string{KeyTables: "shop.c", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"}
					for k, v := range vs.props {
						extra[k] = v
					}
					props, _ := sinkProps(t, extra)
					var rounds [][]*connect.SinkRecord
					off := int64(0)
					for _, r := range sc.rounds {
						var recs []*connect.SinkRecord
						for _, e := range r {
							recs = append(recs, vs.cdcRec(e.op, e.id, e.name, e.p, off))
							off++
						}
						rounds = append(rounds, recs)
					}
					got := runRounds(t, props, "shop.c", rounds)
					for i := range sc.want {
						require.Equal(t, sc.want[i], got[i], "after round %d", i)
					}
				})
			}
		})
	}
}

// TestEnvelopeVersionOnExistingTable: a table written before its version came from the
// envelope gets the metadata column added (a schema change); rows written before hold null and
// lose to any versioned event, and the stale-redelivery case holds from then on.
func TestEnvelopeVersionOnExistingTable(t *testing.T) {
	vs := versionSources[1] // postgres-lsn
	require.Equal(t, "postgres-lsn", vs.name)
	base := map[string]string{KeyTables: "shop.c", KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"}
	props, _ := sinkProps(t, base)
	got := runRounds(t, props, "shop.c", [][]*connect.SinkRecord{{
		vs.cdcRec("c", 1, "one", 100, 0), vs.cdcRec("c", 2, "create", 110, 1),
	}})
	require.Equal(t, []string{"1|one", "2|create"}, got[0])
	cat, _ := loadTable(t, props, "shop.c")
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.c"))
	require.NoError(t, err)
	_, has := tbl.Schema().FindFieldByName(DefaultCDCVersionColumn)
	require.False(t, has)

	props[KeyVersionColumn] = "source.lsn"
	props[KeyCDCVersionColumn] = "_pos"
	got = runRounds(t, props, "shop.c", [][]*connect.SinkRecord{
		{vs.cdcRec("u", 2, "update", 115, 2), vs.cdcRec("d", 2, "update", 120, 3), vs.cdcRec("tomb", 2, "", 0, 4), vs.cdcRec("u", 1, "one-b", 105, 5)},
		{vs.cdcRec("c", 2, "create", 110, 6), vs.cdcRec("c", 1, "one", 100, 7)},
	})
	require.Equal(t, []string{"1|one-b"}, got[0])
	require.Equal(t, []string{"1|one-b"}, got[1])
	_, meta := loadTable(t, props, "shop.c")
	require.Equal(t, []string{"1|one-b|041105"}, duckRows(t, meta, "SELECT id, name, _pos FROM t"))
	tomb, err := cat.LoadTable(context.Background(), icetable.TombstoneIdent(catalog.ToIdentifier("shop.c")))
	require.NoError(t, err)
	require.Equal(t, []string{"2|041120"}, duckRows(t, tomb.MetadataLocation(), "SELECT id, _pos FROM t"))
}
