package iceberg

import (
	"bytes"
	"log/slog"

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
	jb := t.spills.Put(jv.Bytes, bk, t.buf)
	if jb == nil && len(jv.Headers) == 0 {
		buf[at].JSON = t.spills.Shared(jv) // nothing of the value is in memory
		return
	}
	if prev := old.JSON; prev != nil && !t.spills.IsShared(prev) {
		if jb != nil { // most updates of a key are about its size
			jb = append(prev.Bytes[:0], jb...)
		}
		prev.Bytes, prev.Topic, prev.Headers, prev.Conv = jb, jv.Topic, jv.Headers, jv.Conv
		buf[at].JSON = prev
	} else {
		buf[at].JSON = &jsonvalue.Value{Bytes: bytes.Clone(jb), Topic: jv.Topic, Headers: jv.Headers, Conv: jv.Conv}
	}
}

// spoolWarned is the key of warned for the spill file's warning: no table's name.
const spoolWarned = "\x00spool"

func (t *Task) warnSpill(err error) {
	if !t.warned[spoolWarned] {
		t.warned[spoolWarned] = true
		slog.Warn("iceberg sink: upserts buffered as bytes stay in memory", "connector", t.cfg.Name, "err", err)
	}
}
