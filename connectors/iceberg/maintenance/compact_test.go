package maintenance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// stream produces random upserts and key-only deletes and keeps the model of the table.
type stream struct {
	rng   *rand.Rand
	keys  int
	model model
	tp    icetable.TP
	off   int64
	seq   int
}

func (s *stream) round(n int) ([]icetable.Rec, icetable.Offsets) {
	var recs []icetable.Rec
	for i := 0; i < n; i++ {
		id := int64(s.rng.Intn(s.keys))
		s.seq++
		op := icerow.OpUpdate
		var row icerow.Row
		if s.rng.Intn(5) == 0 {
			op = icerow.OpDelete
			row = icerow.Row{"id": id}
			delete(s.model, id)
		} else {
			day := s.rng.Intn(3) // a key moves between partitions of day(ts)
			name := "n" + strconv.Itoa(s.seq)
			row = icerow.Row{"id": id, "name": name, "ts": baseTime.Add(time.Duration(day) * 24 * time.Hour)}
			s.model[id] = modelRow(id, name, day)
		}
		recs = append(recs, icetable.Rec{Op: op, Row: row, Schema: customerSchema, TP: s.tp, Offset: s.off})
		s.off++
	}
	return recs, icetable.Offsets{s.tp: s.off}
}

// TestMaintenanceModel commits random upserts and deletes through the sink's writer, interleaved
// with maintenance: compactions alone, with a sink commit between the compaction's plan and its
// commit, and racing another compaction (one of the two is abandoned); manifest rewrites;
// snapshot expiries; whole runs. It ends idle: rounds of every action with no sink commit in
// between. After every step the live rows read by iceberg-go, DuckDB and (after each compaction
// across a sink commit, and at the end) Iceberg's Java reader equal the model, the sink's
// offsets are intact, and the head itself carries the sink's summary entries: its own offsets
// key, and the Apache sink's offsets as that sink's recovery reads them.
// Seed: MAINTENANCE_SEED.
func TestMaintenanceModel(t *testing.T) {
	seed := time.Now().UnixNano()
	if v := os.Getenv("MAINTENANCE_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	t.Logf("seed %d (MAINTENANCE_SEED=%d to replay)", seed, seed)
	for _, tc := range []struct {
		name        string
		partitionBy []string
	}{
		{"day-ts", []string{"day(ts)"}},
		{"unpartitioned", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat := sqliteCatalog(t, t.TempDir())
			ident := table.Identifier{"db", "customers"}
			w := &icetable.Writer{Cat: cat, Ident: ident, Opts: icetable.TableOptions{
				IDColumns: []string{"id"}, PartitionBy: tc.partitionBy, AutoCreate: true, DeltaMode: true,
				OffsetsKey: icetable.OffsetsSummaryKey("connect-test"),
			}}
			s := &stream{rng: rand.New(rand.NewSource(seed)), keys: 60, model: model{}, tp: icetable.TP{Topic: "cdc", Partition: 0}}
			// each round also records the summary entries of the Apache sink's committer, as a
			// table written by both sinks (a mixed or rolled-back cluster) holds them
			const controlTopic, group = "control-iceberg", "connect-test"
			ctlOffset := int64(0)
			sinkRound := func() {
				recs, offs := s.round(20 + s.rng.Intn(60))
				ctlOffset += int64(1 + s.rng.Intn(5))
				commitRoundWith(t, w, recs, offs, map[string]string{
					"kafka.connect.offsets." + controlTopic + "." + group: fmt.Sprintf(`{"0":%d}`, ctlOffset),
					"kafka.connect.commit-id":                             fmt.Sprintf("00000000-0000-0000-0000-%012d", ctlOffset),
					"kafka.connect.valid-through-ts":                      baseTime.Format(time.RFC3339Nano),
				})
			}
			// checkHead: the head's own summary holds the sink's entries of its last round
			checkHead := func(tbl *table.Table, step string) {
				t.Helper()
				head := tbl.CurrentSnapshot()
				require.NotNil(t, head.Summary, step)
				props := head.Summary.Properties
				var own map[string]int64
				require.Contains(t, props, w.Opts.OffsetsKey, "%s: head %d (%s, %s) carries no offsets", step, head.SnapshotID, head.Summary.Operation, props[SummaryMaintenance])
				require.NoError(t, json.Unmarshal([]byte(props[w.Opts.OffsetsKey]), &own), step)
				require.Equal(t, s.off, own[s.tp.String()], "%s: the head's offsets", step)
				jvm, ok, err := jvmOffsets(props, controlTopic, group)
				require.NoError(t, err, step)
				require.True(t, ok, "%s: the Apache sink finds no offsets on head %d (%s)", step, head.SnapshotID, props[SummaryMaintenance])
				require.Equal(t, map[int32]int64{0: ctlOffset}, jvm, "%s: the Apache sink's offsets", step)
				require.Equal(t, fmt.Sprintf("00000000-0000-0000-0000-%012d", ctlOffset), props["kafka.connect.commit-id"], step)
				require.Equal(t, baseTime.Format(time.RFC3339Nano), props["kafka.connect.valid-through-ts"], step)
			}
			// checkGo: the rows iceberg-go reads, the offsets and the head's summary
			checkGo := func(step string) *table.Table {
				t.Helper()
				tbl, err := cat.LoadTable(ctx, ident)
				require.NoError(t, err)
				require.Equal(t, s.model.rows(), goRows(t, tbl), "%s: iceberg-go", step)
				offs, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
				require.NoError(t, err)
				require.Equal(t, s.off, offs[s.tp], "%s: committed offsets", step)
				checkHead(tbl, step)
				return tbl
			}
			check := func(step string, java bool) *table.Table {
				t.Helper()
				tbl, err := cat.LoadTable(ctx, ident)
				require.NoError(t, err)
				want := s.model.rows()
				require.Equal(t, want, goRows(t, tbl), "%s: iceberg-go", step)
				require.Equal(t, want, duckRows(t, tbl.MetadataLocation()), "%s: DuckDB", step)
				if java {
					require.Equal(t, want, javaRows(t, tbl.MetadataLocation()), "%s: Java reader", step)
				}
				offs, err := icetable.CommittedOffsets(tbl, "", w.Opts.OffsetsKey)
				require.NoError(t, err)
				require.Equal(t, s.off, offs[s.tp], "%s: committed offsets", step)
				checkHead(tbl, step)
				return tbl
			}
			// checkReplace: the compaction's snapshot is a replace whose new files carry the
			// starting snapshot's sequence number.
			checkReplace := func(res CompactResult, step string) {
				t.Helper()
				if res.SnapshotID == 0 {
					return
				}
				tbl, err := cat.LoadTable(ctx, ident)
				require.NoError(t, err)
				snap := tbl.SnapshotByID(res.SnapshotID)
				require.Equal(t, table.OpReplace, snap.Summary.Operation, step)
				start := tbl.SnapshotByID(res.StartSnapshotID)
				added := 0
				for _, e := range entries(t, tbl, snap) {
					if e.SnapshotID() == snap.SnapshotID && e.DataFile().ContentType() == ice.EntryContentData {
						require.Equal(t, start.SequenceNumber, e.SequenceNum(), "%s: data sequence number of %s", step, e.DataFile().FilePath())
						added++
					}
				}
				require.Equal(t, res.DataFilesAdded, added, step)
			}

			sinkRound()
			check("first round", false)
			// every kind of step at least twice, in random order
			kinds := []int{0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 3, 3, 4, 5, 5, 6, 6, 7, 7, 8, 8}
			s.rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
			for step, k := range kinds {
				name := fmt.Sprintf("step %d", step)
				switch {
				case k <= 1:
					sinkRound()
					check(name+" sink round", false)
				case k == 2:
					before, err := Stats(ctx, mustLoad(t, cat, ident), "")
					require.NoError(t, err)
					res, err := Compact(ctx, cat, ident, CompactOptions{})
					require.NoError(t, err)
					require.Empty(t, res.Abandoned)
					after, err := Stats(ctx, mustLoad(t, cat, ident), "")
					require.NoError(t, err)
					t.Logf("%s compaction: data files %d -> %d, delete files %d -> %d", name, before.DataFiles, after.DataFiles, before.DeleteFiles, after.DeleteFiles)
					check(name+" compaction", false)
					checkReplace(res, name)
					if res.SnapshotID != 0 {
						require.Zero(t, after.DeleteFiles, "%s: every delete file was applied", name)
						require.LessOrEqual(t, after.DataFiles, max(1, len(tc.partitionBy)*3), name)
					}
				case k == 3 || k == 4:
					// a sink commit lands between the compaction's plan and its commit: its
					// equality deletes must still reach the rewritten rows
					rw, err := PlanCompaction(ctx, cat, ident, CompactOptions{})
					require.NoError(t, err)
					sinkRound()
					if rw != nil {
						res, err := rw.Commit(ctx)
						require.NoError(t, err)
						require.Empty(t, res.Abandoned, name)
						t.Logf("%s compaction across a sink commit: %d data files -> %d, %d delete files removed", name, res.DataFilesRewritten, res.DataFilesAdded, res.DeleteFilesRemoved)
						check(name+" compaction across a sink commit", true)
						checkReplace(res, name)
					} else {
						check(name+" sink round", false)
					}
				case k == 6:
					res, err := RewriteManifests(ctx, cat, ident, "")
					require.NoError(t, err)
					t.Logf("%s manifest rewrite: %d -> %d", name, res.ManifestsBefore, res.ManifestsAfter)
					check(name+" manifest rewrite", false)
				case k == 7:
					res, err := ExpireSnapshots(ctx, cat, ident, ExpireOptions{MaxAge: time.Millisecond})
					require.NoError(t, err)
					t.Logf("%s expiry: snapshots %d -> %d", name, res.SnapshotsBefore, res.SnapshotsAfter)
					check(name+" expiry", false)
				case k == 8:
					_, err := Run(ctx, cat, ident, Policy{Expire: ExpireOptions{MaxAge: time.Millisecond}}, AllActions)
					require.NoError(t, err)
					check(name+" maintenance run", false)
				default:
					// two compactions from the same start: the second finds its files gone
					a, err := PlanCompaction(ctx, cat, ident, CompactOptions{})
					require.NoError(t, err)
					b, err := PlanCompaction(ctx, cat, ident, CompactOptions{})
					require.NoError(t, err)
					if a == nil {
						require.Nil(t, b)
						continue
					}
					var bPaths []string
					for _, f := range b.added {
						bPaths = append(bPaths, strings.TrimPrefix(f.FilePath(), "file://"))
					}
					resA, err := a.Commit(ctx)
					require.NoError(t, err)
					require.Empty(t, resA.Abandoned)
					resB, err := b.Commit(ctx)
					require.NoError(t, err)
					require.NotEmpty(t, resB.Abandoned, "%s: the second rewrite must be abandoned", name)
					t.Logf("%s racing compactions: the second abandoned: %s", name, resB.Abandoned)
					for _, f := range bPaths {
						_, err := os.Stat(f)
						require.True(t, os.IsNotExist(err), "%s: abandoned file %s left behind", name, f)
					}
					check(name+" racing compactions", false)
				}
			}
			check("busy end", false)
			// idle: maintenance with no sink commit in between, as between two rounds of a quiet
			// topic, each action after the other and whole runs
			for pass := 0; pass < 2; pass++ {
				name := fmt.Sprintf("idle pass %d", pass)
				_, err := RewriteManifests(ctx, cat, ident, "")
				require.NoError(t, err)
				checkGo(name + " manifest rewrite")
				_, err = Compact(ctx, cat, ident, CompactOptions{MinInputFiles: 1})
				require.NoError(t, err)
				checkGo(name + " compaction")
				_, err = ExpireSnapshots(ctx, cat, ident, ExpireOptions{MaxAge: time.Millisecond})
				require.NoError(t, err)
				checkGo(name + " expiry")
				_, err = Run(ctx, cat, ident, Policy{Expire: ExpireOptions{MaxAge: time.Millisecond}}, AllActions)
				require.NoError(t, err)
				check(name+" maintenance run", false)
			}
			check("idle end", true)
		})
	}
}

func mustLoad(t testing.TB, cat catalog.Catalog, ident table.Identifier) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	return tbl
}
