package clickhouse

import (
	"fmt"
	"strings"

	"github.com/ClickHouse/ch-go/proto"

	"github.com/connectd/connectd/connect"
)

// block accumulates rows for one INSERT into one table.
type block struct {
	tbl        *tableInfo
	cols       []column
	info       []colInfo
	seen       []bool
	versionIdx int
	deletedIdx int
	rows       int

	// struct field index cache: column i reads field fieldIdx[i] of structs of schema lastSchema.
	lastSchema *connect.Schema
	fieldIdx   []int
}

func newBlock(tbl *tableInfo, cfg *Config) (*block, error) {
	b := &block{tbl: tbl, versionIdx: -1, deletedIdx: -1}
	verName, delName := cfg.versionColumn(tbl), cfg.deletedColumn(tbl)
	for _, ci := range tbl.columns {
		if !ci.insertable() {
			continue
		}
		c, err := newColumn(ci.typ)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: column %s of %s.%s: %w", ci.name, tbl.db, tbl.name, err)
		}
		if cfg.DebeziumCDC {
			switch ci.name {
			case verName:
				b.versionIdx = len(b.cols)
			case delName:
				b.deletedIdx = len(b.cols)
			}
		}
		b.cols = append(b.cols, c)
		b.info = append(b.info, ci)
	}
	b.seen = make([]bool, len(b.cols))
	return b, nil
}

func (b *block) reset() {
	for i, c := range b.cols {
		c.Reset()
		b.seen[i] = false
	}
	b.rows = 0
}

func (b *block) size() int {
	n := 0
	for _, c := range b.cols {
		n += c.size()
	}
	return n
}

// add appends one row; on error no column changes.
func (b *block) add(r *row) error {
	st, _ := r.value.(*connect.Struct)
	if st != nil && st.Schema() != b.lastSchema {
		b.lastSchema = st.Schema()
		b.fieldIdx = b.fieldIdx[:0]
		for _, ci := range b.info {
			idx := -1
			if f, ok := st.Schema().Field(ci.name); ok {
				idx = f.Index
			}
			b.fieldIdx = append(b.fieldIdx, idx)
		}
	}
	for i, c := range b.cols {
		var (
			v  any
			ok bool
		)
		switch {
		case r.cdc && i == b.versionIdx && r.version != nil:
			v, ok = r.version, true
			if p, isPos := v.(position); isPos {
				var err error
				if v, err = p.forColumn(b.info[i].typ); err != nil {
					b.truncateTo(i)
					return connect.DataErrorf("column %s: %v", b.info[i].name, err)
				}
			}
		case r.cdc && i == b.deletedIdx:
			v, ok = uint8(0), true
			if r.deleted {
				v = uint8(1)
			}
		case st != nil:
			if fi := b.fieldIdx[i]; fi >= 0 {
				v, ok = st.GetIndex(fi), true
			}
		default:
			v, ok = r.field(b.info[i].name)
		}
		if !ok {
			c.appendDefault()
			continue
		}
		b.seen[i] = true
		if err := c.appendValue(v); err != nil {
			b.truncateTo(i)
			return connect.DataErrorf("column %s (%s): %v", b.info[i].name, b.info[i].typ, err)
		}
	}
	b.rows++
	return nil
}

// truncateTo drops the values a failed add appended to the columns before column i.
func (b *block) truncateTo(i int) {
	for _, done := range b.cols[:i] {
		done.truncate(b.rows)
	}
}

// input returns the INSERT statement and its columns. DEFAULT columns that no row of the block set are
// left out, so that the server computes their default expressions.
func (b *block) input(into string) (string, proto.Input) {
	var names []string
	var in proto.Input
	for i, c := range b.cols {
		if b.info[i].defaultKind == "DEFAULT" && !b.seen[i] {
			continue
		}
		names = append(names, quoteIdent(b.info[i].name))
		in = append(in, proto.InputColumn{Name: b.info[i].name, Data: c})
	}
	return "INSERT INTO " + into + " (" + strings.Join(names, ", ") + ") VALUES", in
}

func (t *Task) takeBlock(tbl *tableInfo) (*block, error) {
	key := tbl.db + "." + tbl.name
	t.mu.Lock()
	if bs := t.blocks[key]; len(bs) > 0 {
		b := bs[len(bs)-1]
		t.blocks[key] = bs[:len(bs)-1]
		t.mu.Unlock()
		if b.tbl == tbl {
			b.reset()
			return b, nil
		}
	} else {
		t.mu.Unlock()
	}
	return newBlock(tbl, t.cfg)
}

func (t *Task) giveBlock(b *block) {
	b.reset()
	t.mu.Lock()
	key := b.tbl.db + "." + b.tbl.name
	t.blocks[key] = append(t.blocks[key], b)
	t.mu.Unlock()
}
