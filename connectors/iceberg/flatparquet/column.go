package flatparquet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Parquet's encodings and page types.
const (
	encPlain         = 0
	encRLE           = 3
	encRLEDictionary = 8

	pageData       = 0
	pageDictionary = 2
	pageDataV2     = 3
)

// column encodes the values of one column: the page being filled, and the pages and dictionary of
// the row group's chunk.
type column struct {
	Column
	physical
	opts *Options

	// the page being filled
	rows    int      // values, nulls included
	nulls   int      // nulls among them
	defs    []uint32 // definition levels, kept from the page's first null on
	plain   []byte   // PLAIN values (not dictionary-encoded)
	bools   []byte   // boolean values, one byte each
	idx     []uint32 // dictionary indices (dictionary-encoded)
	idxSize int      // the PLAIN size of the values idx stands for
	encDict bool     // the page's values are dictionary-encoded

	// the chunk of the row group being built
	dict      bool             // the chunk has a dictionary (its first pages use it)
	fellBack  bool             // chunks of this file start PLAIN
	keys      map[string]int32 // dictionary entries of byte arrays
	fixedKeys map[uint64]int32 // dictionary entries of fixed-width values
	dictVals  []byte           // the entries, PLAIN-encoded
	dictOffs  []int32          // where each entry starts in dictVals
	chunk     []byte           // the chunk's data pages, headers included
	pages     [2]int32         // data pages by encoding: PLAIN, RLE_DICTIONARY
	values    int64
	usize     int64 // uncompressed size of the data pages, headers included
	stats     stats

	// buffers reused from page to page
	body, packed, header, zbuf []byte
}

func newColumn(c Column, opts *Options) (*column, error) {
	p, err := physicalOf(c)
	if err != nil {
		return nil, err
	}
	col := &column{Column: c, physical: p, opts: opts}
	col.stats.kind = p.ptype
	col.startChunk()
	return col, nil
}

// startChunk resets the chunk state for a new row group.
func (c *column) startChunk() {
	c.dict = c.Dictionary && c.ptype != ptBoolean
	c.encDict = c.dict
	c.chunk = c.chunk[:0]
	c.pages = [2]int32{}
	c.values, c.usize = 0, 0
	c.stats.reset()
	if c.dict {
		if c.width == 0 {
			if c.keys == nil {
				c.keys = map[string]int32{}
			} else {
				clear(c.keys)
			}
		} else {
			if c.fixedKeys == nil {
				c.fixedKeys = map[uint64]int32{}
			} else {
				clear(c.fixedKeys)
			}
		}
		c.dictVals, c.dictOffs = c.dictVals[:0], c.dictOffs[:0]
	}
}

// add encodes rows [from, to) of arr, flushing pages as they fill.
func (c *column) add(arr arrow.Array, from, to int) error {
	for from < to {
		n := min(to-from, c.opts.PageRows-c.rows)
		stop, err := c.addRange(arr, from, from+n)
		if err != nil {
			return err
		}
		if stop < from+n {
			c.dictFull()
		}
		from = stop
		if c.rows >= c.opts.PageRows || c.pageBytes() >= c.opts.PageBytes {
			c.flushPage()
		}
	}
	return nil
}

// pageBytes estimates the encoded size of the page being filled.
func (c *column) pageBytes() int {
	if c.encDict {
		return len(c.idx) * bitWidth(len(c.dictOffs)) / 8
	}
	return len(c.plain) + len(c.bools)/8
}

// addRange encodes rows [from, to) of arr into the page, up to the row whose value the
// dictionary cannot take (stop).
func (c *column) addRange(arr arrow.Array, from, to int) (stop int, err error) {
	data := arr.Data()
	var valid []byte
	if arr.NullN() > 0 {
		if c.Required {
			return from, fmt.Errorf("flatparquet: column %q is required but holds a null", c.Name)
		}
		valid = data.Buffers()[0].Bytes()
	}
	off := data.Offset()
	isValid := func(i int) bool { return valid == nil || bitutil.BitIsSet(valid, off+i) }
	stop = to

	switch {
	case c.ptype == ptBoolean:
		a := arr.(*array.Boolean)
		for i := from; i < to; i++ {
			if !isValid(i) {
				continue
			}
			v := a.Value(i)
			c.stats.bool(v)
			if v {
				c.bools = append(c.bools, 1)
			} else {
				c.bools = append(c.bools, 0)
			}
		}
	case c.width > 0:
		raw := data.Buffers()[1].Bytes()[off*c.width:]
		if valid == nil && !c.encDict {
			c.plain = append(c.plain, raw[from*c.width:to*c.width]...)
			c.stats.fixedRange(raw[from*c.width:to*c.width], c.width)
			break
		}
		for i := from; i < to; i++ {
			if !isValid(i) {
				continue
			}
			v := raw[i*c.width : (i+1)*c.width]
			if !c.encDict {
				c.plain = append(c.plain, v...)
				c.stats.fixed(v)
			} else if !c.addFixedDict(v) {
				stop = i
				break
			}
		}
	case !c.encDict && valid == nil:
		c.addPlainBytes(arr, from, to)
	default:
		value := byteArrays(arr)
		for i := from; i < to; i++ {
			if !isValid(i) {
				continue
			}
			v := value(i)
			if !c.encDict {
				c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(len(v)))
				c.plain = append(c.plain, v...)
				c.stats.bytes(v)
			} else if !c.addBytesDict(v) {
				stop = i
				break
			}
		}
	}

	if valid != nil || c.defs != nil {
		if c.defs == nil {
			c.defs = make([]uint32, c.rows, c.rows+(stop-from))
			for i := range c.defs {
				c.defs[i] = 1
			}
		}
		for i := from; i < stop; i++ {
			if isValid(i) {
				c.defs = append(c.defs, 1)
			} else {
				c.defs = append(c.defs, 0)
				c.nulls++
			}
		}
	}
	c.rows += stop - from
	return stop, nil
}

// addPlainBytes adds the byte arrays of rows [from, to) of arr, none null, as PLAIN values. The
// statistics take the least and greatest of them, copied once.
func (c *column) addPlainBytes(arr arrow.Array, from, to int) {
	if from >= to {
		return
	}
	value := byteArrays(arr)
	lo := value(from)
	hi := lo
	for i := from; i < to; i++ {
		v := value(i)
		c.plain = binary.LittleEndian.AppendUint32(c.plain, uint32(len(v)))
		c.plain = append(c.plain, v...)
		// rising values (names, timestamps) take one compare
		if string(v) > string(hi) {
			hi = v
		} else if string(v) < string(lo) {
			lo = v
		}
	}
	c.stats.bytes(lo)
	c.stats.bytes(hi)
}

// byteArrays reads the values of a string or binary array, of 32- or 64-bit offsets. The offsets
// of a slice of an array are those of the array, its value bytes start at the slice's first.
func byteArrays(arr arrow.Array) func(i int) []byte {
	switch a := arr.(type) {
	case *array.String:
		return valuesAt(a.ValueOffsets(), a.ValueBytes())
	case *array.Binary:
		return valuesAt(a.ValueOffsets(), a.ValueBytes())
	case *array.LargeString:
		return valuesAt(a.ValueOffsets(), a.ValueBytes())
	case *array.LargeBinary:
		return valuesAt(a.ValueOffsets(), a.ValueBytes())
	}
	panic(fmt.Sprintf("flatparquet: %T is not a byte array", arr))
}

func valuesAt[O int32 | int64](offs []O, vals []byte) func(i int) []byte {
	base := offs[0]
	return func(i int) []byte { return vals[offs[i]-base : offs[i+1]-base] }
}

// addBytesDict adds v to a dictionary-encoded page, unless the dictionary would outgrow its bound.
func (c *column) addBytesDict(v []byte) bool {
	k, ok := c.keys[string(v)]
	if !ok {
		if len(c.dictVals)+4+len(v) > c.opts.DictBytes {
			return false
		}
		k = int32(len(c.dictOffs))
		c.dictOffs = append(c.dictOffs, int32(len(c.dictVals)))
		c.dictVals = binary.LittleEndian.AppendUint32(c.dictVals, uint32(len(v)))
		c.dictVals = append(c.dictVals, v...)
		c.keys[string(v)] = k
		c.stats.bytes(v)
	}
	c.idx = append(c.idx, uint32(k))
	c.idxSize += 4 + len(v)
	return true
}

func (c *column) addFixedDict(v []byte) bool {
	var key uint64
	if c.width == 4 {
		key = uint64(binary.LittleEndian.Uint32(v))
	} else {
		key = binary.LittleEndian.Uint64(v)
	}
	k, ok := c.fixedKeys[key]
	if !ok {
		if len(c.dictVals)+c.width > c.opts.DictBytes {
			return false
		}
		k = int32(len(c.dictOffs))
		c.dictOffs = append(c.dictOffs, int32(len(c.dictVals)))
		c.dictVals = append(c.dictVals, v...)
		c.fixedKeys[key] = k
		c.stats.fixed(v)
	}
	c.idx = append(c.idx, uint32(k))
	c.idxSize += c.width
	return true
}

// dictFull ends the dictionary-encoded pages of the chunk: the page so far is written with the
// dictionary, the chunk's later pages are PLAIN.
func (c *column) dictFull() {
	c.flushPage()
	c.encDict = false
}

// flushPage writes the page being filled to the chunk.
func (c *column) flushPage() {
	if c.rows == 0 {
		return
	}
	// a chunk's first page that is no smaller with its dictionary than PLAIN: the chunk is PLAIN
	// (arrow-go's and parquet-java's fallback)
	if c.encDict && c.pages == [2]int32{} && len(c.dictVals)+len(c.idx)*bitWidth(len(c.dictOffs))/8 >= c.idxSize {
		c.plain = c.plain[:0]
		for _, k := range c.idx {
			c.plain = append(c.plain, c.dictEntry(int(k))...)
		}
		c.idx = c.idx[:0]
		c.encDict, c.dict = false, false
	}

	body := c.body[:0]
	defLen := 0
	if !c.Required {
		if c.defs == nil {
			body = binary.AppendUvarint(body, uint64(c.rows)<<1)
			body = append(body, 1)
		} else {
			body = appendHybrid(body, c.defs, 1)
		}
		defLen = len(body)
	}
	var values []byte
	enc := int32(encPlain)
	switch {
	case c.encDict:
		enc = encRLEDictionary
		w := bitWidth(len(c.dictOffs))
		c.packed = append(c.packed[:0], byte(w))
		c.packed = appendHybrid(c.packed, c.idx, w)
		values = c.packed
		c.pages[1]++
	case c.ptype == ptBoolean:
		c.packed = packBools(c.packed[:0], c.bools)
		values = c.packed
		c.pages[0]++
	default:
		values = c.plain
		c.pages[0]++
	}
	usize := defLen + len(values)
	c.zbuf = c.opts.compress(c.zbuf, values)
	body = append(body, c.zbuf...)
	c.header = pageHeaderV2(c.header[:0], usize, len(body), c.rows, c.nulls, enc, defLen, c.opts.Codec != Uncompressed)
	c.chunk = append(c.chunk, c.header...)
	c.chunk = append(c.chunk, body...)
	c.usize += int64(len(c.header) + usize)
	c.values += int64(c.rows)
	c.stats.nulls += int64(c.nulls)
	c.body = body

	c.rows, c.nulls, c.idxSize = 0, 0, 0
	c.defs, c.plain, c.bools, c.idx = nil, c.plain[:0], c.bools[:0], c.idx[:0]
}

// bitWidth is the width of the indices of a dictionary of n entries, at least 1.
func bitWidth(n int) int {
	if n <= 1 {
		return 1
	}
	return bits.Len(uint(n - 1))
}

// dictEntry is the PLAIN encoding of entry k.
func (c *column) dictEntry(k int) []byte {
	start := int(c.dictOffs[k])
	if c.width > 0 {
		return c.dictVals[start : start+c.width]
	}
	n := int(binary.LittleEndian.Uint32(c.dictVals[start:]))
	return c.dictVals[start : start+4+n]
}

// packBools bit-packs one byte per boolean, least significant bit first (PLAIN booleans).
func packBools(dst, vals []byte) []byte {
	for i := 0; i < len(vals); i += 8 {
		var b byte
		for j, v := range vals[i:min(i+8, len(vals))] {
			b |= v << j
		}
		dst = append(dst, b)
	}
	return dst
}

// finishChunk flushes the last page and returns the chunk's pages, its dictionary page first.
func (c *column) finishChunk(out *bytes.Buffer, at int64) chunkMeta {
	c.flushPage()
	m := chunkMeta{offset: at, dictOffset: -1, values: c.values, stats: c.stats.encode(c.ptype, c.width)}
	m.nulls = c.stats.nulls
	if c.dict && c.pages[1] > 0 {
		m.dictOffset = at
		c.zbuf = c.opts.compress(c.zbuf, c.dictVals)
		body := c.zbuf
		c.header = dictPageHeader(c.header[:0], len(c.dictVals), len(body), len(c.dictOffs))
		out.Write(c.header)
		out.Write(body)
		m.usize += int64(len(c.header) + len(c.dictVals))
		m.csize += int64(len(c.header) + len(body))
		m.encodings = append(m.encodings, encRLEDictionary, encPlain, encRLE) // arrow-go's order
		m.encStats = append(m.encStats, encStat{pageDictionary, encPlain, 1})
		if c.pages[1] > 0 {
			m.encStats = append(m.encStats, encStat{pageDataV2, encRLEDictionary, c.pages[1]})
		}
	} else {
		m.encodings = append(m.encodings, encPlain, encRLE)
	}
	if c.pages[0] > 0 {
		m.encStats = append(m.encStats, encStat{pageDataV2, encPlain, c.pages[0]})
	}
	m.dataOffset = at + m.csize
	out.Write(c.chunk)
	m.usize += c.usize
	m.csize += int64(len(c.chunk))
	c.startChunk()
	return m
}

// bufferedBytes is the encoded size of the chunk so far.
func (c *column) bufferedBytes() int { return len(c.chunk) + len(c.dictVals) + c.pageBytes() }

// floatOf reads a float32 or float64 of PLAIN bytes.
func floatOf(v []byte) float64 {
	if len(v) == 4 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(v)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(v))
}
