package icetable

import (
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// KeyIndex keeps a keyed delta table's buffer at about one record per key instead of one per
// event: a record replaces its key's last buffered record when planDelta (delta.go) would let it
// supersede that record without a trace. Memory between commit rounds then grows with the keys
// changed in the interval, not with the events. Only the record last buffered for the key is a
// candidate, so the records planDelta sees per key keep their Kafka order.
//
// A record r supersedes the key's last buffered record p when
//   - both come from the same partition (offset filtering and revocation are per partition),
//     share one schema and are both deletes or both not: the slot keeps what auto-create (the
//     first non-delete's schema) and schema evolution (schemas in order of first appearance) see,
//   - neither is a tombstone (a version-less delete: its meaning depends on what came before it),
//   - both have a version or neither has (a version-less record orders by Kafka offset and does
//     not count toward the highest version a later tombstone deletes at),
//   - every version buffered for the key is of one totally ordered kind (integers, times,
//     normalized envelope positions, or strings that icerow.CompareVersion compares one way: all decimal,
//     all hex LSNs, or all other text): icerow.CompareVersion is not transitive across kinds, and the
//     rule below relies on transitivity, and
//   - r's version is at least p's (a delete wins at its version, so a delete and an upsert at one
//     version never replace each other; the op rule above keeps them apart anyway).
//
// Then every per-key quantity planDelta derives is unchanged: the highest version (r's is at
// least p's), whether the key's last versioned event is a delete (r is after p), and the key's
// final record (r beats p and, by the rule above, whatever p beat).
type KeyIndex struct {
	opts  TableOptions
	tiny  map[uint64]int32 // key of up to tinyKeyLen bytes → its slot (tinyKey)
	last  map[string]int32 // longer key → its slot
	slots []KeySlot
}

// tinyKeyLen is the longest key looked up in KeyIndex.tiny: a map of words hashes and compares
// them without a call, and in its own slots rather than through a pointer to the key's bytes (a
// cache miss a record on a large index); it holds no pointer for the collector to follow.
const tinyKeyLen = 7

// tinyKey is a key of up to tinyKeyLen bytes as a word: its bytes, then its length in the top byte.
func tinyKey(k []byte) uint64 {
	var w uint64
	for i, c := range k {
		w |= uint64(c) << (8 * i)
	}
	return w | uint64(len(k))<<56
}

// KeySlot is where a key's last buffered record is, its version, and the kind of every version
// buffered for the key.
type KeySlot struct {
	key  string
	at   int
	ver  any
	kind versionKind
}

// Key is the slot's key.
func (s *KeySlot) Key() string { return s.key }

type versionKind uint8

const (
	noVersion      versionKind = iota
	intVersion                 // integers of up to 32 bits or int64
	timeVersion                // time.Time
	stringVersion              // normalized envelope positions, or text icerow.CompareVersion compares as strings
	decimalVersion             // decimal digit strings (compared as numbers)
	hexLSNVersion              // SQL Server style hex LSNs (compared part by part)
	mixedVersion               // anything else, or versions of several kinds: never superseded
)

// NewKeyIndex is the key index of a keyed delta table of options o.
func NewKeyIndex(o TableOptions) *KeyIndex {
	return &KeyIndex{opts: o, tiny: map[uint64]int32{}, last: map[string]int32{}}
}

func (x *KeyIndex) kindOf(v any) versionKind {
	switch v := v.(type) {
	case nil:
		return noVersion
	case int64, int32, int16, int8, int, uint32, uint16, uint8:
		return intVersion
	case time.Time:
		return timeVersion
	case string:
		if x.opts.CDCVersionColumn != "" {
			return stringVersion
		}
		return textKind(v)
	}
	return mixedVersion
}

// textKind says which of icerow.CompareVersion's string comparisons two strings of its kind get.
func textKind(s string) versionKind {
	if _, ok := new(big.Int).SetString(strings.TrimSpace(s), 10); ok {
		return decimalVersion
	}
	if _, ok := icerow.HexLSNParts(s); ok {
		return hexLSNVersion
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return mixedVersion // floats: NaN is unordered
	}
	return stringVersion
}

// join is the kind of versions a and b together.
func (a versionKind) join(b versionKind) versionKind {
	switch {
	case a == noVersion:
		return b
	case b == noVersion, a == b:
		return a
	}
	return mixedVersion
}

// Add appends rec (of key k, version ver) to buf or puts it in place of the record it
// supersedes; grew reports whether buf has one more record.
func (x *KeyIndex) Add(buf []Rec, rec Rec, k []byte, ver any) (out []Rec, grew bool) {
	out, _, _, grew = x.Place(buf, rec, x.Slot(k), ver)
	return out, grew
}

// Slot is the slot of key k, a new one when k has none: k is copied only for a new key.
func (x *KeyIndex) Slot(k []byte) *KeySlot {
	if len(k) <= tinyKeyLen {
		tk := tinyKey(k)
		i, ok := x.tiny[tk]
		if !ok {
			i = x.newSlot()
			x.tiny[tk] = i
			x.slots[i].key = string(k)
		}
		return &x.slots[i]
	}
	i, ok := x.last[string(k)]
	if !ok {
		i = x.newSlot()
		ks := string(k)
		x.last[ks] = i
		x.slots[i].key = ks
	}
	return &x.slots[i]
}

func (x *KeyIndex) newSlot() int32 {
	x.slots = append(x.slots, KeySlot{at: -1})
	return int32(len(x.slots) - 1)
}

// Place puts rec in buf for the key of slot: in place of the key's last record when it supersedes
// it (at is that place, old the record it took it from), else appended (grew, at its end).
func (x *KeyIndex) Place(buf []Rec, rec Rec, slot *KeySlot, ver any) (out []Rec, at int, old Rec, grew bool) {
	var kind versionKind
	if x.opts.KeyVersionColumn() != "" {
		kind = x.kindOf(ver)
	}
	if slot.at >= 0 {
		kind = kind.join(slot.kind)
		if slot.at < len(buf) && kind != mixedVersion && x.supersedes(rec, ver, buf[slot.at], slot.ver) {
			old = buf[slot.at]
			buf[slot.at] = rec
			slot.ver, slot.kind = ver, kind
			return buf, slot.at, old, false
		}
	}
	slot.at, slot.ver, slot.kind = len(buf), ver, kind
	return append(buf, rec), len(buf), Rec{}, true
}

// supersedes reports whether r (version rv) may take the place of p (version pv).
func (x *KeyIndex) supersedes(r Rec, rv any, p Rec, pv any) bool {
	if p.Seg != nil || r.TP != p.TP || r.Schema != p.Schema || (r.Op == icerow.OpDelete) != (p.Op == icerow.OpDelete) {
		return false
	}
	if x.opts.KeyVersionColumn() == "" {
		rv, pv = nil, nil
	}
	if (r.Op == icerow.OpDelete && rv == nil) || (p.Op == icerow.OpDelete && pv == nil) {
		return false // a tombstone
	}
	switch {
	case rv == nil && pv == nil:
		return true
	case rv == nil || pv == nil:
		return false
	}
	return x.opts.CmpVersion(rv, pv) >= 0 // same op kind: at one version the later wins
}

// Reset forgets every position: the buffer was handed over, reordered or filtered.
func (x *KeyIndex) Reset() {
	clear(x.tiny)
	clear(x.last)
	x.slots = x.slots[:0]
}
