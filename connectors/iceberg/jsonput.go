package iceberg

import (
	"bytes"
	"log/slog"
	"slices"

	"github.com/connectd/connectd/connect/jsonvalue"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// AcceptsJSONValues implements jsonvalue.Sink: schemaless JSON objects arrive unconverted
// (jsonvalue.Value); the task's router reads those of a shape it knows straight from their bytes
// (icerow.Router), and converts the others.
func (t *Task) AcceptsJSONValues() bool { return true }

// bufferJSON buffers a JSON object value of a keyed table as its bytes: the router read its key and
// version from them (Target.AsBytes). Caller holds t.mu.
func (t *Task) bufferJSON(jv *jsonvalue.Value, tg *icerow.Target, tp icetable.TP, off int64) {
	name, ver := tg.Table, tg.Version
	x := t.keyIndex(name, t.tableOpts(name))
	// a slot only points at a record buffered since the index was last reset (drain, a round given
	// back, a rebalance): the bytes of the record this one takes the place of are no round's
	slot := x.Slot(tg.Key)
	buf, at, old, grew := x.Place(t.buf[name], icetable.Rec{Op: icerow.OpUpdate, Schema: tg.Struct, TP: tp, Offset: off}, slot, ver)
	t.buf[name] = buf
	if grew {
		t.nbuf++
	}
	bk := old.Key
	if bk != nil {
		bk.Version = ver // the same key
	} else {
		bk = &icetable.BufferedKey{Key: slot.Key(), Version: ver}
	}
	buf[at].Key = bk
	jb := t.spillJSON(jv.Bytes, bk)
	if jb == nil && len(jv.Headers) == 0 {
		buf[at].JSON = t.spilledValue(jv) // nothing of the value is in memory
		return
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
