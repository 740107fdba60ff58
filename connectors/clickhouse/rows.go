package clickhouse

import (
	"strings"

	"github.com/connectd/connectd/connect"
)

// row is one record's values as seen by the block builder.
type row struct {
	value   any // *connect.Struct, map[string]any or map[any]any
	version any // position, a value read from the table, or nil: the row's own version column
	deleted bool
	cdc     bool
}

// field returns a top-level field of the row's value.
func (r *row) field(name string) (any, bool) {
	return lookup(r.value, name)
}

func lookup(v any, name string) (any, bool) {
	switch x := v.(type) {
	case *connect.Struct:
		f, ok := x.Schema().Field(name)
		if !ok {
			return nil, false
		}
		return x.GetIndex(f.Index), true
	case map[string]any:
		e, ok := x[name]
		return e, ok
	case map[any]any:
		e, ok := x[name]
		return e, ok
	}
	return nil, false
}

func lookupPath(v any, path string) (any, bool) {
	for _, p := range strings.Split(path, ".") {
		var ok bool
		if v, ok = lookup(v, p); !ok {
			return nil, false
		}
	}
	return v, true
}

// extract turns a record into a row of tbl. skip is true for records that write nothing (Debezium
// truncate/heartbeat records; tombstones are resolved by fill).
func (t *Task) extract(rec *connect.SinkRecord, tbl *tableInfo) (r row, skip bool, err error) {
	r, skip, isEnvelope, err := t.image(rec)
	if err != nil || skip {
		return r, skip, err
	}
	if !r.cdc {
		if isChangeEnvelope(rec.Value) && !sharesColumn(rec.Value, tbl) {
			return r, false, connect.DataErrorf("the value is a Debezium change event envelope (fields before, after, source, op) and none of "+
				"its fields is a column of the table; set %s=true to write its row images, or unwrap it with "+
				"io.debezium.transforms.ExtractNewRecordState (which passes schemaless envelopes through unchanged)", keyDebeziumCDC)
		}
		return r, false, nil
	}
	ver, err := t.version(rec, rec.Value, isEnvelope, r.value, tbl)
	if err != nil {
		return r, false, err
	}
	if ver == nil && r.deleted {
		// The before image carries the last live version; the delete goes just above it.
		x, _ := lookup(r.value, t.cfg.versionColumn(tbl))
		ver = versionAfter(x)
	}
	r.version = ver
	return r, false, nil
}

// image reads a record's row image, and in CDC mode its operation. envelope is true for a Debezium
// envelope (as opposed to an unwrapped row).
func (t *Task) image(rec *connect.SinkRecord) (r row, skip, envelope bool, err error) {
	if rec.Value == nil {
		return r, true, false, nil
	}
	switch rec.Value.(type) {
	case *connect.Struct, map[string]any, map[any]any:
	default:
		return r, false, false, connect.DataErrorf("value of type %T is not a struct or map", rec.Value)
	}
	if !t.cfg.DebeziumCDC {
		r.value = rec.Value
		return r, false, false, nil
	}
	r.cdc = true
	v := rec.Value
	op, isEnvelope := lookup(v, "op")
	if isEnvelope {
		if _, hasAfter := lookup(v, "after"); !hasAfter {
			isEnvelope = false
		}
	}
	if isEnvelope {
		ops, _ := op.(string)
		switch ops {
		case "c", "r", "u":
			r.value, _ = lookup(v, "after")
		case "d":
			r.value, _ = lookup(v, "before")
			r.deleted = true
		case "t", "m":
			return r, true, false, nil
		default:
			return r, false, false, connect.DataErrorf("unknown Debezium op %q", op)
		}
		if r.value == nil {
			return r, false, false, connect.DataErrorf("Debezium op %q without row image", ops)
		}
	} else {
		// An unwrapped record (ExtractNewRecordState with add.fields=op / delete.handling.mode=rewrite).
		r.value = v
		if d, ok := lookup(v, "__deleted"); ok {
			switch x := d.(type) {
			case bool:
				r.deleted = x
			case string:
				r.deleted = x == "true"
			}
		}
		if o, ok := lookup(v, "__op"); ok && o == "d" {
			r.deleted = true
		}
	}
	return r, false, isEnvelope, nil
}

// isChangeEnvelope reports whether v has the shape of a Debezium change event envelope.
func isChangeEnvelope(v any) bool {
	_, hasOp := lookup(v, "op")
	_, hasSource := lookup(v, "source")
	_, hasBefore := lookup(v, "before")
	_, hasAfter := lookup(v, "after")
	return hasOp && hasSource && (hasBefore || hasAfter)
}

// sharesColumn reports whether any top-level field of v is an insertable column of tbl.
func sharesColumn(v any, tbl *tableInfo) bool {
	has := func(name string) bool {
		i, ok := tbl.byName[name]
		return ok && tbl.columns[i].insertable()
	}
	switch x := v.(type) {
	case *connect.Struct:
		for _, f := range x.Schema().Fields() {
			if has(f.Name) {
				return true
			}
		}
	case map[string]any:
		for k := range x {
			if has(k) {
				return true
			}
		}
	case map[any]any:
		for k := range x {
			if s, ok := k.(string); ok && has(s) {
				return true
			}
		}
	}
	return false
}

// version decides what a change event writes to the table's version column:
//  1. cdc.version.field: kafka.offset, or a dotted path in the envelope or the row (a row column that is
//     the version column itself is written as it is);
//  2. the row's own value when the version column is a column of the row;
//  3. the source position: PostgreSQL lsn, SQL Server commit_lsn/change_lsn, Oracle scn, MySQL
//     file+pos+row (source.* in an envelope, the add.fields copies in an unwrapped row);
//  4. the source commit time (source.ts_ms), with a warning per table;
//  5. the Kafka offset, with a warning per table.
//
// A nil result means: the row's own value.
func (t *Task) version(rec *connect.SinkRecord, v any, envelope bool, image any, tbl *tableInfo) (any, error) {
	verCol := t.cfg.versionColumn(tbl)
	switch f := t.cfg.VersionField; f {
	case "kafka.offset":
		return pos64(uint64(rec.Offset), "kafka.offset"), nil
	case "":
	default:
		x, ok := lookupPath(v, f)
		inRow := !envelope
		if (!ok || x == nil) && envelope {
			x, ok = lookupPath(image, f)
			inRow = true
		}
		if !ok || x == nil {
			return nil, connect.DataErrorf("version field %q missing", f)
		}
		if inRow && f == verCol {
			return nil, nil
		}
		p, err := parsePosition(x, f)
		if err != nil {
			return nil, connect.DataErrorf("version field %v", err)
		}
		return p, nil
	}
	if x, ok := lookup(image, verCol); ok && x != nil {
		return nil, nil
	}
	p, ts, ok, err := t.cfg.unwrap.fields.sourcePosition(v, envelope)
	if err != nil {
		return nil, connect.DataErrorf("version: %v", err)
	}
	if ok {
		if p.narrowErr != "" || strings.Contains(p.from, "commit_lsn") || strings.Contains(p.from, "change_lsn") {
			if i, has := tbl.byName[verCol]; has && !isWideUint(tbl.columns[i].typ) {
				t.warnTable(tbl, "narrow", "the version column "+verCol+" ("+tbl.columns[i].typ+") cannot hold every value of "+p.from+
					" (SQL Server LSNs are 80 bits, MySQL positions beyond file 4194303 or offset 4 GiB need more than 64): "+
					"records whose version does not fit fail; make the column UInt128")
			}
		}
		if ts {
			t.warnTable(tbl, "ts_ms", "row versions come from the source commit time (ts_ms): events of one key within one millisecond "+
				"may apply in any order. Copy the source position into the row (add.fields=lsn / file,pos,row / scn / commit_lsn,change_lsn) "+
				"or set "+keyCDCVersionField)
		}
		return p, nil
	}
	t.warnTable(tbl, "offset", "change events carry no version (no source position, no "+verCol+" column in the row): row versions "+
		"fall back to the Kafka offset, so a stale redelivery overwrites newer state. Add the source position to the row "+
		"(ExtractNewRecordState add.fields=lsn for PostgreSQL, file,pos,row for MySQL, scn for Oracle, commit_lsn,change_lsn for SQL Server) "+
		"or set "+keyCDCVersionField)
	return pos64(uint64(rec.Offset), "kafka.offset"), nil
}

func isWideUint(typ string) bool {
	base := strings.TrimSuffix(strings.TrimPrefix(typ, "Nullable("), ")")
	return base == "UInt128" || base == "UInt256"
}
