// Package cdcstream generates random Debezium-style CDC streams, computes the state a sink must end in (the
// model), renders the events as Kafka records and shrinks a failing stream to a minimal one. It is pure: no
// Kafka, no sink; the end-to-end test that feeds real sinks lives in test/cdcmodel.
//
// The model (cdc-semantics): for every key the event with the highest version wins and a delete is an event
// like any other, at its version; on a tie the delete wins. A tombstone (null value) whose key's latest
// versioned event in Kafka order is a delete belongs to that delete (Debezium writes one right after each
// delete) and changes nothing: a stale delete's tombstone is stale with it. Any other tombstone is bare (its
// delete compacted away) and deletes the key at the highest version seen for it so far. Stale events, exact
// duplicates and replayed windows change nothing; a re-create at a higher version brings the key back with
// the new values only.
package cdcstream

import (
	"fmt"
	"strconv"
	"strings"
)

// Op is a Debezium operation, or Tombstone for a record with a null value.
type Op string

// The operations a stream holds.
const (
	Create    Op = "c"
	Update    Op = "u"
	Delete    Op = "d"
	Read      Op = "r" // snapshot read: an upsert
	Tombstone Op = "tombstone"
)

// Row is one row of the source table. Email is the late optional column (nil: absent).
type Row struct {
	ID        string
	Name      string
	Qty       int64
	UpdatedAt int64
	Email     *string
}

// String renders the row for failure reports.
func (r Row) String() string {
	email := "∅"
	if r.Email != nil {
		email = strconv.Quote(*r.Email)
	}
	return fmt.Sprintf("{name=%s qty=%d updated_at=%d email=%s}", strconv.Quote(r.Name), r.Qty, r.UpdatedAt, email)
}

// Event is one record of a stream. Key is local to the stream (the stream's prefix is added when it is
// rendered), LSN is the source position (source.lsn; 0 for a tombstone), Row is `after` for c/u/r and
// `before` for d (nil for a tombstone). How says how the generator made it (duplicate, stale, ...), for
// reports only.
type Event struct {
	Key string
	Op  Op
	LSN int64
	Row *Row
	How string
}

// String renders the event for failure reports.
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-9s", strconv.Quote(e.Key), e.Op)
	if e.Op != Tombstone {
		fmt.Fprintf(&b, " lsn=%d %s", e.LSN, e.Row)
	}
	if e.How != "" {
		fmt.Fprintf(&b, "  (%s)", e.How)
	}
	return b.String()
}

// Stream is the events of one stream, in source (and per-key Kafka) order. Streams of one run have disjoint
// key spaces: the rendered key is Prefix + "-" + Event.Key.
type Stream struct {
	Prefix string
	Events []Event
}

// FullKey is the key of e as written to Kafka and to the sink's id column.
func (s Stream) FullKey(e Event) string { return s.Prefix + "-" + e.Key }

// PrefixOf returns the stream prefix of a rendered key.
func PrefixOf(fullKey string) string {
	if i := strings.IndexByte(fullKey, '-'); i >= 0 {
		return fullKey[:i]
	}
	return fullKey
}

// Format renders a stream as a readable event list; phases (optional, one per event) mark commit
// boundaries: a line "-- commit --" is printed where the phase changes.
func Format(s Stream, phases []int) string {
	var b strings.Builder
	for i, e := range s.Events {
		if phases != nil && i > 0 && phases[i] != phases[i-1] {
			b.WriteString("    -- commit --\n")
		}
		fmt.Fprintf(&b, "    %s\n", e)
	}
	return b.String()
}
