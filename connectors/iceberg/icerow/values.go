package icerow

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect/values"
)

// Row is one record's value as the table layer sees it: top-level column name -> Go value.
// Nested structs are map[string]any, lists []any, maps map[string]any or [][2]any.
// Accepted scalar forms are deliberately loose (any integer width, json.Number, strings for
// numbers/timestamps, time.Time, *big.Rat / big.Int scaled for decimals) so converters and
// schemaless JSON both land here without a second conversion pass.
type Row = map[string]any

// BuildRecord turns rows into one Arrow record batch with the given schema (carrying Iceberg
// field IDs). Missing columns become null.
func BuildRecord(sc *arrow.Schema, rows []Row) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Reserve(len(rows))
	fields := sc.Fields() // copies: keep it out of the row loop
	blds := b.Fields()
	for _, r := range rows {
		if err := AppendRow(blds, fields, r); err != nil {
			return nil, err
		}
	}
	return b.NewRecordBatch(), nil
}

// AppendRow appends row r to the builders of fields; a missing column is null.
func AppendRow(blds []array.Builder, fields []arrow.Field, r Row) error {
	for i, f := range fields {
		v, ok := lookupField(r, f.Name)
		if !ok {
			v = nil
		}
		if err := AppendValue(blds[i], f.Type, v); err != nil {
			return &ColumnError{Column: f.Name, Err: err}
		}
	}
	return nil
}

// ColumnError is a value that does not fit its column: the record's row cannot be built.
type ColumnError struct {
	Column string
	Err    error
}

func (e *ColumnError) Error() string { return fmt.Sprintf("column %q: %v", e.Column, e.Err) }

func (e *ColumnError) Unwrap() error { return e.Err }

func lookupField(r map[string]any, name string) (any, bool) {
	if r == nil {
		return nil, false
	}
	v, ok := r[name]
	return v, ok
}

// AppendValue appends v to a builder of type dt as a value of that column type.
func AppendValue(bld array.Builder, dt arrow.DataType, v any) error {
	if v == nil {
		bld.AppendNull()
		return nil
	}
	switch b := bld.(type) {
	case *array.BooleanBuilder:
		x, err := values.ToBoolean(v)
		if err != nil {
			return err
		}
		b.Append(x)
	case *array.Int32Builder:
		x, err := ToInt64(v)
		if err != nil {
			return err
		}
		if x < math.MinInt32 || x > math.MaxInt32 {
			return fmt.Errorf("value %d overflows int", x)
		}
		b.Append(int32(x))
	case *array.Int64Builder:
		x, err := ToInt64(v)
		if err != nil {
			return err
		}
		b.Append(x)
	case *array.Float32Builder:
		x, err := ToFloat64(v)
		if err != nil {
			return err
		}
		b.Append(float32(x))
	case *array.Float64Builder:
		x, err := ToFloat64(v)
		if err != nil {
			return err
		}
		b.Append(x)
	case *array.StringBuilder:
		b.Append(ToString(v))
	case *array.LargeStringBuilder:
		b.Append(ToString(v))
	case *array.BinaryBuilder:
		x, err := toBytes(v)
		if err != nil {
			return err
		}
		b.Append(x)
	case *array.FixedSizeBinaryBuilder:
		x, err := toBytes(v)
		if err != nil {
			return err
		}
		if w := dt.(*arrow.FixedSizeBinaryType).ByteWidth; len(x) != w {
			return fmt.Errorf("fixed[%d] value of %d bytes", w, len(x))
		}
		b.Append(x)
	case *array.Date32Builder:
		d, err := toDays(v)
		if err != nil {
			return err
		}
		b.Append(arrow.Date32(d))
	case *array.Time64Builder:
		us, err := toTimeMicros(v)
		if err != nil {
			return err
		}
		b.Append(arrow.Time64(us))
	case *array.TimestampBuilder:
		unit := dt.(*arrow.TimestampType).Unit
		t, err := toTime(v)
		if err != nil {
			return err
		}
		if unit == arrow.Nanosecond {
			b.Append(arrow.Timestamp(t.UnixNano()))
		} else {
			b.Append(arrow.Timestamp(t.UnixMicro()))
		}
	case *array.Decimal128Builder:
		dtt := dt.(*arrow.Decimal128Type)
		n, err := toDecimal(v, dtt.Scale)
		if err != nil {
			return err
		}
		b.Append(n)
	case *extensions.UUIDBuilder:
		u, err := toUUID(v)
		if err != nil {
			return err
		}
		b.Append(u)
	case *array.StructBuilder:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("expected struct, got %T", v)
		}
		st := dt.(*arrow.StructType)
		b.Append(true)
		for i := 0; i < st.NumFields(); i++ {
			f := st.Field(i)
			if err := AppendValue(b.FieldBuilder(i), f.Type, m[f.Name]); err != nil {
				return fmt.Errorf("%s: %w", f.Name, err)
			}
		}
	case *array.MapBuilder:
		mt := dt.(*arrow.MapType)
		b.Append(true)
		switch m := v.(type) {
		case map[string]any:
			for k, val := range m {
				if err := AppendValue(b.KeyBuilder(), mt.KeyType(), k); err != nil {
					return err
				}
				if err := AppendValue(b.ItemBuilder(), mt.ItemType(), val); err != nil {
					return err
				}
			}
		case [][2]any:
			for _, kv := range m {
				if err := AppendValue(b.KeyBuilder(), mt.KeyType(), kv[0]); err != nil {
					return err
				}
				if err := AppendValue(b.ItemBuilder(), mt.ItemType(), kv[1]); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("expected map, got %T", v)
		}
	case *array.ListBuilder:
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("expected list, got %T", v)
		}
		et := dt.(*arrow.ListType).Elem()
		b.Append(true)
		for _, e := range l {
			if err := AppendValue(b.ValueBuilder(), et, e); err != nil {
				return err
			}
		}
	case *array.LargeListBuilder:
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("expected list, got %T", v)
		}
		et := dt.(*arrow.LargeListType).Elem()
		b.Append(true)
		for _, e := range l {
			if err := AppendValue(b.ValueBuilder(), et, e); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unsupported arrow type %s", dt)
	}
	return nil
}

// ToInt64 is values.ToLong as the row builder reads integers (for long and int columns, keys and versions).
// Beyond ToLong it keeps taking what it has always taken: a float32 truncated toward zero, an integral
// float64, and an unsigned integer beyond int64's range wrapped as the JVM's BigInteger.longValue wraps it;
// a record the sink took stays taken. A float outside int64's range is ToLong's error: Go's conversion of
// it is undefined, and no value would be the record's.
func ToInt64(v any) (int64, error) {
	switch x := v.(type) {
	case float32:
		if inInt64Range(float64(x)) {
			return int64(x), nil
		}
	case float64:
		if x == math.Trunc(x) && inInt64Range(x) {
			return int64(x), nil
		}
	case uint64:
		return int64(x), nil
	}
	return values.ToLong(v)
}

// inInt64Range reports whether x truncates to an int64: -2^63 <= x < 2^63 (false for NaN).
func inInt64Range(x float64) bool { return x >= -0x1p63 && x < 0x1p63 }

// ToFloat64 is values.ToDouble; beyond it a time.Time is its epoch milliseconds, as ToInt64 reads it.
func ToFloat64(v any) (float64, error) {
	if t, ok := v.(time.Time); ok {
		return float64(t.UnixMilli()), nil
	}
	return values.ToDouble(v)
}

// ToString renders a value for a string column: values.AppendString for scalars, except that a time.Time
// keeps its own zone; lists and structs as JSON.
func ToString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	var buf [32]byte
	if b, ok := values.AppendString(buf[:0], v); ok {
		return string(b)
	}
	if x, ok := v.(fmt.Stringer); ok {
		return x.String()
	}
	return fmt.Sprint(v)
}

func toBytes(v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return x, nil
	case string:
		if b, err := base64.StdEncoding.DecodeString(x); err == nil {
			return b, nil
		}
		return []byte(x), nil
	}
	return nil, fmt.Errorf("cannot convert %T to binary", v)
}

// toTime is values.ToTimestamp with text without a zone in UTC; a number is epoch milliseconds as ToInt64
// reads it.
func toTime(v any) (time.Time, error) {
	switch v.(type) {
	case time.Time, string:
		return values.ToTimestamp(v, time.UTC)
	}
	ms, err := ToInt64(v)
	if err != nil {
		return time.Time{}, err
	}
	return values.TimestampFromMillis(ms), nil
}

// toDays is a date column's days since the epoch: a time's date in UTC (values.ToDate takes the date in
// the time's own zone), text as toTime reads it, or an integer (ToInt64) as the days, wrapped to int32.
func toDays(v any) (int32, error) {
	switch x := v.(type) {
	case time.Time:
		return int32(math.Floor(float64(x.Unix()) / 86400)), nil
	case string:
		t, err := toTime(x)
		if err != nil {
			return 0, err
		}
		return toDays(t)
	}
	d, err := ToInt64(v) // Debezium io.debezium.time.Date: days since epoch
	return int32(d), err
}

// toTimeMicros is a time column's microseconds since midnight: a time's clock or "15:04:05[.fraction]" as
// values.ToTime reads them; a time.Duration as it is, also a day or more (PostgreSQL's TIME '24:00:00',
// which values.ToTime refuses); an integer (ToInt64) as microseconds, Iceberg's unit, where values.ToTime
// reads a Connect Time's milliseconds.
func toTimeMicros(v any) (int64, error) {
	switch x := v.(type) {
	case time.Duration:
		return x.Microseconds(), nil
	case time.Time, string:
		d, err := values.ToTime(x)
		return d.Microseconds(), err
	}
	return ToInt64(v)
}

// Decimal is a decimal value as the table layer holds it: Connect's Decimal.
type Decimal = values.Decimal

// toDecimal is v at a decimal column's scale: digits beyond the scale are cut toward zero (a Decimal)
// or rounded (text, floats), where values.ToDecimal reports an error.
func toDecimal(v any, scale int32) (decimal128.Num, error) {
	switch x := v.(type) {
	case Decimal:
		u := new(big.Int).Set(x.Unscaled)
		if x.Scale != scale {
			diff := int64(scale - x.Scale)
			if diff > 0 {
				u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(diff), nil))
			} else {
				u.Quo(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(-diff), nil))
			}
		}
		return decimal128.FromBigInt(u), nil
	case *big.Rat:
		return decimal128.FromString(x.FloatString(int(scale)), 38, scale)
	case string:
		return decimal128.FromString(x, 38, scale)
	case json.Number:
		return decimal128.FromString(x.String(), 38, scale)
	case float64:
		return decimal128.FromFloat64(x, 38, scale)
	}
	i, err := ToInt64(v)
	if err != nil {
		return decimal128.Num{}, err
	}
	return decimal128.FromI64(i).Mul(decimal128.GetScaleMultiplier(int(scale))), nil
}

func toUUID(v any) (uuid.UUID, error) {
	switch x := v.(type) {
	case uuid.UUID:
		return x, nil
	case string:
		return uuid.Parse(x)
	case []byte:
		return uuid.FromBytes(x)
	}
	return uuid.UUID{}, fmt.Errorf("cannot convert %T to uuid", v)
}
