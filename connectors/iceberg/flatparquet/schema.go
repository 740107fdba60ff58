package flatparquet

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
)

// Column is a top-level column of a file.
type Column struct {
	Name    string // the column's name in the file
	FieldID int    // its Iceberg field id
	Type    ice.PrimitiveType
	// Required columns have no definition levels: a null in one is an error.
	Required bool
	// Dictionary starts the column's chunks dictionary-encoded. A chunk's pages fall back to
	// PLAIN when its dictionary outgrows Options.DictBytes, and the whole chunk when its first page
	// is no smaller with the dictionary than without.
	Dictionary bool
}

// Parquet's physical types.
const (
	ptBoolean   = 0
	ptInt32     = 1
	ptInt64     = 2
	ptFloat     = 4
	ptDouble    = 5
	ptByteArray = 6
)

// Parquet's converted types, the annotations older readers know.
const (
	convNone            = -1
	convUTF8            = 0
	convDate            = 6
	convTimestampMicros = 10
	convInt32           = 17
	convInt64           = 18
)

// physical is how a column of an Iceberg type is stored: the Parquet type and annotations arrow-go
// gives the Arrow type iceberg-go maps it to, and the Arrow type IDs its batches may carry.
type physical struct {
	ptype     int32
	width     int // bytes of a fixed-width value; 0 for byte arrays and booleans
	converted int32
	logical   func(c *compact) // writes the LogicalType union's member, nil for none
	arrow     []arrow.Type
}

func intLogical(bits int8) func(c *compact) {
	return func(c *compact) {
		c.structField(10) // INTEGER
		c.i8(1, bits)
		c.boolean(2, true)
		c.end()
	}
}

func emptyLogical(id int16) func(c *compact) {
	return func(c *compact) { c.structField(id); c.end() }
}

// timeLogical writes TIME (7) or TIMESTAMP (8) in microseconds.
func timeLogical(id int16, utc bool) func(c *compact) {
	return func(c *compact) {
		c.structField(id)
		c.boolean(1, utc)
		c.structField(2) // unit
		c.structField(2) // MICROS
		c.end()
		c.end()
		c.end()
	}
}

var physicals = map[ice.Type]physical{
	ice.PrimitiveTypes.Bool:        {ptBoolean, 0, convNone, nil, []arrow.Type{arrow.BOOL}},
	ice.PrimitiveTypes.Int32:       {ptInt32, 4, convInt32, intLogical(32), []arrow.Type{arrow.INT32}},
	ice.PrimitiveTypes.Int64:       {ptInt64, 8, convInt64, intLogical(64), []arrow.Type{arrow.INT64}},
	ice.PrimitiveTypes.Float32:     {ptFloat, 4, convNone, nil, []arrow.Type{arrow.FLOAT32}},
	ice.PrimitiveTypes.Float64:     {ptDouble, 8, convNone, nil, []arrow.Type{arrow.FLOAT64}},
	ice.PrimitiveTypes.Date:        {ptInt32, 4, convDate, emptyLogical(6), []arrow.Type{arrow.DATE32}},
	ice.PrimitiveTypes.Time:        {ptInt64, 8, convNone, timeLogical(7, false), []arrow.Type{arrow.TIME64}},
	ice.PrimitiveTypes.Timestamp:   {ptInt64, 8, convTimestampMicros, timeLogical(8, false), []arrow.Type{arrow.TIMESTAMP}},
	ice.PrimitiveTypes.TimestampTz: {ptInt64, 8, convTimestampMicros, timeLogical(8, true), []arrow.Type{arrow.TIMESTAMP}},
	ice.PrimitiveTypes.String:      {ptByteArray, 0, convUTF8, emptyLogical(1), []arrow.Type{arrow.STRING, arrow.LARGE_STRING}},
	ice.PrimitiveTypes.Binary:      {ptByteArray, 0, convNone, nil, []arrow.Type{arrow.BINARY, arrow.LARGE_BINARY}},
}

// Supported reports whether a column of type t can be written.
func Supported(t ice.Type) bool {
	_, ok := physicals[t]
	return ok
}

// checkArrow reports whether dt is an Arrow type the column's values may come as: the unit of
// times and timestamps must be microseconds.
func (p physical) checkArrow(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.TimestampType:
		if t.Unit != arrow.Microsecond {
			return false
		}
	case *arrow.Time64Type:
		if t.Unit != arrow.Microsecond {
			return false
		}
	}
	for _, id := range p.arrow {
		if dt.ID() == id {
			return true
		}
	}
	return false
}

func physicalOf(c Column) (physical, error) {
	p, ok := physicals[c.Type]
	if !ok {
		return physical{}, fmt.Errorf("flatparquet: column %q: type %v is not supported", c.Name, c.Type)
	}
	return p, nil
}

// Accepts reports whether the column's values may come as Arrow type dt.
func (c Column) Accepts(dt arrow.DataType) bool {
	p, ok := physicals[c.Type]
	return ok && p.checkArrow(dt)
}
