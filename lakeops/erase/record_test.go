package erase

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordVerdictAndText(t *testing.T) {
	r := &Record{KeyColumns: []string{"id"}, Keys: []string{"k1"},
		Iceberg: []*TableErasure{
			{Table: "cdc.customers", Role: RoleCurrent, Match: "id", RowsDeleted: 1, HeldBefore: []FileHit{{Path: "a.parquet", Reach: "live"}}, FilesRemoved: []string{"a.parquet"}, FilesRead: 3},
			{Table: "cdc.history", Role: RoleHistory, Match: "primary_key", Remaining: []FileHit{{Path: "h.parquet", Reach: "unreferenced", Rows: 2}}, FilesRead: 2},
		},
		ClickHouse: &ClickHouseErasure{Table: "shop.customers", RowsBefore: 3},
		Unreached:  []Unreached{{Where: "kafka topic t", Why: "records stay", Action: "wait retention.ms"}},
	}
	r.verdict()
	require.Equal(t, VerdictIncomplete, r.Verdict)
	require.Equal(t, []string{"iceberg cdc.history: h.parquet (unreferenced) still holds a key"}, r.Problems)
	var b strings.Builder
	r.WriteText(&b)
	out := b.String()
	for _, want := range []string{"INCOMPLETE", "iceberg cdc.customers (current, matched on id): 1 live rows deleted, 1 files held a key, 1 removed",
		"still holds a key: h.parquet (unreferenced)", "clickhouse shop.customers: 3 stored rows of the keys before, 0 after", "kafka topic t", "action: wait retention.ms"} {
		require.Contains(t, out, want)
	}
	r.Iceberg = r.Iceberg[:1]
	r.Problems = nil
	r.verdict()
	require.Equal(t, VerdictErased, r.Verdict)
}
