package lakeops

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/lakepipeline"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// liveFiles lists the data and delete files of the table's current snapshot, as maintenance's
// inventory does: what a reader of the table can reach.
func (p *pipeline) liveFiles(name string) []string {
	tbl := p.Table(name)
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	fs, err := tbl.FS(context.Background())
	require.NoError(p.T, err)
	manifests, err := snap.Manifests(fs)
	require.NoError(p.T, err)
	var out []string
	for _, m := range manifests {
		for e, err := range m.Entries(fs, true) {
			require.NoError(p.T, err)
			out = append(out, e.DataFile().FilePath())
		}
	}
	return out
}

// filesHolding lists the live files of the named tables that physically hold value.
func (p *pipeline) filesHolding(value string, tables ...string) map[string][]string {
	out := map[string][]string{}
	for _, name := range tables {
		for f, n := range icebergtest.FilesHolding(p.T, value, p.liveFiles(name)) {
			if n > 0 {
				out[name] = append(out[name], f)
			}
		}
	}
	return out
}

func localPath(loc string) string {
	for _, pfx := range []string{"file://", "file:"} {
		if strings.HasPrefix(loc, pfx) {
			return strings.TrimPrefix(loc, pfx)
		}
	}
	return loc
}

func (p *pipeline) duckCount(name, where string) string {
	res := icebergtest.Read(p.T, p.Table(name).MetadataLocation(), "SELECT count(*) AS n FROM t WHERE "+where, nil)
	return fmt.Sprint(res.Maps()[0]["n"])
}

// TestErasureEndToEnd follows docs/RECONCILE.md's erasure procedure: a key deleted at the source (a
// Debezium delete and its tombstone through Kafka) is gone from ClickHouse FINAL and from the Iceberg
// current table (DuckDB), reconcile is clean; the ClickHouse mutation removes its stored rows, a delete of
// the key's rows in the raw history table hides them there. The key's values are still in Iceberg data
// files (equality deletes hide rows, they do not rewrite files); after compaction and snapshot expiry of
// the current, history and <table>__deletes tables (the latter's row expired by the deletes horizon), no
// live file of any of them holds the key, read straight from Parquet, and the files that held it are gone
// from storage.
func TestErasureEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := lakepipeline.Seed(t)
	rng := rand.New(rand.NewSource(seed))
	p := newPipeline(t)
	p.Start()
	p.Produce(rng, 40)
	p.Wait()

	model := p.Model()
	var keys []string
	for k := range model {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	victim := keys[len(keys)/2]
	p.Delete(victim) // a Debezium delete and its tombstone
	p.Wait()
	p.Stop()
	_, stillThere := p.Model()[victim]
	require.False(t, stillThere)

	tbl := p.DB + ".customers"
	require.Equal(t, "0", chdbtest.MustQuery(t, p.S, "SELECT count() FROM "+tbl+" FINAL WHERE id = "+quoteString(victim)), "ClickHouse FINAL")
	require.Equal(t, "0", p.duckCount("cdc.customers", "id = "+quoteString(victim)), "Iceberg current table (DuckDB)")
	r := p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	live := len(p.Model())
	p.crossCheck(r, live, live)

	// ClickHouse still stores the key's rows (the delete row and older versions) until a mutation removes them.
	require.NotEqual(t, "0", chdbtest.MustQuery(t, p.S, "SELECT count() FROM "+tbl+" WHERE id = "+quoteString(victim)))
	chdbtest.MustExec(t, p.S, "ALTER TABLE "+tbl+" DELETE WHERE id = "+quoteString(victim)+" SETTINGS mutations_sync = 2")
	require.Equal(t, "0", chdbtest.MustQuery(t, p.S, "SELECT count() FROM "+tbl+" WHERE id = "+quoteString(victim)), "stored ClickHouse rows")

	// The raw history holds every event of the key until its rows are deleted.
	pk, _ := json.Marshal(map[string]string{"id": victim})
	where := "primary_key = " + quoteString(string(pk))
	before := p.duckCount("cdc.history", "true")
	n := p.duckCount("cdc.history", where)
	require.NotEqual(t, "0", n, "history rows of the key")
	hist := p.Table("cdc.history")
	_, err := hist.Delete(context.Background(), ice.EqualTo(ice.Reference("primary_key"), string(pk)), nil)
	require.NoError(t, err)
	require.Equal(t, "0", p.duckCount("cdc.history", where), "history rows of the key after the delete (DuckDB)")
	var b, k int
	fmt.Sscan(before, &b)
	fmt.Sscan(n, &k)
	require.Equal(t, fmt.Sprint(b-k), p.duckCount("cdc.history", "true"), "the other history rows stay")

	// Deletes hide the key; its values stay in the files until maintenance rewrites and expires them.
	iceTables := []string{"cdc.customers", "cdc.history", "cdc.customers" + icetable.TombstoneSuffix}
	held := p.filesHolding(victim, iceTables...)
	t.Logf("live files holding %q before maintenance: %v", victim, held)
	for _, name := range iceTables {
		require.NotEmpty(t, held[name], "%s: a live file still holds the deleted key", name)
	}
	var heldFiles []string
	for _, name := range iceTables {
		heldFiles = append(heldFiles, held[name]...)
	}
	// Snapshots before the rewrites reference the old files, so only their expiry removes them.
	pol := maintenance.Policy{Expire: maintenance.ExpireOptions{RetainLast: 1, MaxAge: time.Millisecond}, DeletesHorizon: time.Millisecond}
	do := maintenance.Actions{RewriteManifests: true, Compact: true, ExpireSnapshots: true}
	cat := p.Catalog()
	// a table's __deletes companion is maintained with it, in the same run (reconcile.Report.Companion)
	for _, name := range iceTables {
		if strings.HasSuffix(name, icetable.TombstoneSuffix) {
			continue
		}
		rep, err := maintenance.Run(context.Background(), cat, catalog.ToIdentifier(name), pol, do)
		require.NoError(t, err, name)
		js, _ := json.Marshal(rep)
		t.Logf("maintenance of %s: %s", name, js)
		reps := []*maintenance.Report{rep}
		if name == "cdc.customers" {
			require.NotNil(t, rep.Deletes)
			require.NotZero(t, rep.Deletes.Expired, "the deleted keys' rows of %s expired", rep.Deletes.Table)
			require.NotNil(t, rep.Companion, "%s%s maintained with its table", name, icetable.TombstoneSuffix)
			reps = append(reps, rep.Companion)
		}
		for _, r := range reps {
			require.NotZero(t, r.Compaction.SnapshotID, "%s compacted", r.Table)
			require.Empty(t, r.Compaction.Abandoned, r.Table)
			require.Equal(t, 1, r.After.Snapshots, "%s: one snapshot left", r.Table)
		}
	}
	require.Empty(t, p.filesHolding(victim, iceTables...), "live files holding the key after maintenance")
	for _, f := range heldFiles {
		_, err := os.Stat(localPath(f))
		require.True(t, os.IsNotExist(err), "%s still in storage (%v)", f, err)
	}

	require.Equal(t, "0", p.duckCount("cdc.customers", "id = "+quoteString(victim)))
	require.Equal(t, fmt.Sprint(b-k), p.duckCount("cdc.history", "true"), "the history rows after maintenance")
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	p.crossCheck(r, live, live)
}
