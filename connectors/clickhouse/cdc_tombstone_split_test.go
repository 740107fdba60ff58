package clickhouse

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// A bare tombstone deletes at the highest version of its key, whichever block or Put call carried that
// version; a tombstone right after a delete belongs to it, also when the delete is stale, whichever
// block or Put call carried the delete. The streams, key 2:
//
//	stale_create: create (110), update (115), a stale redelivery of the create (110), tombstone
//	stale_delete: create (115), delete (120), re-create (121), a stale redelivery of the delete, tombstone
//
// are cut into Put calls (each written by PreCommit) and into blocks (batch.max.rows) in every way, with
// and without exactly-once. Under FINAL, key 2 must be deleted after stale_create (the tombstone is bare)
// and re-created after stale_delete (the tombstone is the stale delete's); key 1 is a live control row.
func TestCDCTombstoneAfterStaleRedeliveryAcrossBlocks(t *testing.T) {
	s, _ := engine(t)
	ctx := context.Background()
	shape := deterministicShapes[0] // Debezium envelope
	type keyed struct {
		id   int
		e    detEvent
		prev int // index of the before image's event, or -1
	}
	streams := []struct {
		name    string
		sources map[string]bool // nil: every version source
		events  []keyed
		want    string // FINAL rows
	}{
		{"stale_create", nil, []keyed{{1, detEvent{"c", 100, "one"}, -1}, {2, detEvent{"c", 110, "created"}, -1},
			{2, detEvent{"u", 115, "updated"}, 1}, {2, detEvent{"c", 110, "created"}, -1}, {2, detEvent{"tomb", 0, ""}, -1}}, "1\tone"},
		// The delete's version is its source position (a row column version would be its before image's).
		{"stale_delete", map[string]bool{"postgres_lsn": true, "mysql_binlog": true, "sqlserver_lsn": true}, []keyed{
			{1, detEvent{"c", 100, "one"}, -1}, {2, detEvent{"c", 115, "created"}, -1}, {2, detEvent{"d", 120, ""}, 1},
			{2, detEvent{"c", 121, "again"}, -1}, {2, detEvent{"d", 120, ""}, 1}, {2, detEvent{"tomb", 0, ""}, -1}}, "1\tone\n2\tagain"},
	}
	for _, sm := range streams {
		for _, src := range deterministicSources {
			if sm.sources != nil && !sm.sources[src.name] {
				continue
			}
			stream := sm.events
			for cuts := 0; cuts < 1<<(len(stream)-1); cuts++ {
				for _, rows := range []string{"100000", "1", "2"} {
					for _, eo := range []string{"false", "true"} {
						name := fmt.Sprintf("%s/%s/puts=%05b/batch_rows=%s/exactlyOnce=%s", sm.name, src.name, cuts, rows, eo)
						if (rows != "100000" && cuts != 0) || (len(stream) > 5 && eo == "false" && cuts != 0) {
							continue // block cuts alone; Put cuts alone
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
							p := props(db, append([]string{"debeziumCDCEnabled", "true", "topic2TableMap", "shop.customers=customers",
								"batch.max.rows", rows, "exactlyOnce", eo}, src.props...)...)

							var recs []*connect.SinkRecord
							for i, k := range stream {
								var prev detEvent
								if k.prev >= 0 {
									prev = stream[k.prev].e
								}
								v, _ := shape.record(src, k.id, k.e, prev)
								recs = append(recs, &connect.SinkRecord{Topic: "shop.customers", Partition: 0, Offset: int64(i),
									Key: map[string]any{"customer_id": float64(k.id)}, Value: v})
							}
							task := startTask(t, p, nil)
							start := 0
							for i := range recs {
								if i == len(recs)-1 || cuts&(1<<i) != 0 {
									require.NoError(t, task.Put(ctx, recs[start:i+1]))
									_, err := task.PreCommit(ctx, nil)
									require.NoError(t, err)
									start = i + 1
								}
							}
							require.Equal(t, sm.want, query(t, s, "SELECT customer_id, customer_name FROM "+db+".customers FINAL ORDER BY customer_id"),
								"raw rows:\n%s", query(t, s, "SELECT * FROM "+db+".customers ORDER BY customer_id"))
						})
					}
				}
			}
		}
	}
}
