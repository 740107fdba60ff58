package iceberg

import (
	"fmt"
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
