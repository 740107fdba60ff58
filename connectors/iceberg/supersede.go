package iceberg

// keyIndex keeps a keyed delta table's buffer at about one record per key instead of one per
// event: a record replaces its key's last buffered record when planDelta (delta.go) would let it
// supersede that record without a trace. Memory between commit rounds then grows with the keys
// changed in the interval, not with the events. Only the record last buffered for the key is a
// candidate, so the records planDelta sees per key keep their Kafka order.
//
// A record r supersedes the key's last buffered record p when
//   - both come from the same partition (offset filtering and revocation are per partition) and
//     share one schema (schema evolution sees every schema buffered),
//   - neither is a tombstone (a version-less delete: its meaning depends on what came before it),
//   - both have a version or neither has (a version-less record orders by Kafka offset and does
//     not count toward the highest version a later tombstone deletes at), and
//   - r wins over p in planDelta: no version, a higher version, or the same version unless p is a
//     delete and r is not (a delete wins at its version).
//
// Then every per-key quantity planDelta derives is unchanged: the highest version (r's is at
// least p's), whether the key's last versioned event is a delete (r is after p), and the key's
// final record (r beats p and, by the rule above, whatever p beat).
type keyIndex struct {
	opts TableOptions
	last map[string]int // key -> position in the table's buffer of its last record
}

func newKeyIndex(o TableOptions) *keyIndex {
	return &keyIndex{opts: o, last: map[string]int{}}
}

// add appends rec to buf or puts it in place of the record it supersedes; grew reports whether
// buf has one more record.
func (x *keyIndex) add(buf []Rec, rec Rec) (out []Rec, grew bool) {
	if rec.Seg != nil || rec.Row == nil {
		return append(buf, rec), true
	}
	k := keyOf(rec.Row, x.opts.IDColumns)
	if i, ok := x.last[k]; ok && i < len(buf) && x.supersedes(rec, buf[i]) {
		buf[i] = rec
		return buf, false
	}
	x.last[k] = len(buf)
	return append(buf, rec), true
}

func (x *keyIndex) supersedes(r, p Rec) bool {
	if p.Seg != nil || r.TP != p.TP || r.Schema != p.Schema {
		return false
	}
	vc := x.opts.versionColumn()
	var rv, pv any
	if vc != "" {
		rv, pv = r.Row[vc], p.Row[vc]
	}
	if (r.Op == OpDelete && rv == nil) || (p.Op == OpDelete && pv == nil) {
		return false // a tombstone
	}
	switch {
	case rv == nil && pv == nil:
		return true
	case rv == nil || pv == nil:
		return false
	}
	c := x.opts.cmpVersion(rv, pv)
	return c > 0 || (c == 0 && !(p.Op == OpDelete && r.Op != OpDelete))
}

// reset forgets every position: the buffer was handed over, reordered or filtered.
func (x *keyIndex) reset() { clear(x.last) }
