package clickhouse

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/connectd/connectd/connect"
)

// Exactly-once without a deduplication window. A table that does not deduplicate by token
// (non-replicated MergeTree with non_replicated_deduplication_window = 0) gets each block through a
// staging table (CREATE TABLE ... AS target, one per table and topic-partition):
//
//	BEFORE(min,max) → TRUNCATE staging → INSERT block into staging → STAGED(min,max)
//	→ ALTER TABLE staging MOVE PARTITION ID ... TO TABLE target (each partition; atomic, removes it from
//	  staging) → AFTER(min,max)
//
// Data reaches the target only by MOVE PARTITION, after STAGED is recorded, so recovery is exact: from
// BEFORE the block is redone from the records (nothing of it is in the target); from STAGED whatever is
// still in staging is moved (a partition already moved is no longer there) and the state becomes AFTER.

func stagingName(tbl *tableInfo, tp connect.TopicPartition) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(tp.Topic + "\x00" + strconv.Itoa(int(tp.Partition))))
	return fmt.Sprintf("_connectd_stage_%s_%08x", tbl.name, h.Sum32())
}

func (t *Task) ensureStaging(ctx context.Context, tbl *tableInfo, name string) error {
	return t.pool.exec(ctx, "CREATE TABLE IF NOT EXISTS "+quoteIdent(tbl.db)+"."+quoteIdent(name)+" AS "+tbl.qualified())
}

// moveStaged moves every partition left in the staging table into the target.
func (t *Task) moveStaged(ctx context.Context, tbl *tableInfo, name string) error {
	parts, err := t.pool.selectStrings(ctx, fmt.Sprintf(
		"SELECT DISTINCT partition_id FROM system.parts WHERE database = %s AND table = %s AND active ORDER BY partition_id",
		quoteString(tbl.db), quoteString(name)), 1)
	if err != nil {
		return fmt.Errorf("clickhouse: listing staged partitions of %s: %w", name, err)
	}
	for _, p := range parts {
		if err := t.pool.exec(ctx, fmt.Sprintf("ALTER TABLE %s.%s MOVE PARTITION ID %s TO TABLE %s",
			quoteIdent(tbl.db), quoteIdent(name), quoteString(p[0]), tbl.qualified())); err != nil {
			return fmt.Errorf("clickhouse: moving staged partition %s of %s: %w", p[0], name, err)
		}
	}
	return nil
}
