package clickhouse

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/customercdc"
)

// The customers stream and its current-state table.
const customerCurrentDDL = customercdc.CurrentDDL

var (
	customerRow     = customercdc.Row
	sourceSchema    = customercdc.Source
	envelopeSchema  = customercdc.Envelope
	customerKey     = customercdc.Key
	cdcStream       = customercdc.Stream
	expectedCurrent = customercdc.ExpectedCurrent
)

// cdcEvent is one change of a customer row.
type cdcEvent = customercdc.Event

// partitioned spreads events over partitions by key, as Debezium's producer does, and gives offsets.
func partitioned(events []cdcEvent, topic string, parts int, value func(cdcEvent) any) [][]*connect.SinkRecord {
	out := make([][]*connect.SinkRecord, parts)
	for _, e := range events {
		p := int(e.ID) % parts
		key := connect.NewStruct(customerKey).MustPut("customer_id", e.ID)
		out[p] = append(out[p], &connect.SinkRecord{Topic: topic, Partition: int32(p), KeySchema: customerKey, Key: key,
			ValueSchema: envelopeSchema, Value: value(e), Offset: int64(len(out[p])), Timestamp: e.TS.UnixMilli()})
	}
	return out
}

func TestCDCToCustomerCurrentFinal(t *testing.T) {
	s, _ := engine(t)
	for _, tc := range []struct {
		name  string
		value func(cdcEvent) any
	}{
		{"schema", func(e cdcEvent) any { return e.Envelope() }},
		{"schemaless", func(e cdcEvent) any { return e.Schemaless() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := chdbtest.Database(t)
			chdbtest.MustExec(t, s, fmt.Sprintf(customerCurrentDDL, db))
			events := cdcStream(60, 900, 7)
			// A producer retry re-publishes 40 old events at later offsets: out-of-order versions.
			rnd := rand.New(rand.NewSource(3))
			stream := append([]cdcEvent(nil), events...)
			for i := 0; i < 40; i++ {
				stream = append(stream, events[rnd.Intn(len(events)/2)])
			}
			parts := partitioned(stream, "shop.public.customers", 3, tc.value)
			p := props(db, "debeziumCDCEnabled", "true", "topic2TableMap", "shop.public.customers=customer_current",
				"batch.max.rows", "97")
			ctx := context.Background()

			// First task: delivers everything in uneven batches and commits part way.
			task := startTask(t, p, nil)
			committed := map[int]int{}
			for p, recs := range parts {
				for i := 0; i < len(recs); {
					n := min(1+rnd.Intn(120), len(recs)-i)
					require.NoError(t, task.Put(ctx, recs[i:i+n]))
					require.NoError(t, task.Put(ctx, recs[i:i+n])) // redelivery of the same batch
					i += n
					if i < len(recs)/2 {
						committed[p] = i
					}
				}
			}
			_, err := task.PreCommit(ctx, nil)
			require.NoError(t, err)
			// Second task (a restart that lost its commits): replays every partition from the middle,
			// re-inserting old versions after newer ones.
			task2 := startTask(t, p, nil)
			for p, recs := range parts {
				require.NoError(t, task2.Put(ctx, recs[committed[p]:]))
			}
			raw := query(t, s, "SELECT count(), countIf(is_deleted = 1), uniqExact(customer_id) FROM "+db+".customer_current")
			t.Logf("rows written: %s (rows, deletes, keys); task1 %d rows in %d blocks", raw, task.written.rows, task.written.blocks)
			require.Greater(t, task.written.blocks, int64(9))
			require.NotContains(t, raw, "\t0\t")
			got := query(t, s, "SELECT customer_id, customer_name, customer_status, source_version, toUnixTimestamp64Milli(event_time) FROM "+
				db+".customer_current FINAL ORDER BY customer_id")
			require.Equal(t, expectedCurrent(events), got)
			require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".customer_current FINAL WHERE is_deleted = 1"))
		})
	}
}
