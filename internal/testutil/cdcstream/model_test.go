package cdcstream

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func row(key string, lsn int64, name string) *Row {
	return &Row{ID: key, Name: name, Qty: lsn, UpdatedAt: 1_700_000_000_000 + lsn}
}

func ev(op Op, key string, lsn int64, r *Row) Event { return Event{Key: key, Op: op, LSN: lsn, Row: r} }

// The tricky cases of the model, for both version sources.
func TestModelTrickyCases(t *testing.T) {
	c110 := row("k", 110, "create")
	u115 := row("k", 115, "update")
	c130 := row("k", 130, "re-create")
	tomb := Event{Key: "k", Op: Tombstone}
	for _, tc := range []struct {
		name   string
		events []Event
		want   *Row
	}{
		{"create update", []Event{ev(Create, "k", 110, c110), ev(Update, "k", 115, u115)}, u115},
		{"delete then tombstone", []Event{ev(Create, "k", 110, c110), ev(Update, "k", 115, u115), ev(Delete, "k", 120, u115), tomb}, nil},
		// the reproduction of the lost delete version: a stale create after delete + tombstone
		{"stale redelivery after delete and tombstone", []Event{ev(Create, "k", 110, c110), ev(Update, "k", 115, u115),
			ev(Delete, "k", 120, u115), tomb, ev(Create, "k", 110, c110)}, nil},
		{"stale update after delete", []Event{ev(Create, "k", 110, c110), ev(Update, "k", 115, u115), ev(Delete, "k", 120, u115),
			ev(Update, "k", 115, u115)}, nil},
		{"delete and re-create at a higher version", []Event{ev(Create, "k", 110, c110), ev(Delete, "k", 120, c110), tomb,
			ev(Create, "k", 130, c130)}, c130},
		{"stale delete after re-create", []Event{ev(Create, "k", 110, c110), ev(Delete, "k", 120, c110), tomb,
			ev(Create, "k", 130, c130), ev(Delete, "k", 120, c110)}, c130},
		{"stale create after re-create", []Event{ev(Create, "k", 110, c110), ev(Delete, "k", 120, c110),
			ev(Create, "k", 130, c130), ev(Create, "k", 110, c110)}, c130},
		{"exact duplicates", []Event{ev(Create, "k", 110, c110), ev(Create, "k", 110, c110), ev(Update, "k", 115, u115),
			ev(Update, "k", 115, u115)}, u115},
		{"duplicate delete and tombstone", []Event{ev(Create, "k", 110, c110), ev(Delete, "k", 120, c110), tomb,
			ev(Delete, "k", 120, c110), tomb}, nil},
		{"out of order: older update after newer", []Event{ev(Create, "k", 110, c110), ev(Update, "k", 130, c130),
			ev(Update, "k", 115, u115)}, c130},
		{"bare tombstone deletes at the highest version seen", []Event{ev(Create, "k", 110, c110), ev(Update, "k", 115, u115),
			tomb, ev(Update, "k", 115, u115), ev(Create, "k", 110, c110)}, nil},
		{"bare tombstone before anything: nothing to delete", []Event{tomb, ev(Create, "k", 110, c110)}, c110},
		{"stale delete and its tombstone after re-create", []Event{ev(Create, "k", 110, c110), ev(Delete, "k", 120, c110), tomb,
			ev(Create, "k", 130, c130), ev(Delete, "k", 120, c110), tomb}, c130},
		{"replayed window delete, tombstone, re-create", []Event{ev(Create, "k", 110, c110), ev(Delete, "k", 120, c110), tomb,
			ev(Create, "k", 130, c130), ev(Delete, "k", 120, c110), tomb, ev(Create, "k", 130, c130)}, c130},
		{"tombstone after a stale delete and a later update is bare", []Event{ev(Create, "k", 110, c110), ev(Update, "k", 130, c130),
			ev(Delete, "k", 120, c110), ev(Update, "k", 115, u115), tomb, ev(Update, "k", 130, c130)}, nil},
		{"second tombstone after a delete's tombstone changes nothing", []Event{ev(Create, "k", 130, c130), ev(Delete, "k", 120, c110),
			tomb, tomb}, c130},
		{"snapshot read is an upsert", []Event{ev(Read, "k", 110, c110)}, c110},
	} {
		for _, vs := range []VersionSource{VersionLSN, VersionColumn} {
			t.Run(tc.name+"/"+vs.String(), func(t *testing.T) {
				got := State(tc.events, vs)
				if tc.want == nil {
					require.Empty(t, got)
					return
				}
				require.Equal(t, map[string]Row{"k": *tc.want}, got)
			})
		}
	}
}

// With updated_at as the version, a delete carries its before row's value: a stale redelivery of that
// very update ties with the delete and the delete wins.
func TestModelColumnVersionDeleteTie(t *testing.T) {
	u115 := row("k", 115, "update")
	events := []Event{ev(Update, "k", 115, u115), ev(Delete, "k", 120, u115), ev(Update, "k", 115, u115)}
	require.Empty(t, State(events, VersionColumn))
	require.Empty(t, State(events, VersionLSN))
}

// Keys are independent.
func TestModelKeysIndependent(t *testing.T) {
	a, b := row("a", 110, "a"), row("b", 111, "b")
	got := State([]Event{ev(Create, "a", 110, a), ev(Create, "b", 111, b), ev(Delete, "a", 112, a), {Key: "a", Op: Tombstone}}, VersionLSN)
	require.Equal(t, map[string]Row{"b": *b}, got)
}

// The known cases all end with the key deleted or at its newest version, whatever the commits.
func TestKnownCasesModel(t *testing.T) {
	for _, c := range KnownCases(true) {
		require.Len(t, c.Phases, len(c.Events), c.Name)
		for _, vs := range []VersionSource{VersionLSN, VersionColumn} {
			got := State(c.Events, vs)
			if r, ok := got["k"]; ok {
				require.Contains(t, []string{"re-create", "update"}, r.Name, c.Name)
			}
		}
	}
}
