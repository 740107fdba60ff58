package icetable

import (
	"fmt"
	"strconv"

	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect/jsonvalue"
)

// KeyShape reads, from the bytes of a schemaless JSON object of a record shape, what a keyed table's
// Key index needs: the key (as keyOf makes it of the converted map) and the version. The record is
// then buffered as its bytes (Rec.JSON) and converted only if it is still its key's record when the
// round takes the buffer (decodeBuffered): most records of a busy key are superseded before that.
type KeyShape struct {
	*MemberScan // nil: records of st are not read from bytes
	Struct      *ice.StructType
	ids         []int  // member of each id column
	ver         int    // member of the version column (-1: none, or not in the shape: null)
	key         []byte // scratch: the key read last
}

// CompileKeyShape builds the keyShape of st for a table of options o, or nil when an id column is
// not a long or string member of the shape (keyOf of other values is not read from bytes).
func CompileKeyShape(st *ice.StructType, o TableOptions) *KeyShape {
	ms := NewMemberScan(st)
	if ms == nil || len(o.IDColumns) == 0 {
		return nil
	}
	ks := &KeyShape{MemberScan: ms, Struct: st, ver: -1}
	for _, c := range o.IDColumns {
		m, ok := ms.names[c]
		if !ok || (ms.kinds[m] != kindLong && ms.kinds[m] != kindString) {
			return nil
		}
		ks.ids = append(ks.ids, m)
	}
	if vc := o.KeyVersionColumn(); vc != "" {
		if m, ok := ms.names[vc]; ok {
			ks.ver = m
		}
	}
	return ks
}

// Read returns the key (valid until the next read) and version of the (valid) JSON object b, of the
// listed members (nil: not listed), when it is of the shape with non-null ids.
func (ks *KeyShape) Read(b []byte, members []jsonvalue.Member) (key []byte, ver any, ok bool) {
	if !ks.Scan(b, members) {
		return nil, nil, false
	}
	key = ks.key[:0]
	for i, m := range ks.ids {
		p := ks.Pos[m]
		if p < 0 {
			return nil, nil, false // keyOf of a null id
		}
		if i > 0 {
			key = append(key, 0)
		}
		if ks.kinds[m] == kindString {
			key = append(key, b[p+1:ks.End[m]-1]...)
		} else {
			key = strconv.AppendInt(key, jsonInt(b, p), 10)
		}
	}
	ks.key = key
	if ks.ver >= 0 {
		if p, e := ks.Pos[ks.ver], ks.End[ks.ver]; p >= 0 {
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

// JSONBytes returns the bytes of a record buffered as bytes: JSON.Bytes, or read back from its spill
// file into *scratch (grown as needed and kept there for the next read; nil: a buffer of their own).
func (r *Rec) JSONBytes(scratch *[]byte) ([]byte, error) {
	if r.JSON.Bytes != nil || r.Key == nil || r.Key.Spill == nil {
		return r.JSON.Bytes, nil
	}
	var buf []byte
	if scratch != nil {
		buf = *scratch
	}
	b, err := r.Key.Spill.Read(buf, r.Key.Off, r.Key.Len)
	if err != nil {
		return nil, fmt.Errorf("the value of %s at offset %d: %w", r.TP, r.Offset, err)
	}
	if scratch != nil {
		*scratch = b
	}
	return b, nil
}

// KeyRows readies the records of recs buffered as bytes (Rec.JSON) for planDelta, which reads their
// Key and version from Rec.key (bufferJSON); with rows (the lookups of live rows and tombstones take
// rows) each gets the row of the planned columns names (key, version, partition sources) read from
// its bytes. A record is converted whole when its bytes are not read so, or when its
// shape has StaleDeleteColumn, which the planner may have to clear. The record keeps its bytes, from
// which its data and delete rows are built (dataBatches).
func KeyRows(recs []Rec, names []string, rows bool) error {
	scans := map[*ice.StructType]*MemberScan{} // the round's own: the task's keyShape scans under t.mu
	var scratch []byte
	for i := range recs {
		r := &recs[i]
		if r.JSON == nil {
			continue
		}
		ms, ok := scans[r.Schema]
		if !ok {
			ms = NewMemberScan(r.Schema)
			if ms != nil {
				if _, marked := ms.names[StaleDeleteColumn]; marked {
					ms = nil
				}
			}
			scans[r.Schema] = ms
		}
		if rows && ms != nil {
			b, err := r.JSONBytes(&scratch)
			if err != nil {
				return err
			}
			if ms.Scan(b, nil) {
				row := make(Row, len(names))
				for _, n := range names {
					row[n] = ms.value(b, n)
				}
				r.Row = row
				continue
			}
		}
		switch {
		case rows || ms == nil || r.Key == nil:
			if err := r.decode(); err != nil {
				return err
			}
		}
	}
	return nil
}

// value is the converted value of member name of the object b just scanned (nil: null or absent).
func (ms *MemberScan) value(b []byte, name string) any {
	m, ok := ms.names[name]
	if !ok || ms.Pos[m] < 0 {
		return nil
	}
	p, e := ms.Pos[m], ms.End[m]
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
	b, err := r.JSONBytes(nil)
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
