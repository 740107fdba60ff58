package maintenance

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// referencedFiles lists every file (manifest lists, manifests, data and delete files) that a
// snapshot of tbl references, as local paths.
func referencedFiles(t testing.TB, tbl *table.Table) map[string]bool {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	require.NoError(t, err)
	out := map[string]bool{}
	for _, snap := range tbl.Metadata().Snapshots() {
		out[localPath(snap.ManifestList)] = true
		ms, err := snap.Manifests(fs)
		require.NoError(t, err)
		for _, m := range ms {
			out[localPath(m.FilePath())] = true
			for e, err := range m.Entries(fs, true) {
				require.NoError(t, err)
				out[localPath(e.DataFile().FilePath())] = true
			}
		}
	}
	return out
}

func localPath(p string) string { return strings.TrimPrefix(p, "file://") }

func requireExist(t testing.TB, files map[string]bool, why string) {
	t.Helper()
	for f := range files {
		_, err := os.Stat(f)
		require.NoError(t, err, "%s: %s", why, f)
	}
}

// upsertTable commits rounds of random upserts through the sink's writer (offsets key set) and
// then foreign commits without offsets (another writer), and returns the writers and the stream.
func upsertTable(t testing.TB, dir string) (*icetable.Writer, *stream) {
	t.Helper()
	cat := sqliteCatalog(t, dir)
	w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "customers"}, Opts: icetable.TableOptions{
		IDColumns: []string{"id"}, PartitionBy: []string{"day(ts)"}, AutoCreate: true, DeltaMode: true,
		OffsetsKey: icetable.OffsetsSummaryKey("connect-test"),
	}}
	s := &stream{rng: rand.New(rand.NewSource(1)), keys: 40, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
	for i := 0; i < 4; i++ {
		recs, offs := s.round(50)
		commitRound(t, w, recs, offs)
	}
	return w, s
}

// TestExpireKeepsOffsets: after a compaction and foreign commits that carry no offsets, expiry
// down to one snapshot still keeps every snapshot up to the newest one holding the sink's
// offsets; the files of expired snapshots are gone, every file of a kept snapshot is there, the
// readers see the model and the sink still skips what it committed.
func TestExpireKeepsOffsets(t *testing.T) {
	ctx := context.Background()
	w, s := upsertTable(t, t.TempDir())
	_, err := Compact(ctx, w.Cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	recs, offs := s.round(50)
	commitRound(t, w, recs, offs)
	foreign := &icetable.Writer{Cat: w.Cat, Ident: w.Ident, Opts: icetable.TableOptions{IDColumns: []string{"id"}, DeltaMode: true}}
	fs := &stream{rng: rand.New(rand.NewSource(2)), keys: 40, model: s.model, tp: icetable.TP{Topic: "other", Partition: 0}}
	for i := 0; i < 3; i++ {
		recs, offs := fs.round(20)
		commitRound(t, foreign, recs, offs)
	}
	tbl := mustLoad(t, w.Cat, w.Ident)
	before := referencedFiles(t, tbl)
	nBefore := len(tbl.Metadata().Snapshots())

	res, err := ExpireSnapshots(ctx, w.Cat, w.Ident, ExpireOptions{RetainLast: 1, MaxAge: time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, nBefore, res.SnapshotsBefore)
	require.Equal(t, 3, res.ProtectedDepth, "three foreign commits above the sink's last one")
	require.Equal(t, 4, res.SnapshotsAfter)

	tbl = mustLoad(t, w.Cat, w.Ident)
	require.Len(t, tbl.Metadata().Snapshots(), 4)
	after := referencedFiles(t, tbl)
	requireExist(t, after, "referenced by a kept snapshot")
	gone := 0
	for f := range before {
		if !after[f] {
			_, err := os.Stat(f)
			require.True(t, os.IsNotExist(err), "file of expired snapshots left: %s", f)
			gone++
		}
	}
	require.Positive(t, gone)
	got, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
	require.NoError(t, err)
	require.Equal(t, s.off, got[s.tp], "the sink's offsets survive expiry")
	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()))
	require.Equal(t, want, javaRows(t, tbl.MetadataLocation()))

	// a replay of what the sink committed is skipped: exactly-once holds across the expiry
	w.Tbl = nil
	st, err := w.Commit(ctx, recs, offs, nil)
	require.NoError(t, err)
	require.Equal(t, len(recs), st.Skipped)
}

// TestRemoveOrphanFiles: files no snapshot references and older than the safety age are removed
// (an aborted write, the files of snapshots expired without deleting them); a fresh orphan (a
// commit in flight) and every referenced file stay.
func TestRemoveOrphanFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, s := upsertTable(t, dir)
	_, err := Compact(ctx, w.Cat, w.Ident, CompactOptions{})
	require.NoError(t, err)
	_, err = ExpireSnapshots(ctx, w.Cat, w.Ident, ExpireOptions{RetainLast: 1, MaxAge: time.Millisecond, KeepFiles: true})
	require.NoError(t, err)
	dataDir := filepath.Join(dir, "warehouse", "db.db", "customers", "data")
	old := filepath.Join(dataDir, "aborted-write.parquet")
	require.NoError(t, os.WriteFile(old, []byte("not committed"), 0o644))
	// age everything: the referenced files must survive on reference alone
	past := time.Now().Add(-48 * time.Hour)
	require.NoError(t, filepath.Walk(filepath.Join(dir, "warehouse"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			err = os.Chtimes(p, past, past)
		}
		return err
	}))
	fresh := filepath.Join(dataDir, "in-flight.parquet")
	require.NoError(t, os.WriteFile(fresh, []byte("a commit in flight"), 0o644))

	_, err = RemoveOrphanFiles(ctx, w.Cat, w.Ident, OrphanOptions{OlderThan: time.Minute})
	require.ErrorContains(t, err, "below the minimum")

	tbl := mustLoad(t, w.Cat, w.Ident)
	refs := referencedFiles(t, tbl)
	dry, err := RemoveOrphanFiles(ctx, w.Cat, w.Ident, OrphanOptions{OlderThan: 24 * time.Hour, DryRun: true})
	require.NoError(t, err)
	require.Zero(t, dry.Removed)
	_, err = os.Stat(old)
	require.NoError(t, err, "a dry run removes nothing")

	res, err := RemoveOrphanFiles(ctx, w.Cat, w.Ident, OrphanOptions{OlderThan: 24 * time.Hour})
	require.NoError(t, err)
	require.Greater(t, res.Removed, 1, "the aborted write and the expired snapshots' files")
	var orphans []string
	for _, o := range res.Orphans {
		orphans = append(orphans, localPath(o))
	}
	require.Contains(t, orphans, old)
	for _, o := range orphans {
		require.False(t, refs[o], "a referenced file was taken for an orphan: %s", o)
	}
	_, err = os.Stat(old)
	require.True(t, os.IsNotExist(err))
	_, err = os.Stat(fresh)
	require.NoError(t, err, "a file younger than the safety age stays")
	requireExist(t, refs, "referenced")
	_, err = os.Stat(localPath(tbl.MetadataLocation()))
	require.NoError(t, err)

	want := s.model.rows()
	require.Equal(t, want, goRows(t, tbl))
	require.Equal(t, want, duckRows(t, tbl.MetadataLocation()))
}

// TestExpireAfterExpiredCompaction: compaction and expiry in turns, as the connector runs them.
// A compaction's manifests list the files it replaced as DELETED; the expiry that expires the
// snapshot before the compaction removes those files, and the next expiry, which expires the
// compaction's own snapshot, finds them gone: that is no failure. The files of kept snapshots
// stay and the readers see the model.
func TestExpireAfterExpiredCompaction(t *testing.T) {
	ctx := context.Background()
	w, s := upsertTable(t, t.TempDir())
	for i := 0; i < 3; i++ {
		res, err := Compact(ctx, w.Cat, w.Ident, CompactOptions{})
		require.NoError(t, err)
		require.NotZero(t, res.SnapshotID, "run %d compacted", i)
		exp, err := ExpireSnapshots(ctx, w.Cat, w.Ident, ExpireOptions{MaxAge: time.Millisecond})
		require.NoError(t, err, "run %d", i)
		require.Equal(t, 1, exp.SnapshotsAfter)
		w.Tbl = nil // its snapshot is expired: plan on the head
		recs, offs := s.round(50)
		commitRound(t, w, recs, offs)
	}
	tbl, err := w.Cat.LoadTable(ctx, w.Ident)
	require.NoError(t, err)
	requireExist(t, referencedFiles(t, tbl), "referenced by a kept snapshot")
	require.Equal(t, s.model.rows(), duckRows(t, tbl.MetadataLocation()))
}
