package clickhouse

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// The deterministic stale-redelivery case for every version source:
//
//	round 1 (one partition, one commit), key 2: create (version 110), update (115), delete (120), tombstone;
//	round 2 (a new task, next commit): a stale redelivery of the create (110), then of the update (115).
//
// Key 2 must stay deleted under FINAL. Key 1 (created at 100) is a live control row.

// versionSource describes how one kind of change stream carries its ordering value.
type versionSource struct {
	name     string
	verCol   string // ReplacingMergeTree version column
	verType  string
	props    []string
	source   func(ver int) map[string]any // the envelope's source block
	addField func(ver int) map[string]any // what ExtractNewRecordState's add.fields puts into the row
	rowVer   bool                         // the version is a column of the row image (row_version)
}

var deterministicSources = []versionSource{
	{name: "table_column", verCol: "row_version", verType: "UInt64", rowVer: true,
		source: func(int) map[string]any {
			return map[string]any{"connector": "postgresql", "ts_ms": float64(1_700_000_000_000)}
		},
		addField: func(int) map[string]any { return nil }},
	{name: "postgres_lsn", verCol: "_version", verType: "UInt64",
		source:   func(v int) map[string]any { return map[string]any{"connector": "postgresql", "lsn": float64(v)} },
		addField: func(v int) map[string]any { return map[string]any{"__lsn": float64(v)} }},
	{name: "mysql_binlog", verCol: "_version", verType: "UInt64",
		source: func(v int) map[string]any {
			f, p := binlogPosition(v)
			return map[string]any{"connector": "mysql", "file": f, "pos": float64(p), "row": float64(0)}
		},
		addField: func(v int) map[string]any {
			f, p := binlogPosition(v)
			return map[string]any{"__file": f, "__pos": float64(p), "__row": float64(0)}
		}},
	{name: "oracle_scn", verCol: "_version", verType: "UInt64",
		source:   func(v int) map[string]any { return map[string]any{"connector": "oracle", "scn": oracleSCN(v)} },
		addField: func(v int) map[string]any { return map[string]any{"__scn": oracleSCN(v)} }},
	{name: "sqlserver_lsn", verCol: "_version", verType: "UInt128",
		source: func(v int) map[string]any {
			return map[string]any{"connector": "sqlserver", "change_lsn": sqlServerLSN(v), "commit_lsn": sqlServerLSN(v)}
		},
		addField: func(v int) map[string]any {
			return map[string]any{"__change_lsn": sqlServerLSN(v), "__commit_lsn": sqlServerLSN(v)}
		}},
	{name: "source_ts_ms", verCol: "_version", verType: "UInt64",
		source: func(v int) map[string]any {
			return map[string]any{"connector": "mongodb", "ts_ms": float64(1_700_000_000_000 + v)}
		},
		addField: func(v int) map[string]any { return map[string]any{"__source_ts_ms": float64(1_700_000_000_000 + v)} }},
}

// binlogPosition places the versions across a binlog file rollover whose name gains a digit: as strings
// "mysql-bin.1000000" < "mysql-bin.999999", and the later file's positions are smaller.
func binlogPosition(v int) (string, int) {
	switch {
	case v < 110:
		return "mysql-bin.999998", 500 + v
	case v == 110:
		return "mysql-bin.999999", 9000
	default:
		return "mysql-bin.1000000", 4 + (v-115)*50
	}
}

// oracleSCN is beyond int64 (a "big SCN"), as a decimal string.
func oracleSCN(v int) string { return fmt.Sprintf("100000000000000000%02d", v-90) }

// sqlServerLSN crosses a VLF whose sequence number is above 16 bits, so the value needs more than 64 bits.
func sqlServerLSN(v int) string {
	if v <= 110 {
		return fmt.Sprintf("0001002a:%08x:0003", 0xf00+v)
	}
	return fmt.Sprintf("0001002b:%08x:0001", v-100)
}

type detEvent struct {
	op   string // c, u, d, tomb
	ver  int
	name string
}

// streamShape is how the events reach the sink.
type streamShape struct {
	name   string
	cdc    bool
	record func(src versionSource, id int, e, prev detEvent) (value any, skip bool)
}

func rowImage(src versionSource, id int, e detEvent) map[string]any {
	m := map[string]any{"customer_id": float64(id), "customer_name": e.name}
	if src.rowVer {
		m["row_version"] = float64(e.ver)
	}
	return m
}

var deterministicShapes = []streamShape{
	{name: "envelope", cdc: true, record: func(src versionSource, id int, e, prev detEvent) (any, bool) {
		if e.op == "tomb" {
			return nil, false
		}
		env := map[string]any{"op": e.op, "source": src.source(e.ver), "before": nil, "after": nil, "ts_ms": float64(1_800_000_000_000)}
		if prev.op != "" {
			env["before"] = rowImage(src, id, prev)
		}
		if e.op != "d" {
			env["after"] = rowImage(src, id, e)
		}
		return env, false
	}},
	// ExtractNewRecordState with delete.tombstone.handling.mode=rewrite-with-tombstone and add.fields.
	{name: "unwrapped_rewrite", cdc: true, record: func(src versionSource, id int, e, prev detEvent) (any, bool) {
		if e.op == "tomb" {
			return nil, false
		}
		img, deleted := e, "false"
		if e.op == "d" {
			img, deleted = prev, "true"
		}
		m := rowImage(src, id, img)
		m["__deleted"] = deleted
		for k, v := range src.addField(e.ver) {
			m[k] = v
		}
		return m, false
	}},
	// ExtractNewRecordState with delete.tombstone.handling.mode=tombstone: the delete arrives as a bare
	// tombstone and Debezium's own tombstone is dropped.
	{name: "unwrapped_tombstone", cdc: true, record: func(src versionSource, id int, e, prev detEvent) (any, bool) {
		switch e.op {
		case "tomb":
			return nil, true
		case "d":
			return nil, false
		}
		m := rowImage(src, id, e)
		for k, v := range src.addField(e.ver) {
			m[k] = v
		}
		return m, false
	}},
}

func TestCDCStaleRedeliveryAfterDeleteAndTombstone(t *testing.T) {
	s, _ := engine(t)
	ctx := context.Background()
	for _, src := range deterministicSources {
		for _, shape := range deterministicShapes {
			for _, split := range []bool{false, true} {
				name := src.name + "/" + shape.name
				if split {
					// The tombstone is the first record of the next commit, after a restart.
					name += "/tombstone_next_commit"
				}
				t.Run(name, func(t *testing.T) {
					db := chdbtest.Database(t)
					cols := "customer_id UInt64, customer_name String, "
					if src.rowVer {
						cols += "row_version UInt64, is_deleted UInt8"
					} else {
						cols += fmt.Sprintf("%s %s, is_deleted UInt8", src.verCol, src.verType)
					}
					chdbtest.MustExec(t, s, fmt.Sprintf("CREATE TABLE %s.customers (%s) ENGINE = ReplacingMergeTree(%s, is_deleted) ORDER BY customer_id",
						db, cols, src.verCol))
					p := props(db, append([]string{"debeziumCDCEnabled", "true", "topic2TableMap", "shop.customers=customers"}, src.props...)...)

					type keyed struct {
						id int
						e  detEvent
					}
					round1 := []keyed{{1, detEvent{"c", 100, "one"}}, {2, detEvent{"c", 110, "created"}}, {2, detEvent{"u", 115, "updated"}},
						{2, detEvent{"d", 120, ""}}, {2, detEvent{"tomb", 0, ""}}}
					// ... and an exact redelivery of the update, whose version the delete of a tombstone or of a
					// before image (table column) derives from.
					round2 := []keyed{{2, detEvent{"c", 110, "created"}}, {2, detEvent{"u", 115, "updated"}}}
					var off int64
					prev := map[int]detEvent{}
					build := func(evs []keyed) []*connect.SinkRecord {
						var out []*connect.SinkRecord
						for _, k := range evs {
							v, skip := shape.record(src, k.id, k.e, prev[k.id])
							if k.e.op == "c" || k.e.op == "u" {
								prev[k.id] = k.e
							}
							if skip {
								continue
							}
							out = append(out, &connect.SinkRecord{Topic: "shop.customers", Partition: 0, Offset: off,
								Key: map[string]any{"customer_id": float64(k.id)}, Value: v})
							off++
						}
						return out
					}
					r1 := build(round1)
					prev[2] = detEvent{} // the stale create is redelivered as it was first published
					r2 := build(round2)
					if split {
						i := len(r1) - 1
						for r1[i].Value != nil {
							i--
						}
						r2 = append(append([]*connect.SinkRecord(nil), r1[i:]...), r2...)
						r1 = r1[:i]
					}

					task := startTask(t, p, nil)
					require.NoError(t, task.Put(ctx, r1))
					_, err := task.PreCommit(ctx, nil)
					require.NoError(t, err)
					require.NoError(t, task.Stop())
					task2 := startTask(t, p, nil)
					require.NoError(t, task2.Put(ctx, r2))
					_, err = task2.PreCommit(ctx, nil)
					require.NoError(t, err)

					require.Equal(t, "1\tone", query(t, s, "SELECT customer_id, customer_name FROM "+db+".customers FINAL ORDER BY customer_id"),
						"raw rows:\n%s", query(t, s, "SELECT * FROM "+db+".customers ORDER BY customer_id"))
				})
			}
		}
	}
}
