package cdcstream

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The same seed gives the same stream.
func TestGenerateDeterministic(t *testing.T) {
	a := Generate(rand.New(rand.NewSource(7)), "s1", DefaultConfig())
	b := Generate(rand.New(rand.NewSource(7)), "s1", DefaultConfig())
	require.Equal(t, a, b)
}

// Source changes of a stream have strictly growing positions; every redelivery repeats an earlier record
// of its key exactly (a replay: of the stream); every kind of event occurs over a few thousand streams.
func TestGenerateShape(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	cfg := DefaultConfig()
	cfg.BareTombstone = 0.05
	kinds := map[string]int{}
	for i := 0; i < 3000; i++ {
		s := Generate(rng, fmt.Sprintf("s%d", i), cfg)
		require.NotEmpty(t, s.Events)
		var lastLSN int64
		seen := map[string][]Event{}
		for j, e := range s.Events {
			require.True(t, utf8.ValidString(e.Key))
			switch e.How {
			case "duplicate":
				prev := seen[e.Key]
				require.NotEmpty(t, prev)
				last := prev[len(prev)-1]
				last.How = e.How
				require.Equal(t, last, e, "event %d", j)
			case "stale redelivery":
				found := false
				for _, p := range seen[e.Key] {
					p.How = e.How
					if p.LSN == e.LSN && p.Op == e.Op && *p.Row == *e.Row {
						found = true
					}
				}
				require.True(t, found, "stale redelivery %d repeats an earlier record", j)
				require.Less(t, e.LSN, lastLSN)
			case "bare tombstone":
				require.Equal(t, Tombstone, e.Op)
			case "replay":
				found := false
				for _, p := range s.Events[:j] {
					if p.Key == e.Key && p.Op == e.Op && p.LSN == e.LSN && (p.Row == nil) == (e.Row == nil) && (p.Row == nil || *p.Row == *e.Row) {
						found = true
					}
				}
				require.True(t, found, "replay %d repeats an earlier record", j)
			default:
				if e.Op != Tombstone {
					require.Greater(t, e.LSN, lastLSN, "event %d", j)
					lastLSN = e.LSN
				} else {
					prev := seen[e.Key]
					require.Equal(t, Delete, prev[len(prev)-1].Op, "a tombstone follows its delete")
				}
			}
			seen[e.Key] = append(seen[e.Key], e)
			kinds[string(e.Op)+"/"+e.How]++
			if e.Row != nil && e.Row.Email != nil {
				kinds["late column"]++
			}
		}
	}
	for _, k := range []string{"c/", "r/", "u/", "d/", "tombstone/", "c/re-create", "c/duplicate", "u/duplicate",
		"d/duplicate", "tombstone/duplicate", "c/stale redelivery", "u/stale redelivery", "d/stale redelivery",
		"tombstone/bare tombstone", "d/replay", "tombstone/replay", "c/replay", "late column"} {
		require.Greater(t, kinds[k], 10, "kind %q: %v", k, kinds)
	}
	t.Logf("kinds over 3000 streams: %v", kinds)
}

// The rendered record is a Debezium envelope whose row carries the full key; a tombstone has a null value.
func TestDebeziumRendering(t *testing.T) {
	email := "ä@例え.jp"
	s := Stream{Prefix: "s3"}
	k, v := Debezium(s, Event{Key: "键0", Op: Delete, LSN: 120, Row: &Row{ID: "键0", Name: "a\tb", Qty: -5, UpdatedAt: 7, Email: &email}})
	require.JSONEq(t, `{"id":"s3-键0"}`, string(k))
	var env map[string]any
	require.NoError(t, json.Unmarshal(v, &env))
	require.Equal(t, "d", env["op"])
	require.Nil(t, env["after"])
	require.Equal(t, map[string]any{"id": "s3-键0", "name": "a\tb", "qty": -5.0, "updated_at": 7.0, "email": email}, env["before"])
	require.Equal(t, 120.0, env["source"].(map[string]any)["lsn"])
	k, v = Debezium(s, Event{Key: "k1", Op: Tombstone})
	require.JSONEq(t, `{"id":"s3-k1"}`, string(k))
	require.Nil(t, v)
	require.Equal(t, "s3", PrefixOf("s3-k1-x"))
}

// Interleaving keeps each stream's order and loses nothing; a key always maps to one partition.
func TestInterleaveAndPartition(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var streams []Stream
	for i := 0; i < 50; i++ {
		streams = append(streams, Generate(rng, fmt.Sprintf("s%d", i), DefaultConfig()))
	}
	next := make([]int, len(streams))
	for _, tg := range Interleave(rng, streams) {
		require.Equal(t, next[tg.Stream], tg.Index)
		next[tg.Stream]++
	}
	for i, s := range streams {
		require.Equal(t, len(s.Events), next[i])
	}
	require.Equal(t, Partition("s1-键0", 3), Partition("s1-键0", 3))
	hit := map[int32]bool{}
	for i := 0; i < 100; i++ {
		hit[Partition(fmt.Sprintf("s%d-k0", i), 3)] = true
	}
	require.Len(t, hit, 3)
}
