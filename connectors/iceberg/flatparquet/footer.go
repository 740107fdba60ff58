package flatparquet

// The Thrift structures of parquet.thrift that the writer emits: page headers and the footer's
// FileMetaData.

func pageHeaderV2(dst []byte, usize, csize, rows, nulls int, enc int32, defLen int, compressed bool) []byte {
	c := compact{b: dst, last: make([]int16, 0, 4)}
	c.begin()
	c.i32(1, pageDataV2)
	c.i32(2, int32(usize))
	c.i32(3, int32(csize))
	c.structField(8) // DataPageHeaderV2
	c.i32(1, int32(rows))
	c.i32(2, int32(nulls))
	c.i32(3, int32(rows))
	c.i32(4, enc)
	c.i32(5, int32(defLen))
	c.i32(6, 0)
	c.boolean(7, compressed)
	c.end()
	c.end()
	return c.b
}

func dictPageHeader(dst []byte, usize, csize, entries int) []byte {
	c := compact{b: dst, last: make([]int16, 0, 4)}
	c.begin()
	c.i32(1, pageDictionary)
	c.i32(2, int32(usize))
	c.i32(3, int32(csize))
	c.structField(7) // DictionaryPageHeader
	c.i32(1, int32(entries))
	c.i32(2, encPlain)
	c.boolean(3, false)
	c.end()
	c.end()
	return c.b
}

type encStat struct{ page, enc, count int32 }

// chunkMeta is what the footer says of a column chunk.
type chunkMeta struct {
	offset, dictOffset, dataOffset int64
	values, nulls                  int64
	usize, csize                   int64
	encodings                      []int32
	encStats                       []encStat
	stats                          encoded
}

type rowGroupMeta struct {
	chunks       []chunkMeta
	rows         int64
	offset       int64
	usize, csize int64
}

// fileMetaData encodes the footer of a file of cols and row groups rgs.
func fileMetaData(cols []*column, rgs []rowGroupMeta, codec Codec, createdBy string) []byte {
	var rows int64
	for _, rg := range rgs {
		rows += rg.rows
	}
	c := compact{last: make([]int16, 0, 8)}
	c.begin()
	c.i32(1, 2)
	c.list(2, ctStruct, len(cols)+1)
	c.begin() // the root
	c.i32(3, 0)
	c.str(4, "schema")
	c.i32(5, int32(len(cols)))
	c.end()
	for _, col := range cols {
		c.begin()
		c.i32(1, col.ptype)
		rep := int32(1)
		if col.Required {
			rep = 0
		}
		c.i32(3, rep)
		c.str(4, col.Name)
		if col.converted != convNone {
			c.i32(6, col.converted)
		}
		c.i32(9, int32(col.FieldID))
		if col.logical != nil {
			c.structField(10)
			col.logical(&c)
			c.end()
		}
		c.end()
	}
	c.i64(3, rows)
	c.list(4, ctStruct, len(rgs))
	for i, rg := range rgs {
		c.begin()
		c.list(1, ctStruct, len(rg.chunks))
		for j, ch := range rg.chunks {
			c.begin()
			c.i64(2, ch.offset)
			c.structField(3) // ColumnMetaData
			c.i32(1, cols[j].ptype)
			c.list(2, ctI32, len(ch.encodings))
			for _, e := range ch.encodings {
				c.listI32(e)
			}
			c.list(3, ctBinary, 1)
			c.listStr(cols[j].Name)
			c.i32(4, int32(codec))
			c.i64(5, ch.values)
			c.i64(6, ch.usize)
			c.i64(7, ch.csize)
			c.i64(9, ch.dataOffset)
			if ch.dictOffset >= 0 {
				c.i64(11, ch.dictOffset)
			}
			c.structField(12) // Statistics
			c.i64(3, ch.nulls)
			if ch.stats.max != nil {
				c.binary(5, ch.stats.max)
			}
			if ch.stats.min != nil {
				c.binary(6, ch.stats.min)
			}
			c.end()
			c.list(13, ctStruct, len(ch.encStats))
			for _, es := range ch.encStats {
				c.begin()
				c.i32(1, es.page)
				c.i32(2, es.enc)
				c.i32(3, es.count)
				c.end()
			}
			c.end() // ColumnMetaData
			c.end() // ColumnChunk
		}
		c.i64(2, rg.usize)
		c.i64(3, rg.rows)
		c.i64(5, rg.offset)
		c.i64(6, rg.csize)
		c.field(7, 4) // i16
		c.b = appendZigzag(c.b, int64(i))
		c.end()
	}
	c.str(6, createdBy)
	c.list(7, ctStruct, len(cols))
	for range cols {
		c.begin()
		c.structField(1) // TYPE_ORDER
		c.end()
		c.end()
	}
	c.end()
	return c.b
}
