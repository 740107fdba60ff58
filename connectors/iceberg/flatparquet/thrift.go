package flatparquet

import "encoding/binary"

// The Thrift compact protocol types of the footer and page headers.
const (
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI32    = 5
	ctI64    = 6
	ctBinary = 8
	ctList   = 9
	ctStruct = 12
)

// compact encodes Thrift structs in the compact protocol: a field header is the delta of its id
// from the previous field's in the struct, or its id in full when the delta is not 1 to 15.
type compact struct {
	b    []byte
	last []int16 // the previous field id of each open struct
}

func (c *compact) field(id int16, typ byte) {
	top := len(c.last) - 1
	if d := id - c.last[top]; d > 0 && d <= 15 {
		c.b = append(c.b, byte(d)<<4|typ)
	} else {
		c.b = append(c.b, typ)
		c.b = binary.AppendUvarint(c.b, uint64(zigzag(int64(id))))
	}
	c.last[top] = id
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func (c *compact) begin()               { c.last = append(c.last, 0) }
func (c *compact) end()                 { c.b = append(c.b, 0); c.last = c.last[:len(c.last)-1] }
func (c *compact) structField(id int16) { c.field(id, ctStruct); c.begin() }

func (c *compact) i32(id int16, v int32) {
	c.field(id, ctI32)
	c.b = binary.AppendUvarint(c.b, zigzag(int64(v)))
}

func (c *compact) i64(id int16, v int64) {
	c.field(id, ctI64)
	c.b = binary.AppendUvarint(c.b, zigzag(v))
}

func (c *compact) i8(id int16, v int8) {
	c.field(id, ctByte)
	c.b = append(c.b, byte(v))
}

func (c *compact) boolean(id int16, v bool) {
	if v {
		c.field(id, ctTrue)
	} else {
		c.field(id, ctFalse)
	}
}

func (c *compact) binary(id int16, v []byte) {
	c.field(id, ctBinary)
	c.b = binary.AppendUvarint(c.b, uint64(len(v)))
	c.b = append(c.b, v...)
}

func (c *compact) str(id int16, v string) {
	c.field(id, ctBinary)
	c.b = binary.AppendUvarint(c.b, uint64(len(v)))
	c.b = append(c.b, v...)
}

// list starts a list field of n elements of type typ; struct elements follow as begin ... end.
func (c *compact) list(id int16, typ byte, n int) {
	c.field(id, ctList)
	if n < 15 {
		c.b = append(c.b, byte(n)<<4|typ)
	} else {
		c.b = append(c.b, 0xf0|typ)
		c.b = binary.AppendUvarint(c.b, uint64(n))
	}
}

// listI32 is an element of a list of i32.
func (c *compact) listI32(v int32) { c.b = binary.AppendUvarint(c.b, zigzag(int64(v))) }

// listStr is an element of a list of strings.
func (c *compact) listStr(v string) {
	c.b = binary.AppendUvarint(c.b, uint64(len(v)))
	c.b = append(c.b, v...)
}

func appendZigzag(dst []byte, v int64) []byte { return binary.AppendUvarint(dst, zigzag(v)) }
