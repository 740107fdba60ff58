package maintenance

import (
	"context"
	"fmt"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

var versionedSchema = &ice.StructType{FieldList: []ice.NestedField{
	{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
	{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
	{ID: 3, Name: "ver", Type: ice.PrimitiveTypes.Int64},
}}

// TestExpireDeletes: the versions of two deleted keys are recorded in <table>__deletes, one before the
// cutoff and one after; the expiry removes the first only. A late event older than the expired delete then
// brings its key back (what the horizon gives up), one older than the kept delete still changes nothing.
func TestExpireDeletes(t *testing.T) {
	ctx := context.Background()
	cat := sqliteCatalog(t, t.TempDir())
	ident := table.Identifier{"db", "versioned"}
	w := &icetable.Writer{Cat: cat, Ident: ident, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, AutoCreate: true, DeltaMode: true, UpsertMode: true, VersionColumn: "ver",
		OffsetsKey: icetable.OffsetsSummaryKey("connect-test"),
	}}
	tp := icetable.TP{Topic: "cdc", Partition: 0}
	off := int64(0)
	rec := func(op icerow.Op, id int64, name string, ver int64) icetable.Rec {
		off++
		return icetable.Rec{Op: op, Row: icerow.Row{"id": id, "name": name, "ver": ver}, Schema: versionedSchema, TP: tp, Offset: off - 1}
	}
	commit := func(recs ...icetable.Rec) {
		t.Helper()
		commitRound(t, w, recs, icetable.Offsets{tp: off})
	}
	commit(rec(icerow.OpUpdate, 1, "one", 10), rec(icerow.OpUpdate, 2, "two", 10), rec(icerow.OpUpdate, 3, "three", 10))
	commit(rec(icerow.OpDelete, 1, "one", 20))
	cutoff := time.Now()
	time.Sleep(20 * time.Millisecond)
	commit(rec(icerow.OpDelete, 2, "two", 20))

	tombs := func() []string {
		tbl := mustLoad(t, cat, icetable.TombstoneIdent(ident))
		res := icebergtest.Read(t, tbl.MetadataLocation(), "SELECT id, ver, _deleted_at IS NOT NULL FROM t ORDER BY id", nil)
		var out []string
		for _, r := range res.Rows {
			out = append(out, fmt.Sprintf("%v|%v|%v", r[0], r[1], r[2]))
		}
		return out
	}
	require.Equal(t, []string{"1|20|true", "2|20|true"}, tombs())

	res, err := ExpireDeletes(ctx, cat, ident, "", cutoff)
	require.NoError(t, err)
	require.Equal(t, 1, res.Expired)
	require.NotZero(t, res.SnapshotID)
	require.Equal(t, []string{"2|20|true"}, tombs())
	again, err := ExpireDeletes(ctx, cat, ident, "", cutoff)
	require.NoError(t, err)
	require.Equal(t, 0, again.Expired)

	// late events older than the deletes: key 1 has forgotten its delete, key 2 has not
	commit(rec(icerow.OpUpdate, 1, "one-late", 15), rec(icerow.OpUpdate, 2, "two-late", 15))
	var got []string
	for _, r := range icebergtest.Read(t, mustLoad(t, cat, ident).MetadataLocation(), "SELECT id, name, ver FROM t ORDER BY id", nil).Rows {
		got = append(got, fmt.Sprintf("%v|%v|%v", r[0], r[1], r[2]))
	}
	require.Equal(t, []string{"1|one-late|15", "3|three|10"}, got)
}
