package icetable_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

func TestUpsertCollapsesMovesAndDeletes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		partitionBy []string
		version     string
	}{
		{"unpartitioned-kafka-order", nil, ""},
		{"day-ts-kafka-order", []string{"day(ts)"}, ""},
		{"day-ts-version", []string{"day(ts)"}, "version"},
		{"bucket-id-version", []string{"bucket(id,16)"}, "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat := sqliteCatalog(t)
			w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
				IDColumns: []string{"id"}, PartitionBy: tc.partitionBy, AutoCreate: true, DeltaMode: true,
				VersionColumn: tc.version, OffsetsKey: icetable.OffsetsSummaryKey("connect-test"),
			}}
			rng := rand.New(rand.NewSource(42))
			model := map[int64]icerow.Row{}
			versions := map[int64]int64{}
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			off := int64(0)
			tp := icetable.TP{Topic: "cdc", Partition: 0}
			for round := 0; round < 4; round++ {
				var recs []icetable.Rec
				for i := 0; i < 300; i++ {
					id := int64(rng.Intn(60))
					versions[id]++
					v := versions[id]
					day := rng.Intn(5) // partition value changes between versions
					row := icerow.Row{"id": id, "name": fmt.Sprintf("n%d-%d", id, v), "ts": base.Add(time.Duration(day) * 24 * time.Hour), "version": v}
					op := icerow.OpUpdate
					if rng.Intn(7) == 0 {
						op = icerow.OpDelete
						row = icerow.Row{"id": id, "version": v} // key-only delete
					}
					recs = append(recs, icetable.Rec{Op: op, Row: row, Schema: customerSchema, TP: tp, Offset: off})
					off++
					if op == icerow.OpDelete {
						delete(model, id)
					} else {
						model[id] = row
					}
					if tc.version != "" && rng.Intn(10) == 0 && v > 1 {
						// a redelivered stale version (lower version, later offset)
						stale := icerow.Row{"id": id, "name": "stale", "ts": base, "version": v - 1}
						recs = append(recs, icetable.Rec{Op: icerow.OpUpdate, Row: stale, Schema: customerSchema, TP: tp, Offset: off})
						off++
					}
				}
				_, err := w.Commit(ctx, recs, icetable.Offsets{tp: off}, map[string]string{icetable.SummaryCommitID: fmt.Sprint(round)})
				require.NoError(t, err)
				if tc.version != "" && round == 1 {
					// a stale record in a later commit than its newer version
					for id, r := range model {
						stale := icerow.Row{"id": id, "name": "stale", "ts": base, "version": r["version"].(int64) - 1}
						_, err := w.Commit(ctx, []icetable.Rec{{Op: icerow.OpUpdate, Row: stale, Schema: customerSchema, TP: tp, Offset: off}}, icetable.Offsets{tp: off + 1}, nil)
						require.NoError(t, err)
						off++
						break
					}
				}
			}
			// replay of an already committed range: skipped by the committed offsets
			st, err := w.Commit(ctx, []icetable.Rec{{Op: icerow.OpDelete, Row: icerow.Row{"id": int64(1)}, TP: tp, Offset: 3}}, icetable.Offsets{tp: 4}, nil)
			require.NoError(t, err)
			require.Equal(t, 1, st.Skipped)

			var want []string
			for id, r := range model {
				want = append(want, fmt.Sprintf("%d|%s|%d", id, r["name"], r["version"]))
			}
			sort.Strings(want)

			got := scanRows(t, w.Tbl)
			var gotGo []string
			for _, r := range got {
				gotGo = append(gotGo, fmt.Sprintf("%d|%s|%d", r["id"], r["name"], r["version"]))
			}
			sort.Strings(gotGo)
			require.Equal(t, want, gotGo, "iceberg-go scan")

			res := icebergtest.Read(t, w.Tbl.MetadataLocation(), "SELECT id, name, version FROM t ORDER BY id", nil)
			var gotDuck []string
			for _, r := range res.Rows {
				gotDuck = append(gotDuck, fmt.Sprintf("%v|%v|%v", r[0], r[1], r[2]))
			}
			sort.Strings(gotDuck)
			require.Equal(t, want, gotDuck, "duckdb reader")

			offs, err := icetable.CommittedOffsets(w.Tbl, "", w.Opts.OffsetsKey)
			require.NoError(t, err)
			require.Equal(t, off, offs[tp])
			require.Equal(t, []int{1}, w.Tbl.Schema().IdentifierFieldIDs)
		})
	}
}

// TestZombieFencing: two committers (a zombie that lost its partitions and the new owner)
// commit overlapping offset ranges of one partition from stale views. The compare-and-swap on
// the branch head fences the stale one; after reloading, the commit-time offset filter drops
// what the other already committed, so every offset is in the table exactly once.
func TestZombieFencing(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	opts := icetable.TableOptions{AutoCreate: true, OffsetsKey: icetable.OffsetsSummaryKey("connect-z")}
	ident := table.Identifier{"db", "events"}
	st := &ice.StructType{FieldList: []ice.NestedField{{ID: 1, Name: "off", Type: ice.PrimitiveTypes.Int64, Required: true}}}
	tp := icetable.TP{Topic: "t", Partition: 0}
	recs := func(from, to int64) []icetable.Rec {
		var out []icetable.Rec
		for o := from; o < to; o++ {
			out = append(out, icetable.Rec{Op: icerow.OpInsert, Row: icerow.Row{"off": o}, Schema: st, TP: tp, Offset: o})
		}
		return out
	}
	owner := &icetable.Writer{Cat: cat, Ident: ident, Opts: opts}
	_, err := owner.Commit(ctx, recs(0, 50), icetable.Offsets{tp: 50}, nil)
	require.NoError(t, err)
	zombie := &icetable.Writer{Cat: cat, Ident: ident, Opts: opts}
	require.NoError(t, zombie.Load(ctx, nil)) // the zombie's view: offsets up to 50

	_, err = owner.Commit(ctx, recs(50, 120), icetable.Offsets{tp: 120}, nil)
	require.NoError(t, err)
	// the zombie still holds 50..150 and commits from its stale view: fenced
	_, err = zombie.Commit(ctx, recs(50, 150), icetable.Offsets{tp: 150}, nil)
	require.ErrorIs(t, err, icetable.ErrFenced)
	// retried (as a new round would): only 120..150 are new
	stats, err := zombie.Commit(ctx, recs(50, 150), icetable.Offsets{tp: 150}, nil)
	require.NoError(t, err)
	require.Equal(t, 70, stats.Skipped)
	require.Equal(t, 30, stats.RowsWritten)
	// and the owner's late replay of an old range: fenced (stale view), then a no-op
	_, err = owner.Commit(ctx, recs(100, 150), icetable.Offsets{tp: 150}, nil)
	require.ErrorIs(t, err, icetable.ErrFenced)
	stats, err = owner.Commit(ctx, recs(100, 150), icetable.Offsets{tp: 150}, nil)
	require.NoError(t, err)
	require.Equal(t, 50, stats.Skipped)

	tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier("db.events"))
	require.NoError(t, err)
	rows := scanRows(t, tbl)
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r["off"].(int64)]++
	}
	require.Len(t, seen, 150)
	for o, n := range seen {
		require.Equal(t, 1, n, "offset %d", o)
	}
	res := icebergtest.Read(t, tbl.MetadataLocation(), "SELECT count(*), count(DISTINCT off) FROM t", nil)
	require.Equal(t, "150 150", fmt.Sprint(res.Rows[0][0], " ", res.Rows[0][1]))
}

// TestCommitBranch: commits go to the configured branch (created on first commit); main is
// untouched and the offsets live on the branch.
func TestCommitBranch(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t)
	st := &ice.StructType{FieldList: []ice.NestedField{{ID: 1, Name: "off", Type: ice.PrimitiveTypes.Int64, Required: true}}}
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "br"}, Opts: icetable.TableOptions{AutoCreate: true, CommitBranch: "ingest", OffsetsKey: icetable.OffsetsSummaryKey("g")}}
	tp := icetable.TP{Topic: "t", Partition: 0}
	for round := int64(0); round < 2; round++ {
		var recs []icetable.Rec
		for o := round * 10; o < round*10+10; o++ {
			recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Row: icerow.Row{"off": o}, Schema: st, TP: tp, Offset: o})
		}
		_, err := w.Commit(ctx, recs, icetable.Offsets{tp: round*10 + 10}, nil)
		require.NoError(t, err)
	}
	tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier("db.br"))
	require.NoError(t, err)
	require.Nil(t, tbl.CurrentSnapshot(), "main must stay empty")
	require.NotNil(t, tbl.SnapshotByName("ingest"))
	offs, err := icetable.CommittedOffsets(tbl, "ingest", icetable.OffsetsSummaryKey("g"))
	require.NoError(t, err)
	require.Equal(t, int64(20), offs[tp])
	scan, err := tbl.Scan().UseRef("ingest")
	require.NoError(t, err)
	at, err := scan.ToArrowTable(ctx)
	require.NoError(t, err)
	defer at.Release()
	require.Equal(t, int64(20), at.NumRows())
}
