package icerow

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// RecordToRows reads an Arrow record batch (a scan's, a spooled one) back into rows, one map per row,
// in the forms AppendValue takes.
func RecordToRows(rec arrow.RecordBatch) []Row {
	n := int(rec.NumRows())
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = make(Row, rec.NumCols())
	}
	for c := 0; c < int(rec.NumCols()); c++ {
		name := rec.ColumnName(c)
		col := rec.Column(c)
		for i := 0; i < n; i++ {
			rows[i][name] = arrowValue(col, i)
		}
	}
	return rows
}

func arrowValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch x := a.(type) {
	case *array.Boolean:
		return x.Value(i)
	case *array.Int32:
		return x.Value(i)
	case *array.Int64:
		return x.Value(i)
	case *array.Float32:
		return x.Value(i)
	case *array.Float64:
		return x.Value(i)
	case *array.String:
		return x.Value(i)
	case *array.LargeString:
		return x.Value(i)
	case *array.Binary:
		return append([]byte(nil), x.Value(i)...)
	case *array.LargeBinary:
		return append([]byte(nil), x.Value(i)...)
	case *array.FixedSizeBinary:
		return append([]byte(nil), x.Value(i)...)
	case *array.Date32:
		return time.Unix(int64(x.Value(i))*86400, 0).UTC()
	case *array.Timestamp:
		u := x.DataType().(*arrow.TimestampType).Unit
		if u == arrow.Nanosecond {
			return time.Unix(0, int64(x.Value(i))).UTC()
		}
		return time.UnixMicro(int64(x.Value(i))).UTC()
	case *array.Time64:
		return time.Duration(x.Value(i)) * time.Microsecond
	case *array.Decimal128:
		sc := x.DataType().(*arrow.Decimal128Type).Scale
		return Decimal{Unscaled: x.Value(i).BigInt(), Scale: sc}
	case *extensions.UUIDArray:
		return x.Value(i)
	case *array.Struct:
		st := x.DataType().(*arrow.StructType)
		m := make(map[string]any, st.NumFields())
		for f := 0; f < st.NumFields(); f++ {
			m[st.Field(f).Name] = arrowValue(x.Field(f), i)
		}
		return m
	case *array.Map:
		s, e := x.ValueOffsets(i)
		out := make([][2]any, 0, e-s)
		for j := s; j < e; j++ {
			out = append(out, [2]any{arrowValue(x.Keys(), int(j)), arrowValue(x.Items(), int(j))})
		}
		return out
	case *array.List:
		s, e := x.ValueOffsets(i)
		out := make([]any, 0, e-s)
		for j := s; j < e; j++ {
			out = append(out, arrowValue(x.ListValues(), int(j)))
		}
		return out
	case *array.LargeList:
		s, e := x.ValueOffsets(i)
		out := make([]any, 0, e-s)
		for j := s; j < e; j++ {
			out = append(out, arrowValue(x.ListValues(), int(j)))
		}
		return out
	}
	return fmt.Sprint(a.GetOneForMarshal(i))
}
