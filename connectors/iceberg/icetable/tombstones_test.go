package icetable_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// TestLateEventAfterDeleteStaysDeleted: with a version column, a key deleted at v3 in one
// commit stays deleted when an older event (v2, late or replayed) arrives in a later commit,
// comes back with a newer insert (v4), and a replay of the whole stream (another consumer
// group, so nothing is skipped by offsets; per round and in one commit) converges to the same
// state. DuckDB is the reader. Without a version column the behaviour is unchanged (Kafka
// order: the later event wins) and no tombstone table is created.
func TestLateEventAfterDeleteStaysDeleted(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(id int64, name string, day int, v int64) icerow.Row {
		return icerow.Row{"id": id, "name": name, "ts": base.Add(time.Duration(day) * 24 * time.Hour), "version": v}
	}
	tp := icetable.TP{Topic: "cdc", Partition: 0}
	// the stream, in rounds (one commit each)
	rounds := [][]icetable.Rec{
		{
			{Op: icerow.OpInsert, Row: row(1, "v1", 0, 1)},
			{Op: icerow.OpUpdate, Row: row(1, "v2", 1, 2)},
			{Op: icerow.OpDelete, Row: icerow.Row{"id": int64(1), "version": int64(3)}}, // key-only delete
			{Op: icerow.OpInsert, Row: row(2, "k2v1", 2, 1)},
		},
		{{Op: icerow.OpUpdate, Row: row(1, "late-v2", 3, 2)}},                         // late: must stay deleted
		{{Op: icerow.OpUpdate, Row: row(1, "late-v3", 2, 3)}},                         // same version as the delete
		{{Op: icerow.OpInsert, Row: row(1, "v4", 4, 4)}},                              // newer: back
		{{Op: icerow.OpDelete, Row: icerow.Row{"id": int64(1), "version": int64(3)}}}, // replayed delete: older than v4
		{{Op: icerow.OpUpdate, Row: row(1, "late-v2", 3, 2)}},
	}
	off := int64(0)
	for i := range rounds {
		for j := range rounds[i] {
			rounds[i][j].Schema, rounds[i][j].TP, rounds[i][j].Offset = customerSchema, tp, off
			off++
		}
	}
	// DuckDB state after each round, with the version column
	want := [][]string{
		{"2|k2v1|1"},
		{"2|k2v1|1"},
		{"2|k2v1|1"},
		{"1|v4|4", "2|k2v1|1"},
		{"1|v4|4", "2|k2v1|1"},
		{"1|v4|4", "2|k2v1|1"},
	}
	final := want[len(want)-1]
	const q = "SELECT id, name, version FROM t"

	for _, tc := range []struct {
		name        string
		partitionBy []string
	}{
		{"unpartitioned", nil},
		{"day-ts", []string{"day(ts)"}}, // key moves partitions: the lookup path
		{"bucket-id", []string{"bucket(id,4)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat := sqliteCatalog(t)
			ident := table.Identifier{"db", "customers"}
			newWriter := func(ident table.Identifier, group string) *icetable.Writer {
				return &icetable.Writer{Cat: cat, Ident: ident, Opts: icetable.TableOptions{
					IDColumns: []string{"id"}, PartitionBy: tc.partitionBy, AutoCreate: true, DeltaMode: true,
					VersionColumn: "version", OffsetsKey: icetable.OffsetsSummaryKey(group),
				}}
			}
			w := newWriter(ident, "g1")
			for i, recs := range rounds {
				st, err := w.Commit(ctx, recs, icetable.Offsets{tp: recs[len(recs)-1].Offset + 1}, nil)
				require.NoError(t, err)
				require.Equal(t, want[i], duckRows(t, w.Tbl.MetadataLocation(), q), "after round %d", i)
				switch i {
				case 0:
					assert.Equal(t, 1, st.Tombstones) // not fatal: the state checks tell more
				case 1, 2:
					assert.Equal(t, 1, st.StaleDropped, "round %d", i)
				}
			}
			tomb, err := cat.LoadTable(ctx, icetable.TombstoneIdent(ident))
			require.NoError(t, err)
			require.Equal(t, []string{"1|3"}, duckRows(t, tomb.MetadataLocation(), "SELECT id, version FROM t"))

			// replay of the whole stream by another group, round by round: nothing is skipped by
			// offsets, every record is judged by version alone
			r := newWriter(ident, "g2")
			for _, recs := range rounds {
				_, err := r.Commit(ctx, recs, icetable.Offsets{tp: recs[len(recs)-1].Offset + 1}, nil)
				require.NoError(t, err)
			}
			require.Equal(t, final, duckRows(t, r.Tbl.MetadataLocation(), q), "replay by round")

			// the whole stream in one commit into a fresh table, and once more on top of it
			f := newWriter(table.Identifier{"db", "fresh"}, "g1")
			var all []icetable.Rec
			for _, recs := range rounds {
				all = append(all, recs...)
			}
			for i := range 2 {
				_, err = f.Commit(ctx, all, icetable.Offsets{tp: off}, nil)
				require.NoError(t, err)
				require.Equal(t, final, duckRows(t, f.Tbl.MetadataLocation(), q), "one commit, pass %d", i)
				f.Opts.OffsetsKey = icetable.OffsetsSummaryKey("g2") // second pass: a replay
			}
		})
	}

	// a crash after the tombstone commit and before the table commit leaves the tombstone
	// table ahead of the table: the replayed round still applies its delete, and its late
	// upserts stay dropped
	t.Run("tombstones-ahead-of-table", func(t *testing.T) {
		ctx := context.Background()
		cat := sqliteCatalog(t)
		w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
			IDColumns: []string{"id"}, AutoCreate: true, DeltaMode: true,
			VersionColumn: "version", OffsetsKey: icetable.OffsetsSummaryKey("g1"),
		}}
		recs := rounds[0][:2] // v1, v2 of key 1
		_, err := w.Commit(ctx, recs, icetable.Offsets{tp: 2}, nil)
		require.NoError(t, err)
		// the round [delete v3, late v2]: its tombstone committed, the table commit "crashed"
		del := rounds[0][2]
		require.NoError(t, w.CommitTombstones(ctx, []string{"id"}, []icerow.Row{{"id": int64(1), "version": int64(3)}}))
		require.Equal(t, []string{"1|v2|2"}, duckRows(t, w.Tbl.MetadataLocation(), q))
		// replay of the round
		late := rounds[1][0]
		late.Offset = del.Offset + 1
		st, err := w.Commit(ctx, []icetable.Rec{del, late}, icetable.Offsets{tp: late.Offset + 1}, nil)
		require.NoError(t, err)
		require.Empty(t, duckRows(t, w.Tbl.MetadataLocation(), q))
		require.Zero(t, st.Tombstones, "already recorded")
		// and the late v2 alone, in a later round
		late.Offset++
		_, err = w.Commit(ctx, []icetable.Rec{late}, icetable.Offsets{tp: late.Offset + 1}, nil)
		require.NoError(t, err)
		require.Empty(t, duckRows(t, w.Tbl.MetadataLocation(), q))
	})

	t.Run("no-version-column-unchanged", func(t *testing.T) {
		ctx := context.Background()
		cat := sqliteCatalog(t)
		ident := table.Identifier{"db", "customers"}
		w := &icetable.Writer{Cat: cat, Ident: ident, Opts: icetable.TableOptions{
			IDColumns: []string{"id"}, AutoCreate: true, DeltaMode: true, OffsetsKey: icetable.OffsetsSummaryKey("g1"),
		}}
		for _, recs := range rounds[:2] {
			st, err := w.Commit(ctx, recs, icetable.Offsets{tp: recs[len(recs)-1].Offset + 1}, nil)
			require.NoError(t, err)
			require.Zero(t, st.Tombstones)
		}
		// Kafka order: the later record wins
		require.Equal(t, []string{"1|late-v2|2", "2|k2v1|1"}, duckRows(t, w.Tbl.MetadataLocation(), "SELECT id, name, version FROM t"))
		_, err := cat.LoadTable(ctx, icetable.TombstoneIdent(ident))
		require.ErrorIs(t, err, catalog.ErrNoSuchTable)
	})
}

func TestTombstoneIdent(t *testing.T) {
	in := table.Identifier{"a", "b"}
	require.Equal(t, table.Identifier{"a", "b__deletes"}, icetable.TombstoneIdent(in))
	require.Equal(t, table.Identifier{"a", "b"}, in, "input not modified")
}
