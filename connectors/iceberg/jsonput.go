package iceberg

import (
	"bytes"
	"log/slog"
	"slices"

	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// AcceptsJSONValues implements jsonvalue.Sink: schemaless JSON objects arrive unconverted
// (jsonvalue.Value), and those of the shape last spooled into their table go straight from their
// bytes into the segment's builders (jsonShape); the others are converted and take the usual way.
func (t *Task) AcceptsJSONValues() bool { return true }

// routeJSON spools a JSON object value into its table's open segment straight from the bytes when
// nothing about the record needs the converted map: one static table, spooled, without routing or
// CDC fields, and the record is of the shape last spooled there. It reports whether it did; the
// error is a failed write of the spool file, as from segment.add. Caller holds t.mu.
func (t *Task) routeJSON(r *connect.SinkRecord, jv *jsonvalue.Value) (bool, error) {
	c := t.cfg
	if c.DynamicEnabled || c.RouteField != "" || c.CDCField != "" || len(c.Tables) != 1 {
		return false, nil
	}
	name := c.Tables[0]
	if pt := c.PerTable[name]; pt != nil && pt.RawCDC {
		return false, nil
	}
	a := t.appendTables[name]
	if a == nil || !a.usable || a.shape == nil || a.shape.SchemaID != a.schemaID || !appendEligible(t.tableOpts(name)) {
		return false, nil
	}
	tp, off := origin(r)
	s := a.open[tp]
	if s == nil || s.SchemaID != a.shape.SchemaID {
		return false, nil
	}
	ok, err := s.AppendJSON(a.shape, jv.Bytes, jv.Members, off)
	if ok {
		t.nbuf++
		t.spoolRows++
	}
	return ok, err
}

// noteShape remembers the shape of a record just spooled whole (its value's struct type), for the
// records after it. Caller holds t.mu.
func (t *Task) noteShape(a *appendTable, tp icetable.TP, st *ice.StructType) {
	if a.shape != nil && a.shape.Struct == st && a.shape.SchemaID == a.schemaID {
		return
	}
	if s := a.open[tp]; s != nil && s.SchemaID == a.schemaID {
		if err, ok := a.covered[st]; ok && err == nil {
			a.shape = icerow.CompileShape(st, s.SchemaID, s.Fields)
		}
	}
}

// plainUpsertJSON reports whether a keyed table's records of one static table take their row as the
// converted JSON object itself: upsert mode, no CDC field or envelope version, no routing. Those
// of a known shape can be buffered as bytes (bufferJSON).
func (t *Task) plainUpsertJSON(name string, o icetable.TableOptions) bool {
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
func (t *Task) bufferJSON(r *connect.SinkRecord, jv *jsonvalue.Value) bool {
	if len(t.cfg.Tables) != 1 {
		return false
	}
	name := t.cfg.Tables[0]
	ks := t.keyShapes[name]
	if ks == nil || ks.MemberScan == nil {
		return false
	}
	x := t.keys[name]
	k, ver, ok := ks.Read(jv.Bytes, jv.Members)
	if !ok {
		return false
	}
	tp, off := origin(r)
	// a slot only points at a record buffered since the index was last reset (drain, a round given
	// back, a rebalance): the bytes of the record this one takes the place of are no round's
	slot := x.slotBytes(k)
	buf, at, old, grew := x.place(t.buf[name], icetable.Rec{Op: icerow.OpUpdate, Schema: ks.Struct, TP: tp, Offset: off}, slot, ver)
	t.buf[name] = buf
	if grew {
		t.nbuf++
	}
	bk := old.Key
	if bk != nil {
		bk.Version = ver // the same key
	} else {
		bk = &icetable.BufferedKey{Key: slot.key, Version: ver}
	}
	buf[at].Key = bk
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
		buf[at].JSON = &jsonvalue.Value{Bytes: bytes.Clone(jb), Topic: jv.Topic, Headers: jv.Headers, Conv: jv.Conv}
	}
	return true
}

// spilledValue is the jsonvalue.Value that the records of jv's topic without headers whose bytes are in a
// spill file share: one per topic rather than one per buffered key. Caller holds t.mu.
func (t *Task) spilledValue(jv *jsonvalue.Value) *jsonvalue.Value {
	v := t.spilled[jv.Topic]
	if v == nil { // a task's values share its one value converter
		v = &jsonvalue.Value{Topic: jv.Topic, Conv: jv.Conv}
		if t.spilled == nil {
			t.spilled = map[string]*jsonvalue.Value{}
		}
		t.spilled[jv.Topic] = v
	}
	return v
}

// spillJSON writes the bytes of a record buffered as bytes to the task's spill file and notes where
// in bk. It returns nil when it did, else b, which the record then keeps in memory (no file could be
// made or written: the round reads what it wrote before). Caller holds t.mu.
func (t *Task) spillJSON(b []byte, bk *icetable.BufferedKey) []byte {
	if bk.Spill != nil && bk.Spill == t.spill {
		t.spill.Live -= int64(bk.Len) // the version this one supersedes
	}
	bk.Spill = nil
	if t.spill == nil {
		s, err := icetable.NewJSONSpill(&t.scratch, t.spoolDir())
		if err != nil {
			t.warnSpill(err)
			return b
		}
		t.spill = s
		t.spills = append(t.spills, s)
	}
	off, err := t.spill.Write(b)
	if err != nil {
		t.warnSpill(err)
		return b
	}
	bk.Spill, bk.Off, bk.Len = t.spill, off, len(b)
	t.spill.Live += int64(len(b))
	if s := t.spill; s.Size >= icetable.SpillCompactAt && s.Size >= icetable.SpillCompactRatio*s.Live {
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
	if old.Flush() != nil {
		return // the round that reads the file fails with the error
	}
	s, err := icetable.NewJSONSpill(&t.scratch, t.spoolDir())
	if err != nil {
		t.warnSpill(err)
		return
	}
	t.spill, t.spills = s, append(t.spills, s)
	var buf []byte
	for _, recs := range t.buf {
		for i := range recs {
			bk := recs[i].Key
			if bk == nil || bk.Spill != old {
				continue
			}
			b, err := old.Read(buf, bk.Off, bk.Len)
			if err != nil {
				return
			}
			buf = b
			off, err := s.Write(b)
			if err != nil {
				return
			}
			bk.Spill, bk.Off = s, off
			s.Live += int64(bk.Len)
		}
	}
	if s.Flush() != nil {
		return
	}
	old.Close()
	t.spills = slices.DeleteFunc(t.spills, func(x *icetable.JSONSpill) bool { return x == old })
}

// spoolWarned is the key of warned for the spill file's warning: no table's name.
const spoolWarned = "\x00spool"

func (t *Task) warnSpill(err error) {
	if !t.warned[spoolWarned] {
		t.warned[spoolWarned] = true
		slog.Warn("iceberg sink: upserts buffered as bytes stay in memory", "connector", t.cfg.Name, "err", err)
	}
}

// noteKeyShape remembers the shape of a record of table name just buffered converted (rec, made from
// a JSON object of struct type st), for the records after it. Caller holds t.mu.
func (t *Task) noteKeyShape(name string, o icetable.TableOptions, rec icetable.Rec, st *ice.StructType) {
	if rec.Op != icerow.OpUpdate || rec.Schema != st || st == nil || !t.plainUpsertJSON(name, o) {
		return
	}
	if ks := t.keyShapes[name]; ks != nil && ks.Struct == st {
		return
	}
	ks := icerow.CompileKeyShape(st, o.IDColumns, o.KeyVersionColumn())
	if ks == nil {
		ks = &icerow.KeyShape{Struct: st} // not read from bytes: remembered, so that it is not compiled per record
	}
	t.keyShapes[name] = ks
}
