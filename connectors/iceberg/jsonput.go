package iceberg

import (
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
// version from them (Target.AsBytes); icetable.JSONSpills keeps the bytes. Caller holds t.mu.
func (t *Task) bufferJSON(jv *jsonvalue.Value, tg *icerow.Target, tp icetable.TP, off int64) {
	x := t.keyIndex(tg.Table)
	rec := icetable.Rec{Op: icerow.OpUpdate, Schema: tg.Struct, TP: tp, Offset: off}
	if t.spills.Buffer(t.buf, tg.Table, x, jv, rec, tg.Key, tg.Version) {
		t.nbuf++
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
