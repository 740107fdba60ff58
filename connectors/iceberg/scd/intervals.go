package scd

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"time"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// Columns of the SCD table besides the attributes.
const (
	ColBusinessKey   = "business_key"
	ColAttributes    = "attributes" // the whole payload, when no attribute is named
	ColValidFrom     = "valid_from"
	ColValidTo       = "valid_to"
	ColIsCurrent     = "is_current"
	ColSourceVersion = "source_version"
	ColRecordHash    = "record_hash"
	ColIsDeleted     = "is_deleted" // only with delete markers
)

// Event is one row of the history table as the materialization sees it.
type Event struct {
	Key       string
	Version   any       // the source version: a string or a number, ordered by compareVersion
	ValidFrom time.Time // zero when the row has no time
	Deleted   bool
	Attrs     []any // the attribute values (string or nil), in the order of the SCD table's attribute columns
	// Delivery orders events of one key and version (redeliveries, a source that reused a
	// version): the last delivered wins. For the raw history, the Kafka partition and offset.
	Delivery [2]int64
}

// Rules say how versions become intervals.
type Rules struct {
	// SkipUnchanged drops a version whose attributes hash equal to the previous kept version of
	// its key (a live one): the interval before it simply goes on.
	SkipUnchanged bool
	// DeleteMarkers keeps a row for each delete (is_deleted=true, attributes null, is_current
	// false) from the delete's valid_from to the next version's. Without it a delete only closes
	// the interval before it.
	DeleteMarkers bool
}

// Hash is the record_hash of attribute values: SHA-256 over each value, null and empty told apart.
func Hash(attrs []any) string {
	h := sha256.New()
	var n [9]byte
	for _, a := range attrs {
		s, ok := a.(string)
		if !ok {
			h.Write([]byte{0})
			continue
		}
		n[0] = 1
		binary.BigEndian.PutUint64(n[1:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Intervals turns the events of ONE key (any order, duplicates allowed) into its SCD rows, oldest
// first. Versions are ordered by source version; valid_to is the next kept version's valid_from
// (the LEAD over the key's versions), so a late older version splits the interval it falls in.
// Events without a version cannot be placed and are ignored.
func Intervals(events []Event, attrNames []string, r Rules) []icerow.Row {
	evs := make([]Event, 0, len(events))
	for _, e := range events {
		if e.Version != nil {
			evs = append(evs, e)
		}
	}
	slices.SortStableFunc(evs, func(a, b Event) int {
		if c := compareVersion(a.Version, b.Version); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Delivery[0], b.Delivery[0]); c != 0 {
			return c
		}
		return cmp.Compare(a.Delivery[1], b.Delivery[1])
	})
	type kept struct {
		e    Event
		hash string
	}
	var ks []kept
	for i, e := range evs {
		if i+1 < len(evs) && compareVersion(e.Version, evs[i+1].Version) == 0 {
			continue // a later delivery of the same version wins
		}
		k := kept{e: e}
		if !e.Deleted {
			k.hash = Hash(e.Attrs)
		}
		if r.SkipUnchanged && len(ks) > 0 {
			last := ks[len(ks)-1]
			if last.e.Deleted == e.Deleted && last.hash == k.hash {
				continue
			}
		}
		ks = append(ks, k)
	}
	var rows []icerow.Row
	for i, k := range ks {
		if k.e.Deleted && !r.DeleteMarkers {
			continue
		}
		row := icerow.Row{
			ColBusinessKey:   k.e.Key,
			ColIsCurrent:     i == len(ks)-1 && !k.e.Deleted,
			ColSourceVersion: icerow.ToString(k.e.Version),
		}
		if !k.e.ValidFrom.IsZero() {
			row[ColValidFrom] = k.e.ValidFrom
		}
		if i+1 < len(ks) && !ks[i+1].e.ValidFrom.IsZero() {
			row[ColValidTo] = ks[i+1].e.ValidFrom
		}
		if r.DeleteMarkers {
			row[ColIsDeleted] = k.e.Deleted
		}
		if !k.e.Deleted {
			row[ColRecordHash] = k.hash
			for j, n := range attrNames {
				if j < len(k.e.Attrs) && k.e.Attrs[j] != nil {
					row[n] = k.e.Attrs[j]
				}
			}
		}
		rows = append(rows, row)
	}
	return rows
}
