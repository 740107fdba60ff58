package icerow

import (
	"strings"

	ice "github.com/apache/iceberg-go"
)

// Op is the change kind of one record: an insert, an update (the key's row replaced) or a delete.
type Op byte

const (
	OpInsert Op = 'I'
	OpUpdate Op = 'U'
	OpDelete Op = 'D'
)

// Change is what a record's value does to a table, whatever the table: its op, and the row and struct
// type of the state it leaves. A Debezium envelope's op gives it (its after row; before for a delete);
// else the value's cdcField ("": none) when it starts with U or D, else an insert of the value. ok is
// false for a value that changes nothing (a tombstone, an envelope's truncate or message event).
func (r Record) Change(cdcField string) (op Op, row Row, st *ice.StructType, ok bool) {
	value := r.Value
	if value == nil {
		return 0, nil, nil, false
	}
	op, row, st = OpInsert, value, r.Struct
	if DebeziumEnvelope(value) {
		switch value["op"] {
		case "d":
			row, _ = value["before"].(map[string]any)
			return OpDelete, row, StructField(st, "before"), true
		case "t", "m":
			return 0, nil, nil, false
		}
		// c, r, u
		row, _ = value["after"].(map[string]any)
		return OpUpdate, row, StructField(st, "after"), true
	}
	if cdcField != "" {
		if v, ok := FieldPath(value, cdcField); ok && v != nil {
			s := strings.ToUpper(ToString(v))
			switch {
			case strings.HasPrefix(s, "U"):
				op = OpUpdate
			case strings.HasPrefix(s, "D"):
				op = OpDelete
			}
		}
	}
	return op, row, st, true
}
