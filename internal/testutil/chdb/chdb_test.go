package chdb_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

func TestMain(m *testing.M) { chdbtest.Main(m) }

func TestVersion(t *testing.T) {
	s := chdbtest.Session(t)
	v := chdbtest.MustQuery(t, s, "SELECT version()")
	require.True(t, strings.HasPrefix(v, "26."), "engine version %q", v)
	require.True(t, strings.HasPrefix(chdb.Version(), "26."), chdb.Version())
}

func TestReplacingMergeTreeFinal(t *testing.T) {
	s := chdbtest.Session(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".customer_current (customer_id UInt64, customer_name String, "+
		"customer_status LowCardinality(String), source_version UInt64, is_deleted UInt8, event_time DateTime64(3)) "+
		"ENGINE = ReplacingMergeTree(source_version, is_deleted) ORDER BY customer_id")
	// Separate inserts make separate parts: only FINAL collapses them.
	for _, q := range []string{
		"(1,'ann','active',10,0,now64(3)),(2,'bob','active',11,0,now64(3))",
		"(1,'ann2','vip',20,0,now64(3))",
		"(2,'bob','active',30,1,now64(3))",
		"(1,'stale','old',5,0,now64(3))", // out-of-order redelivery: lower version loses
	} {
		chdbtest.MustExec(t, s, "INSERT INTO "+db+".customer_current VALUES "+q)
	}
	require.Equal(t, "5", chdbtest.MustQuery(t, s, "SELECT count() FROM "+db+".customer_current"), "all versions kept until merge")
	got := chdbtest.MustQuery(t, s, "SELECT customer_id, customer_name, customer_status, source_version FROM "+db+".customer_current FINAL ORDER BY customer_id")
	require.Equal(t, "1\tann2\tvip\t20", got)
}

func TestBinaryNativeInsertAndDedupToken(t *testing.T) {
	s := chdbtest.Session(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".ev (id Int64, s String) ENGINE = MergeTree ORDER BY id "+
		"SETTINGS non_replicated_deduplication_window = 100")

	// A Native block whose string payload holds NUL bytes: only the *_n calls are binary-safe.
	var id proto.ColInt64
	var str proto.ColStr
	for i := 0; i < 3; i++ {
		id.Append(int64(i))
		str.Append("a\x00b")
	}
	var buf proto.Buffer
	blk := proto.Block{Columns: 2, Rows: 3}
	require.NoError(t, blk.EncodeRawBlock(&buf, 0, []proto.InputColumn{{Name: "id", Data: &id}, {Name: "s", Data: &str}}))

	// chdb_query_n with inline binary data.
	_, err := s.Query("INSERT INTO "+db+".ev SETTINGS insert_deduplication_token='tok-a', async_insert=0 FORMAT Native\n"+string(buf.Buf), "")
	require.NoError(t, err)
	// Same token again: dropped as a duplicate even though the engine reports rows written.
	n, err := s.Insert("INSERT INTO "+db+".ev SETTINGS insert_deduplication_token='tok-a', async_insert=0", "Native", buf.Buf[:10], buf.Buf[10:])
	require.NoError(t, err)
	require.Equal(t, uint64(3), n)
	require.Equal(t, "3", chdbtest.MustQuery(t, s, "SELECT count() FROM "+db+".ev"))
	// A new token inserts again.
	_, err = s.Insert("INSERT INTO "+db+".ev SETTINGS insert_deduplication_token='tok-b', async_insert=0", "Native", buf.Buf)
	require.NoError(t, err)
	require.Equal(t, "6", chdbtest.MustQuery(t, s, "SELECT count() FROM "+db+".ev"))
	require.Equal(t, "6", chdbtest.MustQuery(t, s, "SELECT countIf(s = 'a\\0b') FROM "+db+".ev"))

	// SELECT ... FORMAT Native round-trips through ch-go's decoder.
	out, err := s.Query("SELECT id, s FROM "+db+".ev ORDER BY id LIMIT 2", "Native")
	require.NoError(t, err)
	var rid proto.ColInt64
	var rs proto.ColStr
	res := proto.Results{{Name: "id", Data: &rid}, {Name: "s", Data: &rs}}
	var got proto.Block
	require.NoError(t, got.DecodeRawBlock(proto.NewReader(bytes.NewReader(out)), 0, res))
	require.Equal(t, 2, got.Rows)
	require.Equal(t, []int64{0, 0}, []int64{rid.Row(0), rid.Row(1)})
	require.Equal(t, "a\x00b", rs.Row(1))
}

func TestErrorCode(t *testing.T) {
	s := chdbtest.Session(t)
	_, err := s.Query("SELECT * FROM no_such_db.no_such_table", "")
	var ce *chdb.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, 81, ce.Code(), ce.Message) // UNKNOWN_DATABASE
}
