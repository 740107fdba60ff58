package clickhouse

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
)

// row is one record's values as seen by the block builder.
type row struct {
	value   any // *connect.Struct, map[string]any or map[any]any
	version uint64
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

// extract turns a record into a row. skip is true for records that write nothing (tombstones,
// Debezium truncate/heartbeat records).
func (t *Task) extract(rec *connect.SinkRecord) (r row, skip bool, err error) {
	if rec.Value == nil {
		return r, true, nil
	}
	switch rec.Value.(type) {
	case *connect.Struct, map[string]any, map[any]any:
	default:
		return r, false, connect.DataErrorf("value of type %T is not a struct or map", rec.Value)
	}
	if !t.cfg.DebeziumCDC {
		r.value = rec.Value
		return r, false, nil
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
			return r, true, nil
		default:
			return r, false, connect.DataErrorf("unknown Debezium op %q", op)
		}
		if r.value == nil {
			return r, false, connect.DataErrorf("Debezium op %q without row image", ops)
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
	ver, err := t.version(rec, v, isEnvelope)
	if err != nil {
		return r, false, err
	}
	r.version = ver
	return r, false, nil
}

var binlogFile = regexp.MustCompile(`(\d+)$`)

// version computes the row version: the configured field, else source.lsn, else the MySQL binlog
// position, else the Kafka offset (monotonic per key while the key→partition mapping is stable).
func (t *Task) version(rec *connect.SinkRecord, v any, envelope bool) (uint64, error) {
	f := t.cfg.VersionField
	switch f {
	case "kafka.offset":
		return uint64(rec.Offset), nil
	case "":
	default:
		x, ok := lookupPath(v, f)
		if !ok || x == nil {
			return 0, connect.DataErrorf("version field %q missing", f)
		}
		n, err := toUint64(x)
		if err != nil {
			return 0, connect.DataErrorf("version field %q: %v", f, err)
		}
		return n, nil
	}
	if envelope {
		if lsn, ok := lookupPath(v, "source.lsn"); ok && lsn != nil {
			if n, err := toUint64(lsn); err == nil {
				return n, nil
			}
		}
		file, okf := lookupPath(v, "source.file")
		pos, okp := lookupPath(v, "source.pos")
		if okf && okp && file != nil && pos != nil {
			m := binlogFile.FindString(fmt.Sprint(file))
			seq, _ := strconv.ParseUint(m, 10, 64)
			p, err := toUint64(pos)
			if err == nil {
				var rowN uint64
				if rw, ok := lookupPath(v, "source.row"); ok && rw != nil {
					rowN, _ = toUint64(rw)
				}
				// file sequence (20 bits) | position (32 bits) | row in event (10 bits)
				return seq<<42 | (p&0xffffffff)<<10 | rowN&0x3ff, nil
			}
		}
	} else {
		for _, name := range []string{"__lsn", "__source_lsn"} {
			if lsn, ok := lookup(v, name); ok && lsn != nil {
				if n, err := toUint64(lsn); err == nil {
					return n, nil
				}
			}
		}
	}
	return uint64(rec.Offset), nil
}
