package iceberg

import (
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// On a table auto-created with format v3, Debezium's NanoTimestamp keeps its nanoseconds (timestamp_ns)
// through the connector's append path; the other timestamps are as on format v2.
func TestNanoTimestampOnFormatV3Table(t *testing.T) {
	named := func(b *connect.SchemaBuilder, name string) *connect.Schema {
		return b.Name(name).Optional().MustBuild()
	}
	sc := connect.StructBuilder().Name("ts").
		Field("id", connect.Int64Builder().MustBuild()).
		Field("ts", connect.TimestampBuilder().Optional().MustBuild()).
		Field("dbz_micro_ts", named(connect.Int64Builder(), "io.debezium.time.MicroTimestamp")).
		Field("dbz_nano_ts", named(connect.Int64Builder(), "io.debezium.time.NanoTimestamp")).
		MustBuild()
	ts := time.Date(2026, 5, 17, 10, 11, 12, 345678912, time.UTC)
	s := connect.NewStruct(sc)
	for i, v := range []any{int64(1), ts.Truncate(time.Millisecond), ts.UnixMicro(), ts.UnixNano()} {
		s.PutIndex(i, v)
	}
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.ts", KeyAutoCreatePropsPfx + "format-version": "3"})
	task, _ := startTask(t, props)
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{{Topic: "t", ValueSchema: sc, Value: s, OriginalTopic: "t"}}))
	require.True(t, task.coord.CommitNow(context.Background()), task.coord.stats().LastError)
	require.NoError(t, task.Stop())
	cat, _ := loadTable(t, props, "db.ts")
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("db.ts"))
	require.NoError(t, err)
	require.Equal(t, 3, tbl.Metadata().Version())
	types := map[string]string{}
	for _, f := range tbl.Schema().Fields() {
		types[f.Name] = f.Type.String()
	}
	require.Equal(t, map[string]string{"id": "long", "ts": "timestamptz", "dbz_micro_ts": "timestamp", "dbz_nano_ts": "timestamp_ns"}, types)
	rows := scanRows(t, tbl)
	require.Len(t, rows, 1)
	require.Equal(t, ts.Truncate(time.Millisecond), rows[0]["ts"])
	require.Equal(t, ts.Truncate(time.Microsecond), rows[0]["dbz_micro_ts"])
	require.Equal(t, ts, rows[0]["dbz_nano_ts"])
}
