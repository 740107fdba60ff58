package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

func plainRecords(topic string, from, n int) []*connect.SinkRecord {
	var out []*connect.SinkRecord
	for i := from; i < from+n; i++ {
		out = append(out, &connect.SinkRecord{Topic: topic, Partition: 0, Offset: int64(i),
			Value: map[string]any{"id": float64(i), "s": fmt.Sprint("v", i)}})
	}
	return out
}

func TestRetriesAndErrorClasses(t *testing.T) {
	s, srv := engine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".r (id UInt64, s String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100")
	defer srv.SetBeforeInsert(nil)
	ctx := context.Background()
	task := startTask(t, props(db, "retryCount", "3"), nil)

	// A retriable server error (TOO_MANY_PARTS) is retried with the same token.
	var fails atomic.Int32
	fails.Store(1)
	var tokens []string
	srv.SetBeforeInsert(func(q chshim.QueryInfo) error {
		if strings.Contains(q.Body, "`r`") {
			tokens = append(tokens, q.Settings["insert_deduplication_token"])
			if fails.Add(-1) >= 0 {
				return &chshim.Exception{Code: 252, Name: "DB::Exception", Message: "Too many parts"}
			}
		}
		return nil
	})
	require.NoError(t, task.Put(ctx, plainRecords("r", 0, 10)))
	require.Equal(t, []string{"r-0-0-9", "r-0-0-9"}, tokens)
	require.Equal(t, "10", query(t, s, "SELECT count() FROM "+db+".r"))

	// Network faults are retried too.
	fails.Store(1)
	srv.SetBeforeInsert(func(q chshim.QueryInfo) error {
		if strings.Contains(q.Body, "`r`") && fails.Add(-1) >= 0 {
			return chshim.ErrDropConnection
		}
		return nil
	})
	require.NoError(t, task.Put(ctx, plainRecords("r", 10, 5)))
	require.Equal(t, "15", query(t, s, "SELECT count() FROM "+db+".r"))

	// Retries exhausted: the batch goes back to the runtime as retriable; its redelivery writes it once.
	fails.Store(100)
	err := task.Put(ctx, plainRecords("r", 15, 5))
	require.Error(t, err)
	require.True(t, connect.IsRetriable(err), "%v", err)
	offs, err := task.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{{Topic: "r"}: {Offset: 20}})
	require.Error(t, err, "nothing unwritten may be committed")
	require.Nil(t, offs)
	fails.Store(0)
	require.NoError(t, task.Put(ctx, plainRecords("r", 15, 5))) // redelivered batch
	offs, err = task.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{{Topic: "r"}: {Offset: 20}})
	require.NoError(t, err)
	require.Equal(t, int64(20), offs[connect.TopicPartition{Topic: "r"}].Offset)
	require.Equal(t, "20\t20", query(t, s, "SELECT count(), uniqExact(id) FROM "+db+".r"))

	// A non-retriable server error fails the task.
	srv.SetBeforeInsert(func(q chshim.QueryInfo) error {
		if strings.Contains(q.Body, "`r`") {
			return &chshim.Exception{Code: 241, Name: "DB::Exception", Message: "Memory limit exceeded"}
		}
		return nil
	})
	err = task.Put(ctx, plainRecords("r", 20, 1))
	require.Error(t, err)
	require.False(t, connect.IsRetriable(err))
}

func TestBufferingRoutingAndCompression(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	other := chdbtest.Database(t)
	for _, q := range []string{
		"CREATE TABLE " + db + ".buffered (id UInt64, s String) ENGINE = MergeTree ORDER BY id",
		"CREATE TABLE " + db + ".mapped (id UInt64, s String) ENGINE = MergeTree ORDER BY id",
		"CREATE TABLE " + other + ".split (id UInt64, s String) ENGINE = MergeTree ORDER BY id",
	} {
		chdbtest.MustExec(t, s, q)
	}
	ctx := context.Background()
	for _, comp := range []string{"lz4", "zstd", "none"} {
		t.Run(comp, func(t *testing.T) {
			chdbtest.MustExec(t, s, "TRUNCATE TABLE "+db+".buffered")
			task := startTask(t, props(db, "bufferCount", "100", "compression", comp, "topic2TableMap", "in.mapped=mapped",
				"enableDbTopicSplit", "true", "dbTopicSplitChar", "__"), nil)
			require.NoError(t, task.Put(ctx, plainRecords("buffered", 0, 60)))
			require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".buffered"), "buffered below bufferCount")
			tp := connect.TopicPartition{Topic: "buffered"}
			offs, err := task.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp: {Offset: 60}})
			require.NoError(t, err)
			require.Equal(t, int64(60), offs[tp].Offset)
			require.Equal(t, "60", query(t, s, "SELECT count() FROM "+db+".buffered"))
			require.NoError(t, task.Put(ctx, plainRecords("buffered", 60, 150)))
			require.Equal(t, "210", query(t, s, "SELECT count() FROM "+db+".buffered"))

			require.NoError(t, task.Put(ctx, plainRecords("in.mapped", 0, 100)))
			require.NoError(t, task.Put(ctx, plainRecords(other+"__split", 0, 100)))
			_, err = task.PreCommit(ctx, nil)
			require.NoError(t, err)
			require.Equal(t, "100", query(t, s, "SELECT count() FROM "+db+".mapped"))
			require.Equal(t, "100", query(t, s, "SELECT count() FROM "+other+".split"))
			chdbtest.MustExec(t, s, "TRUNCATE TABLE "+db+".mapped")
			chdbtest.MustExec(t, s, "TRUNCATE TABLE "+other+".split")
		})
	}
}

func TestMissingTableAutoCreateAndEvolve(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	ctx := context.Background()

	// Default: a missing table fails the task; suppressTableExistenceException skips its records.
	task := startTask(t, props(db), nil)
	err := task.Put(ctx, plainRecords("nope", 0, 3))
	require.ErrorContains(t, err, "does not exist")
	task = startTask(t, props(db, "suppressTableExistenceException", "true"), nil)
	require.NoError(t, task.Put(ctx, plainRecords("nope", 0, 3)))
	offs, err := task.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{{Topic: "nope"}: {Offset: 3}})
	require.NoError(t, err)
	require.Equal(t, int64(3), offs[connect.TopicPartition{Topic: "nope"}].Offset)

	// auto.create.tables in CDC mode: ReplacingMergeTree(_version, is_deleted) ordered by the key.
	task = startTask(t, props(db, "auto.create.tables", "true", "debeziumCDCEnabled", "true", "auto.evolve", "true",
		"topic2TableMap", "shop.public.customers=customers_auto"), nil)
	events := cdcStream(20, 200, 5)
	parts := partitioned(events, "shop.public.customers", 1, func(e cdcEvent) any { return e.Envelope() })
	require.NoError(t, task.Put(ctx, parts[0][:120]))
	engineFull := query(t, s, "SELECT engine_full FROM system.tables WHERE database = '"+db+"' AND name = 'customers_auto'")
	require.Contains(t, engineFull, "ReplacingMergeTree(_version, is_deleted)")
	require.Contains(t, engineFull, "ORDER BY (customer_id)")

	// The source table grows a column: auto.evolve adds it.
	grown := connect.StructBuilder().Name("dbserver1.public.customers.Value").
		Field("customer_id", connect.Int64Schema).Field("customer_name", connect.StringSchema).
		Field("customer_status", connect.StringSchema).Field("event_time", connect.TimestampSchema).
		Field("loyalty_points", connect.Int32Schema).Optional().MustBuild()
	grownEnv := connect.StructBuilder().Name("dbserver1.public.customers.Envelope").
		Field("before", grown).Field("after", grown).Field("source", sourceSchema).
		Field("op", connect.StringSchema).Field("ts_ms", connect.OptionalInt64Schema).MustBuild()
	var rest []*connect.SinkRecord
	for _, r := range parts[0][120:] {
		old := r.Value.(*connect.Struct)
		env := connect.NewStruct(grownEnv).MustPut("source", old.Get("source")).MustPut("op", old.Get("op"))
		for _, img := range []string{"before", "after"} {
			if v, ok := old.Get(img).(*connect.Struct); ok && v != nil {
				g := connect.NewStruct(grown)
				for _, f := range customerRow.Fields() {
					g.MustPut(f.Name, v.Get(f.Name))
				}
				g.MustPut("loyalty_points", int32(v.Get("customer_id").(int64)*10))
				env.MustPut(img, g)
			}
		}
		c := *r
		c.ValueSchema, c.Value = grownEnv, env
		rest = append(rest, &c)
	}
	require.NoError(t, task.Put(ctx, rest))
	require.Equal(t, "Nullable(Int32)", query(t, s, "SELECT type FROM system.columns WHERE database = '"+db+"' AND table = 'customers_auto' AND name = 'loyalty_points'"))
	var want []string
	for _, line := range strings.Split(expectedCurrent(events), "\n") {
		f := strings.Split(line, "\t")
		want = append(want, f[0]+"\t"+f[1]+"\t"+f[3])
	}
	require.Equal(t, strings.Join(want, "\n"), query(t, s, "SELECT customer_id, customer_name, _version FROM "+db+".customers_auto FINAL ORDER BY customer_id"))
	require.Equal(t, "0", query(t, s, "SELECT countIf(loyalty_points != customer_id * 10) FROM "+db+".customers_auto FINAL WHERE loyalty_points IS NOT NULL"))
}
