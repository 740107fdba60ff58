package icetable

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

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
	scans := map[*ice.StructType]*icerow.MemberScan{} // the round's own: the task's keyShape scans under t.mu
	var scratch []byte
	for i := range recs {
		r := &recs[i]
		if r.JSON == nil {
			continue
		}
		ms, ok := scans[r.Schema]
		if !ok {
			ms = icerow.NewMemberScan(r.Schema)
			if ms != nil && ms.Has(StaleDeleteColumn) {
				ms = nil
			}
			scans[r.Schema] = ms
		}
		if rows && ms != nil {
			b, err := r.JSONBytes(&scratch)
			if err != nil {
				return err
			}
			if ms.Scan(b, nil) {
				row := make(icerow.Row, len(names))
				for _, n := range names {
					row[n] = ms.Value(b, n)
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
	// the row SchemaCache.RecordValue makes of it, without its shape: the record's is Rec.Schema, and the
	// schema cache's last shape stays what the records put since made it
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("converting the value of %s at offset %d: a %T, not a JSON object", r.TP, r.Offset, v)
	}
	r.Row, r.JSON = icerow.SchemalessRow(m), nil
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

// BuildDataRecord is icerow.BuildRecord of the data rows of recs (fields are sc's), those buffered as bytes
// appended from them with the shape compiled for their struct type (cached in shapes, nil: from the
// converted row).
func BuildDataRecord(sc *arrow.Schema, fields []arrow.Field, schemaID int, recs []*Rec, shapes map[*ice.StructType]*icerow.JSONShape) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Reserve(len(recs))
	blds := b.Fields()
	var scratch []byte
	for _, r := range recs {
		if r.JSON != nil {
			js, ok := shapes[r.Schema]
			if !ok {
				js = icerow.CompileShape(r.Schema, schemaID, fields)
				shapes[r.Schema] = js
			}
			if js != nil {
				jb, err := r.JSONBytes(&scratch)
				if err != nil {
					return nil, err
				}
				if js.AppendRow(blds, jb, nil) {
					continue
				}
			}
			if err := r.decode(); err != nil {
				return nil, err
			}
		}
		if err := icerow.AppendRow(blds, fields, r.Row); err != nil {
			return nil, &DataError{err}
		}
	}
	return b.NewRecordBatch(), nil
}
