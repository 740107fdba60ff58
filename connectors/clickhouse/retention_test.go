package clickhouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// TestAutoCreateTTLHotWindow: a table the sink creates with auto.create.tables.ttl keeps the hot window only:
// after a merge, rows whose event time is older than the horizon are gone and younger ones are intact; the
// same TTL set on an existing table with the documented ALTER does the same.
func TestAutoCreateTTLHotWindow(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	ctx := context.Background()
	row := connect.StructBuilder().Name("events.Value").
		Field("id", connect.Int64Schema).Field("event_time", connect.TimestampSchema).MustBuild()
	now := time.Now().UTC()
	records := func(topic string) []*connect.SinkRecord {
		var out []*connect.SinkRecord
		for i := 0; i < 20; i++ {
			age := time.Duration(i*10) * 24 * time.Hour // 0, 10, ..., 190 days old
			v := connect.NewStruct(row).MustPut("id", int64(i)).MustPut("event_time", now.Add(-age))
			out = append(out, &connect.SinkRecord{Topic: topic, Offset: int64(i), ValueSchema: row, Value: v})
		}
		return out
	}
	const ttl = "toDateTime(event_time) + INTERVAL 90 DAY"
	task := startTask(t, props(db, "auto.create.tables", "true", keyAutoCreateTTL, ttl), nil)
	require.NoError(t, task.Put(ctx, records("hot")))
	require.Contains(t, query(t, s, "SELECT engine_full FROM system.tables WHERE database = '"+db+"' AND name = 'hot'"), "TTL toDateTime(event_time) + toIntervalDay(90)")

	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".existing (id Int64, event_time DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY id")
	require.NoError(t, startTask(t, props(db), nil).Put(ctx, records("existing")))
	require.Equal(t, "20", query(t, s, "SELECT count() FROM "+db+".existing"))
	chdbtest.MustExec(t, s, "ALTER TABLE "+db+".existing MODIFY TTL "+ttl)

	for _, table := range []string{"hot", "existing"} {
		chdbtest.MustExec(t, s, "OPTIMIZE TABLE "+db+"."+table+" FINAL")
		// 0..80 days old stay (9 rows); 90 days is at the horizon's edge and may go either way by a second.
		require.Equal(t, "0,1,2,3,4,5,6,7,8", query(t, s, fmt.Sprintf("SELECT arrayStringConcat(groupArray(toString(id)), ',') FROM (SELECT id FROM %s.%s WHERE id != 9 ORDER BY id)", db, table)), table)
	}
}
