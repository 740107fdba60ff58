package clickhouse

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/chdb/chdbtest"
)

// A tombstone deletes at the highest version of its key, whichever block or Put call carried that
// version. The stream, key 2:
//
//	create (110), update (115), a stale redelivery of the create (110), tombstone
//
// is cut into Put calls (each written by PreCommit) and into blocks (batch.max.rows) in every way, with
// and without exactly-once. Key 2 must be deleted under FINAL; key 1 is a live control row.
func TestCDCTombstoneAfterStaleRedeliveryAcrossBlocks(t *testing.T) {
	s, _ := engine(t)
	ctx := context.Background()
	shape := deterministicShapes[0] // Debezium envelope
	type keyed struct {
		id int
		e  detEvent
	}
	stream := []keyed{{1, detEvent{"c", 100, "one"}}, {2, detEvent{"c", 110, "created"}}, {2, detEvent{"u", 115, "updated"}},
		{2, detEvent{"c", 110, "created"}}, {2, detEvent{"tomb", 0, ""}}}
	for _, src := range deterministicSources {
		for cuts := 0; cuts < 1<<(len(stream)-1); cuts++ {
			for _, rows := range []string{"100000", "1", "2"} {
				for _, eo := range []string{"false", "true"} {
					name := fmt.Sprintf("%s/puts=%04b/batch_rows=%s/exactlyOnce=%s", src.name, cuts, rows, eo)
					if rows != "100000" && cuts != 0 {
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
							if k.e.op == "u" {
								prev = stream[i-1].e
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
						require.Equal(t, "1\tone", query(t, s, "SELECT customer_id, customer_name FROM "+db+".customers FINAL ORDER BY customer_id"),
							"raw rows:\n%s", query(t, s, "SELECT * FROM "+db+".customers ORDER BY customer_id"))
					})
				}
			}
		}
	}
}
