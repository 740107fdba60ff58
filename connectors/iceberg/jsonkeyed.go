package iceberg

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect"
)

// keyShape reads, from the bytes of a schemaless JSON object of a record shape, what a keyed table's
// key index needs: the key (as keyOf makes it of the converted map) and the version. The record is
// then buffered as its bytes (Rec.JSON) and converted only if it is still its key's record when the
// round takes the buffer (decodeBuffered): most records of a busy key are superseded before that.
type keyShape struct {
	*memberScan // nil: records of st are not read from bytes
	st          *ice.StructType
	ids         []int  // member of each id column
	ver         int    // member of the version column (-1: none, or not in the shape: null)
	key         []byte // scratch: the key read last
}

// compileKeyShape builds the keyShape of st for a table of options o, or nil when an id column is
// not a long or string member of the shape (keyOf of other values is not read from bytes).
func compileKeyShape(st *ice.StructType, o TableOptions) *keyShape {
	ms := newMemberScan(st)
	if ms == nil || len(o.IDColumns) == 0 {
		return nil
	}
	ks := &keyShape{memberScan: ms, st: st, ver: -1}
	for _, c := range o.IDColumns {
		m, ok := ms.names[c]
		if !ok || (ms.kinds[m] != kindLong && ms.kinds[m] != kindString) {
			return nil
		}
		ks.ids = append(ks.ids, m)
	}
	if vc := o.versionColumn(); vc != "" {
		if m, ok := ms.names[vc]; ok {
			ks.ver = m
		}
	}
	return ks
}

// read returns the key (valid until the next read) and version of the (valid) JSON object b, of the
// listed members (nil: not listed), when it is of the shape with non-null ids.
func (ks *keyShape) read(b []byte, members []connect.JSONMember) (key []byte, ver any, ok bool) {
	if !ks.scan(b, members) {
		return nil, nil, false
	}
	key = ks.key[:0]
	for i, m := range ks.ids {
		p := ks.pos[m]
		if p < 0 {
			return nil, nil, false // keyOf of a null id
		}
		if i > 0 {
			key = append(key, 0)
		}
		if ks.kinds[m] == kindString {
			key = append(key, b[p+1:ks.end[m]-1]...)
		} else {
			key = strconv.AppendInt(key, jsonInt(b, p), 10)
		}
	}
	ks.key = key
	if ks.ver >= 0 {
		if p, e := ks.pos[ks.ver], ks.end[ks.ver]; p >= 0 {
			switch ks.kinds[ks.ver] {
			case kindLong:
				ver = jsonInt(b, p)
			case kindString:
				ver = string(b[p+1 : e-1])
			case kindDouble:
				ver = jsonNumber(b, p, e, kindDouble)
			case kindBool:
				ver = b[p] == 't'
			}
		}
	}
	return key, ver, true
}

// plainUpsertJSON reports whether a keyed table's records of one static table take their row as the
// converted JSON object itself: upsert mode, no CDC field or envelope version, no routing. Those
// of a known shape can be buffered as bytes (bufferJSON).
func (t *Task) plainUpsertJSON(name string, o TableOptions) bool {
	c := t.cfg
	if c.DynamicEnabled || c.RouteField != "" || c.CDCField != "" || len(c.Tables) != 1 || c.Tables[0] != name {
		return false
	}
	if pt := c.PerTable[name]; pt != nil && pt.RawCDC {
		return false
	}
	return o.UpsertMode && o.DeltaMode && len(o.IDColumns) > 0 && o.CDCVersionColumn == ""
}

// bufferJSON buffers a JSON object value of a keyed table as its bytes when it is of the shape last
// buffered there converted. It reports whether it did. A shape is only noted for a plain upsert
// table with a key index (noteKeyShape), so finding one says the table is such. Caller holds t.mu.
func (t *Task) bufferJSON(r *connect.SinkRecord, jv *connect.JSONValue) bool {
	if len(t.cfg.Tables) != 1 {
		return false
	}
	name := t.cfg.Tables[0]
	ks := t.keyShapes[name]
	if ks == nil || ks.memberScan == nil {
		return false
	}
	x := t.keys[name]
	k, ver, ok := ks.read(jv.Bytes, jv.Members)
	if !ok {
		return false
	}
	tp, off := origin(r)
	// a slot only points at a record buffered since the index was last reset (drain, a round given
	// back, a rebalance): the bytes of the record this one takes the place of are no round's
	slot := x.slotBytes(k)
	buf, at, old, grew := x.place(t.buf[name], Rec{Op: OpUpdate, Schema: ks.st, TP: tp, Offset: off}, slot, ver)
	t.buf[name] = buf
	if grew {
		t.nbuf++
	}
	bk := old.key
	if bk != nil {
		bk.ver = ver // the same key
	} else {
		bk = &bufferedKey{key: slot.key, ver: ver}
	}
	buf[at].key = bk
	jb := t.spillJSON(jv.Bytes, bk)
	if jb == nil && len(jv.Headers) == 0 {
		buf[at].JSON = t.spilledValue(jv) // nothing of the value is in memory
		return true
	}
	if prev := old.JSON; prev != nil && prev != t.spilled[prev.Topic] {
		if jb != nil { // most updates of a key are about its size
			jb = append(prev.Bytes[:0], jb...)
		}
		prev.Bytes, prev.Topic, prev.Headers, prev.Conv = jb, jv.Topic, jv.Headers, jv.Conv
		buf[at].JSON = prev
	} else {
		buf[at].JSON = &connect.JSONValue{Bytes: bytes.Clone(jb), Topic: jv.Topic, Headers: jv.Headers, Conv: jv.Conv}
	}
	return true
}

// spilledValue is the JSONValue that the records of jv's topic without headers whose bytes are in a
// spill file share: one per topic rather than one per buffered key. Caller holds t.mu.
func (t *Task) spilledValue(jv *connect.JSONValue) *connect.JSONValue {
	v := t.spilled[jv.Topic]
	if v == nil { // a task's values share its one value converter
		v = &connect.JSONValue{Topic: jv.Topic, Conv: jv.Conv}
		if t.spilled == nil {
			t.spilled = map[string]*connect.JSONValue{}
		}
		t.spilled[jv.Topic] = v
	}
	return v
}

// spillJSON writes the bytes of a record buffered as bytes to the task's spill file and notes where
// in bk. It returns nil when it did, else b, which the record then keeps in memory (no file could be
// made or written: the round reads what it wrote before). Caller holds t.mu.
func (t *Task) spillJSON(b []byte, bk *bufferedKey) []byte {
	if bk.spill != nil && bk.spill == t.spill {
		t.spill.live -= int64(bk.n) // the version this one supersedes
	}
	bk.spill = nil
	if t.spill == nil {
		s, err := newJSONSpill(&t.scratch, t.spoolDir())
		if err != nil {
			t.warnSpill(err)
			return b
		}
		t.spill = s
		t.spills = append(t.spills, s)
	}
	off, err := t.spill.write(b)
	if err != nil {
		t.warnSpill(err)
		return b
	}
	bk.spill, bk.off, bk.n = t.spill, off, len(b)
	t.spill.live += int64(len(b))
	if s := t.spill; s.size >= spillCompactAt && s.size >= spillCompactRatio*s.live {
		t.compactSpill()
	}
	return nil
}

// compactSpill copies the bytes of the buffered records in the task's spill file to a new one, which
// the task writes from then on, and closes the old one. The records of rounds given back stay in
// their files. On an error the records already copied stay in the new file and the rest in the
// old, both kept until a round commits them. Caller holds t.mu.
func (t *Task) compactSpill() {
	old := t.spill
	if old.flush() != nil {
		return // the round that reads the file fails with the error
	}
	s, err := newJSONSpill(&t.scratch, t.spoolDir())
	if err != nil {
		t.warnSpill(err)
		return
	}
	t.spill, t.spills = s, append(t.spills, s)
	var buf []byte
	for _, recs := range t.buf {
		for i := range recs {
			bk := recs[i].key
			if bk == nil || bk.spill != old {
				continue
			}
			b, err := old.read(buf, bk.off, bk.n)
			if err != nil {
				return
			}
			buf = b
			off, err := s.write(b)
			if err != nil {
				return
			}
			bk.spill, bk.off = s, off
			s.live += int64(bk.n)
		}
	}
	if s.flush() != nil {
		return
	}
	old.close()
	t.spills = slices.DeleteFunc(t.spills, func(x *jsonSpill) bool { return x == old })
}

// spoolWarned is the key of warned for the spill file's warning: no table's name.
const spoolWarned = "\x00spool"

func (t *Task) warnSpill(err error) {
	if !t.warned[spoolWarned] {
		t.warned[spoolWarned] = true
		slog.Warn("iceberg sink: upserts buffered as bytes stay in memory", "connector", t.cfg.Name, "err", err)
	}
}

// jsonBytes returns the bytes of a record buffered as bytes: JSON.Bytes, or read back from its spill
// file into *scratch (grown as needed and kept there for the next read; nil: a buffer of their own).
func (r *Rec) jsonBytes(scratch *[]byte) ([]byte, error) {
	if r.JSON.Bytes != nil || r.key == nil || r.key.spill == nil {
		return r.JSON.Bytes, nil
	}
	var buf []byte
	if scratch != nil {
		buf = *scratch
	}
	b, err := r.key.spill.read(buf, r.key.off, r.key.n)
	if err != nil {
		return nil, fmt.Errorf("the value of %s at offset %d: %w", r.TP, r.Offset, err)
	}
	if scratch != nil {
		*scratch = b
	}
	return b, nil
}

// noteKeyShape remembers the shape of a record of table name just buffered converted (rec, made from
// a JSON object of struct type st), for the records after it. Caller holds t.mu.
func (t *Task) noteKeyShape(name string, o TableOptions, rec Rec, st *ice.StructType) {
	if rec.Op != OpUpdate || rec.Schema != st || st == nil || !t.plainUpsertJSON(name, o) {
		return
	}
	if ks := t.keyShapes[name]; ks != nil && ks.st == st {
		return
	}
	ks := compileKeyShape(st, o)
	if ks == nil {
		ks = &keyShape{st: st} // not read from bytes: remembered, so that it is not compiled per record
	}
	t.keyShapes[name] = ks
}

// keyRows readies the records of recs buffered as bytes (Rec.JSON) for planDelta, which reads their
// key and version from Rec.key (bufferJSON); with rows (the lookups of live rows and tombstones take
// rows) each gets the row of the planned columns names (key, version, partition sources) read from
// its bytes. A record is converted whole when its bytes are not read so, or when its
// shape has StaleDeleteColumn, which the planner may have to clear. The record keeps its bytes, from
// which its data and delete rows are built (dataBatches).
func keyRows(recs []Rec, names []string, rows bool) error {
	scans := map[*ice.StructType]*memberScan{} // the round's own: the task's keyShape scans under t.mu
	var scratch []byte
	for i := range recs {
		r := &recs[i]
		if r.JSON == nil {
			continue
		}
		ms, ok := scans[r.Schema]
		if !ok {
			ms = newMemberScan(r.Schema)
			if ms != nil {
				if _, marked := ms.names[StaleDeleteColumn]; marked {
					ms = nil
				}
			}
			scans[r.Schema] = ms
		}
		if rows && ms != nil {
			b, err := r.jsonBytes(&scratch)
			if err != nil {
				return err
			}
			if ms.scan(b, nil) {
				row := make(Row, len(names))
				for _, n := range names {
					row[n] = ms.value(b, n)
				}
				r.Row = row
				continue
			}
		}
		switch {
		case rows || ms == nil || r.key == nil:
			if err := r.decode(); err != nil {
				return err
			}
		}
	}
	return nil
}

// value is the converted value of member name of the object b just scanned (nil: null or absent).
func (ms *memberScan) value(b []byte, name string) any {
	m, ok := ms.names[name]
	if !ok || ms.pos[m] < 0 {
		return nil
	}
	p, e := ms.pos[m], ms.end[m]
	switch ms.kinds[m] {
	case kindLong:
		return jsonInt(b, p)
	case kindDouble:
		return jsonNumber(b, p, e, kindDouble)
	case kindString:
		return string(b[p+1 : e-1])
	case kindBool:
		return b[p] == 't'
	}
	return nil
}

// decode converts a record buffered as bytes, as route would have: the converter's map is the row.
// The bytes were checked to convert when the worker handed them over.
func (r *Rec) decode() error {
	if r.JSON == nil {
		return nil
	}
	jv := *r.JSON
	b, err := r.jsonBytes(nil)
	if err != nil {
		return err
	}
	jv.Bytes = b
	v, err := jv.Value()
	if err != nil {
		return fmt.Errorf("converting the value of %s at offset %d: %w", r.TP, r.Offset, err)
	}
	// the row recordValue makes of it, without its shape: the record's is Rec.Schema, and the
	// schema cache's last shape stays what the records put since made it
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("converting the value of %s at offset %d: a %T, not a JSON object", r.TP, r.Offset, v)
	}
	r.Row, r.JSON = schemalessValue(m).(map[string]any), nil
	return nil
}

// decodeAll converts every record of recs buffered as bytes.
func decodeAll(recs []Rec) error {
	for i := range recs {
		if err := recs[i].decode(); err != nil {
			return err
		}
	}
	return nil
}
