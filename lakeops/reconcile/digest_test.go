package reconcile

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCompareDigestsModel: random tables on both sides, random changes to one side (a column changed, a
// version changed, a row removed, a row added), in random insertion order; compareDigests must name
// exactly the changed keys with their kind and columns (checked against a plain model), equal sets must give
// equal checksums in every bucket, and the listing must stop at maxKeys while counting everything.
func TestCompareDigestsModel(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	cols := []mapping{{Name: "id", kind: kindString}, {Name: "a", kind: kindString}, {Name: "b", kind: kindInt}}
	for round := 0; round < 300; round++ {
		n := rng.Intn(60)
		type row struct {
			texts []string
			ver   string
		}
		base := map[string]row{}
		for i := 0; i < n; i++ {
			k := fmt.Sprintf("k%d", rng.Intn(200))
			base[k] = row{[]string{k, fmt.Sprint(rng.Intn(3)), fmt.Sprint(rng.Intn(3))}, fmt.Sprint(rng.Intn(1000))}
		}
		serve := map[string]row{}
		for k, r := range base {
			serve[k] = row{append([]string(nil), r.texts...), r.ver}
		}
		want := map[string]Mismatch{}
		for k := range base {
			switch rng.Intn(8) {
			case 0:
				delete(serve, k)
				want[k] = Mismatch{Key: k, Kind: MissingInClickHouse}
			case 1:
				r := serve[k]
				r.texts[1] += "x"
				serve[k] = r
				want[k] = Mismatch{Key: k, Kind: Different, Columns: []string{"a"}}
			case 2:
				r := serve[k]
				r.ver += "1"
				serve[k] = r
				want[k] = Mismatch{Key: k, Kind: Different, Columns: []string{"version"}}
			}
		}
		for i := rng.Intn(3); i > 0; i-- {
			k := fmt.Sprintf("extra%d", i)
			serve[k] = row{[]string{k, nullText, "0"}, "1"}
			want[k] = Mismatch{Key: k, Kind: ExtraInClickHouse}
		}
		b := bucketer{col: -1, buckets: 1 + rng.Intn(5)}
		fill := func(m map[string]row) *digest {
			d := newDigest(cols)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			for _, k := range keys {
				d.add(k, m[k].texts, m[k].ver, b.of(k, m[k].texts))
			}
			return d
		}
		maxKeys := 1 + rng.Intn(10)
		ice, ch, buckets, list, counts := compareDigests(fill(base), fill(serve), maxKeys, nil)
		var wantList []Mismatch
		wantCounts := map[string]int{}
		for _, m := range want {
			wantList = append(wantList, m)
			wantCounts[m.Kind]++
		}
		sort.Slice(wantList, func(i, j int) bool { return wantList[i].Key < wantList[j].Key })
		if len(wantList) > maxKeys {
			wantList = wantList[:maxKeys]
		}
		require.Equal(t, wantList, list, "round %d", round)
		require.Equal(t, wantCounts, counts, "round %d", round)
		require.Equal(t, int64(len(base)), ice.Rows)
		require.Equal(t, int64(len(serve)), ch.Rows)
		require.Equal(t, len(want) == 0, ice.RowChecksum == ch.RowChecksum && ice.KeyChecksum == ch.KeyChecksum, "round %d", round)
		for _, bk := range buckets {
			dirty := false
			for k := range want {
				if b.of(k, nil) == bk.Bucket {
					dirty = true
				}
			}
			require.Equal(t, !dirty, bk.Match, "round %d bucket %s", round, bk.Bucket)
		}
	}
}
