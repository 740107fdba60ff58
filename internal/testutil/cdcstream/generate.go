package cdcstream

import (
	"fmt"
	"math/rand"
	"strings"
)

// Config bounds the generator. Probabilities are per source step.
type Config struct {
	MaxKeys  int // keys per stream: 1..MaxKeys
	MaxSteps int // source changes per stream: 1..MaxSteps
	// Duplicate: an exact redelivery of the key's previous record right after it (a producer retry).
	Duplicate float64
	// Stale: a redelivery of an older record of the key (not a tombstone) later in the stream.
	Stale float64
	// DeleteTombstone: a delete is followed by its tombstone (Debezium's tombstones.on.delete).
	DeleteTombstone float64
	// BareTombstone: a tombstone without its delete (the delete compacted away) for a live key.
	BareTombstone float64
	// Snapshot: a create is a snapshot read (op r) instead.
	Snapshot float64
	// Replay: the source re-emits its last 1..4 records in order, tombstones included (a Debezium
	// connector restarted from an older committed source offset).
	Replay float64
}

// DefaultConfig is the profile the model test runs: short streams (a few keys, up to a dozen changes) so
// that many of them fit one run, with every kind of event frequent.
func DefaultConfig() Config {
	return Config{MaxKeys: 3, MaxSteps: 10, Duplicate: 0.12, Stale: 0.2, DeleteTombstone: 0.8, BareTombstone: 0.03, Snapshot: 0.1, Replay: 0.08}
}

// keyNames are the local key stems: ASCII and non-ASCII (Cyrillic, CJK, an emoji, a combining accent).
var keyNames = []string{"k", "ключ", "键", "🔑", "e\u0301"}

// nameRunes feed the name column: quotes, backslash, tab/newline, accents, RTL, CJK, emoji (4-byte UTF-8).
var nameParts = []string{"Ana", "O'Brien", `"q"`, `back\slash`, "tab\there", "line\nbreak", "Zoë", "Łódź",
	"שלום", "مرحبا", "東京", "서울", "😀", "👩‍👩‍👧", "\u00a0", "Ω", "a\u0308", "x"}

func randName(rng *rand.Rand) string {
	n := 1 + rng.Intn(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = nameParts[rng.Intn(len(nameParts))]
	}
	return strings.Join(parts, " ")
}

// Generate makes one stream. The source changes of each key follow a real table's life (create, updates,
// delete with or without tombstone, re-create); the source position grows with every change of the stream.
// Redeliveries (duplicates, stale) and bare tombstones are mixed in per cfg. The late optional column
// (email) appears from a random step on.
func Generate(rng *rand.Rand, prefix string, cfg Config) Stream {
	nKeys := 1 + rng.Intn(cfg.MaxKeys)
	keys := make([]string, nKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s%d", keyNames[rng.Intn(len(keyNames))], i)
	}
	steps := 1 + rng.Intn(cfg.MaxSteps)
	lateAt := rng.Intn(steps + 1)
	lsn := int64(100 + rng.Intn(50))
	type keyLife struct {
		live    *Row
		history []Event // versioned records emitted for the key, for stale redeliveries
		last    Event   // the key's previous record (for exact duplicates)
		hasLast bool
		deleted bool
	}
	life := map[string]*keyLife{}
	for _, k := range keys {
		life[k] = &keyLife{}
	}
	var out []Event
	emit := func(e Event) {
		out = append(out, e)
		l := life[e.Key]
		l.last, l.hasLast = e, true
		if e.Op != Tombstone && e.How != "duplicate" && e.How != "stale redelivery" && e.How != "replay" {
			l.history = append(l.history, e)
		}
	}
	for step := 0; step < steps; step++ {
		k := keys[rng.Intn(nKeys)]
		l := life[k]
		lsn += 1 + int64(rng.Intn(5))
		switch {
		case l.live == nil:
			row := &Row{ID: k, Name: randName(rng), Qty: rng.Int63n(2_000_001) - 1_000_000, UpdatedAt: 1_700_000_000_000 + lsn}
			if step >= lateAt && rng.Float64() < 0.8 {
				email := fmt.Sprintf("%s@例え.jp", strings.ToLower(k))
				row.Email = &email
			}
			op, how := Create, ""
			if rng.Float64() < cfg.Snapshot {
				op = Read
			}
			if l.deleted {
				how = "re-create"
			}
			l.live, l.deleted = row, false
			emit(Event{Key: k, Op: op, LSN: lsn, Row: row, How: how})
		case rng.Float64() < 0.3:
			before := l.live
			l.live, l.deleted = nil, true
			emit(Event{Key: k, Op: Delete, LSN: lsn, Row: before})
			if rng.Float64() < cfg.DeleteTombstone {
				emit(Event{Key: k, Op: Tombstone})
			}
		default:
			row := *l.live
			row.UpdatedAt = 1_700_000_000_000 + lsn
			if rng.Intn(2) == 0 {
				row.Name = randName(rng)
			}
			row.Qty += int64(rng.Intn(100)) - 50
			if step >= lateAt && rng.Float64() < 0.8 {
				email := fmt.Sprintf("%s.%d@example.com", strings.ToLower(k), step)
				row.Email = &email
			} else {
				row.Email = nil // the optional column is absent from this record
			}
			l.live = &row
			emit(Event{Key: k, Op: Update, LSN: lsn, Row: &row})
		}
		// redeliveries and compaction artefacts of a random key
		k = keys[rng.Intn(nKeys)]
		l = life[k]
		if l.hasLast && rng.Float64() < cfg.Duplicate {
			d := l.last
			d.How = "duplicate"
			emit(d)
		}
		if len(l.history) > 1 && rng.Float64() < cfg.Stale {
			s := l.history[rng.Intn(len(l.history)-1)]
			s.How = "stale redelivery"
			emit(s)
		}
		if n := len(out); n > 0 && rng.Float64() < cfg.Replay {
			window := append([]Event(nil), out[max(0, n-1-rng.Intn(4)):]...)
			for _, r := range window {
				r.How = "replay"
				emit(r)
			}
		}
		if l.live != nil && rng.Float64() < cfg.BareTombstone {
			l.live, l.deleted = nil, true
			emit(Event{Key: k, Op: Tombstone, How: "bare tombstone"})
		}
	}
	return Stream{Prefix: prefix, Events: out}
}

// Partition maps a rendered key to one of n partitions (FNV-1a), so that every record of a key lands in
// the same partition and keeps its order.
func Partition(fullKey string, n int) int32 {
	h := uint32(2166136261)
	for i := 0; i < len(fullKey); i++ {
		h ^= uint32(fullKey[i])
		h *= 16777619
	}
	return int32(h % uint32(n))
}

// Tagged is an event of an interleaved run: which stream it belongs to and its place in that stream.
type Tagged struct {
	Stream int
	Index  int
}

// Interleave merges streams into one uniformly random sequence that keeps each stream's order (a shuffle
// of the multiset of stream ids), so a stream's events spread over the whole run.
func Interleave(rng *rand.Rand, streams []Stream) []Tagged {
	total := 0
	for _, s := range streams {
		total += len(s.Events)
	}
	pool := make([]int, 0, total)
	for i, s := range streams {
		for range s.Events {
			pool = append(pool, i)
		}
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	next := make([]int, len(streams))
	out := make([]Tagged, 0, total)
	for _, s := range pool {
		out = append(out, Tagged{Stream: s, Index: next[s]})
		next[s]++
	}
	return out
}
