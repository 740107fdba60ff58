package icerow

import (
	"strconv"

	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect/jsonvalue"
)

// KeyShape reads, from the bytes of a schemaless JSON object of a record shape, what a keyed table's
// Key index needs: the key (as keyOf makes it of the converted map) and the version. The record is
// then buffered as its bytes (Rec.JSON) and converted only if it is still its key's record when the
// round takes the buffer (icetable.KeyRows): most records of a busy key are superseded before that.
type KeyShape struct {
	*MemberScan // nil: records of st are not read from bytes
	Struct      *ice.StructType
	ids         []int  // member of each id column
	ver         int    // member of the version column (-1: none, or not in the shape: null)
	key         []byte // scratch: the key read last
}

// CompileKeyShape builds the KeyShape of st for a table keyed by the columns ids whose versions are in
// column versionColumn ("": none), or nil when an id column is not a long or string member of the
// shape (the key of other values is not read from bytes).
func CompileKeyShape(st *ice.StructType, ids []string, versionColumn string) *KeyShape {
	ms := NewMemberScan(st)
	if ms == nil || len(ids) == 0 {
		return nil
	}
	ks := &KeyShape{MemberScan: ms, Struct: st, ver: -1}
	for _, c := range ids {
		m, ok := ms.names[c]
		if !ok || (ms.kinds[m] != kindLong && ms.kinds[m] != kindString) {
			return nil
		}
		ks.ids = append(ks.ids, m)
	}
	if vc := versionColumn; vc != "" {
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
			return nil, nil, false // the key of a null id
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

// Has reports whether the shape has a member named name.
func (ms *MemberScan) Has(name string) bool {
	_, ok := ms.names[name]
	return ok
}

// Value is the converted value of member name of the object b just scanned (nil: null or absent).
func (ms *MemberScan) Value(b []byte, name string) any {
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
