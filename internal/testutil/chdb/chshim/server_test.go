package chshim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

func TestMain(m *testing.M) { chdbtest.Main(m) }

func startShim(t *testing.T) *chshim.Server {
	t.Helper()
	srv := chshim.New(chdbtest.Session(t))
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func dial(t *testing.T, srv *chshim.Server, db string, comp ch.Compression) *ch.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ch.Dial(ctx, ch.Options{Address: srv.Addr(), Database: db, Compression: comp, ReadTimeout: 30 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestShimPingSelectDDL(t *testing.T) {
	srv := startShim(t)
	db := chdbtest.Database(t)
	for _, comp := range []ch.Compression{ch.CompressionDisabled, ch.CompressionLZ4, ch.CompressionZSTD} {
		t.Run(comp.String(), func(t *testing.T) {
			c := dial(t, srv, db, comp)
			ctx := context.Background()
			require.NoError(t, c.Ping(ctx))
			tbl := "t_" + comp.String()
			require.NoError(t, c.Do(ctx, ch.Query{Body: "CREATE TABLE " + tbl + " (id UInt64, name String) ENGINE = MergeTree ORDER BY id"}))
			require.NoError(t, c.Do(ctx, ch.Query{Body: "INSERT INTO " + tbl + " SELECT number, toString(number) FROM numbers(100000)"}))
			var (
				id   proto.ColUInt64
				name proto.ColStr
				rows int
				sum  uint64
			)
			require.NoError(t, c.Do(ctx, ch.Query{
				Body:   "SELECT id, name FROM " + tbl + " ORDER BY id",
				Result: proto.Results{{Name: "id", Data: &id}, {Name: "name", Data: &name}},
				OnResult: func(ctx context.Context, b proto.Block) error {
					for i := 0; i < id.Rows(); i++ {
						sum += id.Row(i)
						require.Equal(t, fmt.Sprint(id.Row(i)), name.Row(i))
					}
					rows += id.Rows()
					return nil
				},
			}))
			require.Equal(t, 100000, rows)
			require.Equal(t, uint64(99999*100000/2), sum)

			// Server errors come back as ch-go exceptions with the engine's code.
			err := c.Do(ctx, ch.Query{Body: "SELECT * FROM no_such_table"})
			require.Error(t, err)
			ex, ok := ch.AsException(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, proto.ErrUnknownTable, ex.Code)
			// The connection is still usable.
			require.NoError(t, c.Ping(ctx))
		})
	}
}

func TestShimInsertTypesAndDedup(t *testing.T) {
	srv := startShim(t)
	db := chdbtest.Database(t)
	c := dial(t, srv, db, ch.CompressionLZ4)
	ctx := context.Background()
	require.NoError(t, c.Do(ctx, ch.Query{Body: `CREATE TABLE ev (
		id Int64, s LowCardinality(String), n Nullable(String), ts DateTime64(6, 'UTC'),
		arr Array(String), m Map(String, String), tags Array(LowCardinality(String)))
		ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 100`}))

	var (
		id   proto.ColInt64
		s    = new(proto.ColStr).LowCardinality()
		n    = new(proto.ColStr).Nullable()
		ts   = new(proto.ColDateTime64).WithPrecision(proto.PrecisionMicro)
		arr  = new(proto.ColStr).Array()
		m    = proto.NewMap[string, string](new(proto.ColStr), new(proto.ColStr))
		tags = proto.NewArray[string](new(proto.ColStr).LowCardinality())
	)
	base := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	for i := 0; i < 1000; i++ {
		id.Append(int64(i))
		s.Append(fmt.Sprintf("k%d", i%7))
		if i%3 == 0 {
			n.Append(proto.Null[string]())
		} else {
			n.Append(proto.NewNullable(fmt.Sprint("v", i)))
		}
		ts.Append(base.Add(time.Duration(i) * time.Second))
		arr.Append([]string{"a", fmt.Sprint(i)})
		m.Append(map[string]string{"k": fmt.Sprint(i)})
		tags.Append([]string{"x", "y"})
	}
	input := proto.Input{{Name: "id", Data: &id}, {Name: "s", Data: s}, {Name: "n", Data: n}, {Name: "ts", Data: ts},
		{Name: "arr", Data: arr}, {Name: "m", Data: m}, {Name: "tags", Data: tags}}
	insert := func(token string) error {
		return c.Do(ctx, ch.Query{Body: input.Into("ev"), Input: input, Settings: []ch.Setting{
			ch.SettingInt("async_insert", 0), {Key: "insert_deduplication_token", Value: token, Important: true},
		}})
	}
	require.NoError(t, insert("tok-1"))
	require.NoError(t, insert("tok-1")) // duplicate: dropped by the engine
	s2 := chdbtest.Session(t)
	require.Equal(t, "1000", chdbtest.MustQuery(t, s2, "SELECT count() FROM "+db+".ev"))
	require.NoError(t, insert("tok-2"))
	require.Equal(t, "2000", chdbtest.MustQuery(t, s2, "SELECT count() FROM "+db+".ev"))
	require.Equal(t, "5\tk5\tv5\t2026-11-29 12:00:05.123456\t['a','5']\t{'k':'5'}\t['x','y']",
		chdbtest.MustQuery(t, s2, "SELECT * FROM "+db+".ev WHERE id = 5 LIMIT 1"))
	require.Equal(t, "668", chdbtest.MustQuery(t, s2, "SELECT countIf(n IS NULL) FROM "+db+".ev"))

	q := srv.Queries()
	var inserts int
	for _, qi := range q {
		if qi.Insert {
			inserts++
			require.Equal(t, "0", qi.Settings["async_insert"])
			require.Equal(t, 1, qi.Blocks)
			require.Equal(t, 1000, qi.Rows)
		}
	}
	require.Equal(t, 3, inserts)

	// Read back through the wire with typed columns.
	var (
		rid  proto.ColInt64
		rs   = new(proto.ColStr).LowCardinality()
		rts  = new(proto.ColDateTime64).WithPrecision(proto.PrecisionMicro)
		rarr = new(proto.ColStr).Array()
	)
	require.NoError(t, c.Do(ctx, ch.Query{
		Body:   "SELECT id, s, ts, arr FROM ev WHERE id < 3 ORDER BY id LIMIT 1 BY id",
		Result: proto.Results{{Name: "id", Data: &rid}, {Name: "s", Data: rs}, {Name: "ts", Data: rts}, {Name: "arr", Data: rarr}},
	}))
	require.Equal(t, 3, rid.Rows())
	require.Equal(t, "k2", rs.Row(2))
	require.True(t, base.Add(2*time.Second).Equal(rts.Row(2)), rts.Row(2))
	require.Equal(t, []string{"a", "2"}, rarr.Row(2))
}

func TestShimFaultHooks(t *testing.T) {
	srv := startShim(t)
	db := chdbtest.Database(t)
	c := dial(t, srv, db, ch.CompressionDisabled)
	ctx := context.Background()
	require.NoError(t, c.Do(ctx, ch.Query{Body: "CREATE TABLE f (id Int64) ENGINE = MergeTree ORDER BY id"}))
	var id proto.ColInt64
	id.Append(1)
	input := proto.Input{{Name: "id", Data: &id}}

	srv.SetBeforeInsert(func(chshim.QueryInfo) error {
		return &chshim.Exception{Code: 252, Name: "DB::Exception", Message: "Too many parts (test)"}
	})
	err := c.Do(ctx, ch.Query{Body: input.Into("f"), Input: input})
	ex, ok := ch.AsException(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, proto.ErrTooManyParts, ex.Code)

	srv.SetBeforeInsert(nil)
	srv.SetAfterInsert(func(chshim.QueryInfo) error { return chshim.ErrDropConnection })
	err = c.Do(ctx, ch.Query{Body: input.Into("f"), Input: input})
	require.Error(t, err)
	_, isEx := ch.AsException(err)
	require.False(t, isEx)
	srv.SetAfterInsert(nil)
	// The insert happened although the acknowledgement was lost.
	require.Equal(t, "1", chdbtest.MustQuery(t, chdbtest.Session(t), "SELECT count() FROM "+db+".f"))
}

func TestShimRelaysNestedTypes(t *testing.T) {
	srv := startShim(t)
	db := chdbtest.Database(t)
	c := dial(t, srv, db, ch.CompressionLZ4)
	ctx := context.Background()
	var res proto.Results
	require.NoError(t, c.Do(ctx, ch.Query{
		Body: "SELECT [toLowCardinality('v'), 'w'] AS t, map('k', 'v') AS m, " +
			"toDecimal128(1.25, 4) AS d, CAST('b' AS Enum8('a' = 1, 'b' = 2)) AS e, NULL AS n FROM numbers(3)",
		Result: res.Auto(),
	}))
	require.Len(t, res, 5)
	require.Equal(t, 3, res[0].Data.Rows())
}
