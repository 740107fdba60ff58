package clickhouse

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// What the ClickHouse engine itself does with ReplacingMergeTree(ver, is_deleted); the statements of
// docs/guides/clickhouse-sink.md about FINAL, partitions and optimize_on_insert rest on these checks.
func TestEngineReplacingMergeTreeFacts(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	t.Logf("engine %s", query(t, s, "SELECT version()"))

	// FINAL alone hides keys whose latest row is a delete; no setting is needed.
	chdbtest.MustExec(t, s, fmt.Sprintf(`CREATE TABLE %s.cur (id UInt64, name String, ver UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(ver, is_deleted) ORDER BY id`, db))
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".cur VALUES (1,'a',10,0),(2,'b',10,0)")
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".cur VALUES (2,'b',20,1)")
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".cur VALUES (2,'stale',15,0)")
	require.Equal(t, "1\ta", query(t, s, "SELECT id, name FROM "+db+".cur FINAL ORDER BY id"))
	require.Equal(t, "4", query(t, s, "SELECT count() FROM "+db+".cur"), "without FINAL every row is there")
	// After a full merge the delete row stays (so later stale rows still lose) unless CLEANUP is asked for.
	chdbtest.MustExec(t, s, "OPTIMIZE TABLE "+db+".cur FINAL")
	require.Equal(t, "1\t0\n2\t1", query(t, s, "SELECT id, is_deleted FROM "+db+".cur ORDER BY id"))
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".cur VALUES (2,'stale',15,0)")
	require.Equal(t, "1\ta", query(t, s, "SELECT id, name FROM "+db+".cur FINAL ORDER BY id"))

	// A partitioned table with do_not_merge_across_partitions_select_final=1 (a key stays in one partition).
	chdbtest.MustExec(t, s, fmt.Sprintf(`CREATE TABLE %s.part (id UInt64, name String, ver UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(ver, is_deleted) PARTITION BY id %% 4 ORDER BY id`, db))
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".part VALUES (1,'a',10,0),(2,'b',10,0)")
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".part VALUES (2,'b',20,1)")
	require.Equal(t, "1\ta", query(t, s, "SELECT id, name FROM "+db+".part FINAL ORDER BY id SETTINGS do_not_merge_across_partitions_select_final = 1"))
	require.Equal(t, "1\ta", query(t, s, "SELECT id, name FROM "+db+".part FINAL ORDER BY id"))

	// clean_deleted_rows: obsolete, accepted and without effect.
	t.Logf("clean_deleted_rows: %s", query(t, s, "SELECT name, value, description FROM system.merge_tree_settings WHERE name = 'clean_deleted_rows'"))
	t.Logf("cleanup: %s", query(t, s, "SELECT name, value FROM system.merge_tree_settings WHERE name LIKE '%cleanup%'"))

	// OPTIMIZE ... FINAL CLEANUP purges delete rows; a stale row arriving afterwards comes back.
	chdbtest.MustExec(t, s, fmt.Sprintf(`CREATE TABLE %s.clean (id UInt64, name String, ver UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(ver, is_deleted) ORDER BY id SETTINGS allow_experimental_replacing_merge_with_cleanup = 1`, db))
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".clean VALUES (2,'b',10,0)")
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".clean VALUES (2,'b',20,1)")
	chdbtest.MustExec(t, s, "OPTIMIZE TABLE "+db+".clean FINAL CLEANUP")
	require.Equal(t, "0", query(t, s, "SELECT count() FROM "+db+".clean"))
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".clean VALUES (2,'stale',15,0)")
	require.Equal(t, "2\tstale", query(t, s, "SELECT id, name FROM "+db+".clean FINAL"))

	// Version column types: UInt128 and UInt256 are accepted (wide positions such as SQL Server LSNs).
	for _, typ := range []string{"UInt128", "UInt256"} {
		chdbtest.MustExec(t, s, fmt.Sprintf(`CREATE TABLE %s.w%s (id UInt64, ver %s, is_deleted UInt8)
			ENGINE = ReplacingMergeTree(ver, is_deleted) ORDER BY id`, db, typ, typ))
		chdbtest.MustExec(t, s, fmt.Sprintf("INSERT INTO %s.w%s VALUES (1, 18446744073709551616, 1)", db, typ))
		chdbtest.MustExec(t, s, fmt.Sprintf("INSERT INTO %s.w%s VALUES (1, 18446744073709551615, 0)", db, typ))
		require.Equal(t, "0", query(t, s, fmt.Sprintf("SELECT count() FROM %s.w%s FINAL", db, typ)))
	}

	// optimize_on_insert (default 1) collapses the rows of one key within one INSERT block.
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".cur VALUES (7,'c',1,0),(7,'u',2,0),(7,'d',3,1)")
	require.Equal(t, "1", query(t, s, "SELECT count() FROM "+db+".cur WHERE id = 7"))
	chdbtest.MustExec(t, s, "INSERT INTO "+db+".cur SETTINGS optimize_on_insert = 0 VALUES (8,'c',1,0),(8,'u',2,0),(8,'d',3,1)")
	require.Equal(t, "3", query(t, s, "SELECT count() FROM "+db+".cur WHERE id = 8"))
}
