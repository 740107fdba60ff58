package icebergtest

import (
	"fmt"
	"math/rand"
	"sort"
)

// CDCEvent is one change of a customer row in a Debezium CDC stream.
type CDCEvent struct {
	Op      string // c, u, d, r
	ID      int64
	Name    string
	Day     int
	Version int64
	KeyOnly bool // delete whose before holds only the key (REPLICA IDENTITY DEFAULT)
}

// CDCStream makes a stream over nkeys keys spread over parts partitions (keyed): inserts,
// several updates of a key close together (within one commit), deletes (half of them carry
// only the key), re-inserts, partition moves (day changes), and redelivered duplicates: runs
// of a partition's last events sent again in order, as a restarted CDC source does.
func CDCStream(seed int64, n, nkeys, parts int) (events []CDCEvent, want map[int64]CDCEvent) {
	rng := rand.New(rand.NewSource(seed))
	want = map[int64]CDCEvent{}
	ver := map[int64]int64{}
	hist := make([][]CDCEvent, parts)
	for len(events) < n {
		if rng.Intn(25) == 0 {
			p := rng.Intn(parts)
			k := min(len(hist[p]), 1+rng.Intn(6))
			events = append(events, hist[p][len(hist[p])-k:]...)
			continue
		}
		id := int64(rng.Intn(nkeys))
		ver[id]++
		cur, exists := want[id]
		var e CDCEvent
		switch {
		case !exists:
			e = CDCEvent{Op: "c", ID: id, Name: fmt.Sprintf("c%d-v%d", id, ver[id]), Day: rng.Intn(4), Version: ver[id]}
		case rng.Intn(6) == 0:
			e = CDCEvent{Op: "d", ID: id, Version: ver[id], KeyOnly: rng.Intn(2) == 0, Name: cur.Name, Day: cur.Day}
		default:
			e = CDCEvent{Op: "u", ID: id, Name: fmt.Sprintf("u%d-v%d", id, ver[id]), Day: rng.Intn(4), Version: ver[id]}
		}
		events = append(events, e)
		p := int(id) % parts
		hist[p] = append(hist[p], e)
		if e.Op == "d" {
			delete(want, id)
		} else {
			want[id] = e
		}
	}
	return events, want
}

// WantRows are the rows "id|name|version" of the current state, sorted (DuckRows of
// "SELECT id, name, version" gives them in this form).
func WantRows(want map[int64]CDCEvent) []string {
	var out []string
	for id, e := range want {
		out = append(out, fmt.Sprintf("%d|%s|%d", id, e.Name, e.Version))
	}
	sort.Strings(out)
	return out
}
