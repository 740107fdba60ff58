package icerow

import (
	"regexp"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
)

// Router reads a record once for every table it goes to: it picks the tables (Routing), converts
// the value (its SchemaCache) or reads the raw JSON bytes of a shape it remembers, and derives per
// table what the table writer takes (Target). It keeps, per table, the record shapes the JSON
// fast paths read bytes by: the shape of the last JSON object converted whole, compiled against
// the spooled table's columns (JSONShape), and a keyed table's KeyShape. Not safe for concurrent
// use: one per task.
type Router struct {
	cache   *SchemaCache
	routing Routing
	tables  Tables
	single  string // the one static table every record goes to ("": routed per record)
	shapes  map[string]*shapeMemory
	singles *shapeMemory // shapes[single], once noted: the lookup of every record read from its bytes
	out     []Target
	keys    []byte // scratch: the keys of this record's targets
}

// Routing says which tables a record goes to (Apache semantics) and where its op is.
type Routing struct {
	Tables     []string                  // the static tables
	RouteField string                    // dotted path of the value that routes it ("": every static table)
	RouteRegex map[string]*regexp.Regexp // per static table: the route field values it takes
	Dynamic    bool                      // the lower-cased route field value names the table
	CDCField   string                    // the value's op field (U..., D...; "": none)
}

// Tables answers, for a table a record goes to, how that table takes it.
type Tables interface {
	// Table is how table name takes records.
	Table(name string) *TableSpec
	// Spool is the schema of the table's open segment of record r's partition when the table spools
	// rows (nil: none): a JSON object of a shape known to fit it can go there straight from its bytes.
	// The router reads it before its next call.
	Spool(name string, r *connect.SinkRecord) *SpoolColumns
}

// TableSpec is what a table needs of a record's row.
type TableSpec struct {
	RawCDC           bool     // the table holds the raw CDC history row (RawRow)
	IDColumns        []string // the key columns
	Upsert           bool     // an insert replaces its key's row
	Delta            bool     // rows are written as changes of keys (equality deletes)
	VersionColumn    string   // the configured version ("": none): a column, or a path into the envelope
	CDCVersionColumn string   // the metadata column the envelope version goes to ("": not from the envelope)
}

// SpoolColumns is the schema of an append table's open segments.
type SpoolColumns struct {
	SchemaID int
	Fields   []arrow.Field
	Fits     map[*ice.StructType]error // record struct types checked against the schema: nil = fits
}

// Keyed reports whether the table buffers one record per key: the router gives Key and Version.
func (s *TableSpec) Keyed() bool { return s.Delta && len(s.IDColumns) > 0 }

// KeyVersionColumn is the row column holding a key's version ("": none).
func (s *TableSpec) KeyVersionColumn() string {
	if s.CDCVersionColumn != "" {
		return s.CDCVersionColumn
	}
	return s.VersionColumn
}

// plainUpsert reports whether the table's rows are the JSON object itself, keyed: the records of a
// known shape can be buffered as their bytes.
func (s *TableSpec) plainUpsert() bool {
	return !s.RawCDC && s.Upsert && s.Keyed() && s.CDCVersionColumn == ""
}

// Target is what one table takes of a record.
type Target struct {
	Table  string
	Op     Op
	Row    Row             // nil when the bytes are taken (Shape, AsBytes)
	Struct *ice.StructType // the struct type of the row
	Raw    bool            // Row is the raw CDC history row
	// Shape: the record's JSON bytes were just scanned as of this shape, which the segment of
	// the table's spooled columns appends (JSONShape.AppendScanned) in place of a Row
	Shape *JSONShape
	// AsBytes: the keyed table buffers the record as its JSON bytes (of Struct), converted when a
	// round takes it
	AsBytes bool
	Key     []byte // keyed table: the row's key (as KeyOf makes it), valid until the next Route
	Version any    // keyed table: the key's version
	Gap     VersionGap
}

// VersionGap is a version the table's configuration asks for that the record does not carry.
type VersionGap uint8

const (
	NoGap VersionGap = iota
	// EnvelopeVersionMissing: the version path resolves to nothing in the record
	EnvelopeVersionMissing
	// VersionColumnMissing: the row lacks the version column
	VersionColumnMissing
	// UnversionedDelete: a delete reaches a table without a version
	UnversionedDelete
)

// shapeMemory is what the router remembers of one table's JSON records.
type shapeMemory struct {
	last        *ice.StructType // the struct type of the last JSON object converted whole
	shape       *JSONShape      // compiled from the last that fit the spooled columns (nil: not compilable)
	tried       *ice.StructType // the struct type shape was compiled from, at schema triedSchema
	triedSchema int
	keyShape    *KeyShape
}

// NewRouter makes the router of one task.
func NewRouter(routing Routing, tables Tables) *Router {
	rt := &Router{cache: NewSchemaCache(), routing: routing, tables: tables, shapes: map[string]*shapeMemory{}}
	if !routing.Dynamic && routing.RouteField == "" && routing.CDCField == "" && len(routing.Tables) == 1 {
		rt.single = routing.Tables[0]
	}
	return rt
}

// Route returns what each table the record goes to takes of it, valid until the next call. An
// error is the record's (a data error: the DLQ's); the targets before it still take the record.
func (rt *Router) Route(r *connect.SinkRecord, now time.Time) ([]Target, error) {
	rt.out, rt.keys = rt.out[:0], rt.keys[:0]
	jv, fromJSON := r.Value.(*jsonvalue.Value)
	if fromJSON && rt.single != "" && rt.fromBytes(r, jv) {
		return rt.out, nil
	}
	rec, err := rt.cache.Read(r)
	if err != nil {
		return nil, err
	}
	tables := rt.routes(rec.Value)
	for _, name := range tables {
		spec := rt.tables.Table(name)
		if spec.RawCDC {
			rt.out = append(rt.out, Target{Table: name, Op: OpInsert, Row: RawRow(r, rec.Value, rec.Key, now), Struct: RawCDCSchema, Raw: true})
			continue
		}
		tg, ok, err := change(name, spec, rec, rt.routing.CDCField)
		if err != nil {
			return rt.out, err
		}
		if !ok {
			continue
		}
		if spec.Keyed() {
			at := len(rt.keys)
			rt.keys = AppendKey(rt.keys, tg.Row, spec.IDColumns)
			tg.Key = rt.keys[at:len(rt.keys):len(rt.keys)]
			if vc := spec.KeyVersionColumn(); vc != "" {
				tg.Version = tg.Row[vc]
			}
		}
		if fromJSON && name == rt.single && tg.Struct == rec.Struct {
			rt.note(name, spec, &tg)
		}
		rt.out = append(rt.out, tg)
	}
	return rt.out, nil
}

// fromBytes routes a JSON object of a remembered shape to the one static table without converting
// it: into the table's open segment (Target.Shape), or buffered as bytes by key (Target.AsBytes).
func (rt *Router) fromBytes(r *connect.SinkRecord, jv *jsonvalue.Value) bool {
	m := rt.singles
	if m == nil {
		return false
	}
	if rt.tables.Table(rt.single).RawCDC {
		return false
	}
	if sp := rt.tables.Spool(rt.single, r); sp != nil {
		if js := m.spoolShape(sp); js != nil && js.Scan(jv.Bytes, jv.Members) {
			rt.out = append(rt.out, Target{Table: rt.single, Op: OpInsert, Struct: js.Struct, Shape: js})
			return true
		}
	}
	if ks := m.keyShape; ks != nil && ks.MemberScan != nil {
		if k, ver, ok := ks.Read(jv.Bytes, jv.Members); ok {
			rt.out = append(rt.out, Target{Table: rt.single, Op: OpUpdate, Struct: ks.Struct, AsBytes: true, Key: k, Version: ver})
			return true
		}
	}
	return false
}

// note remembers the shape of a JSON object just converted whole (its row is the value) for the
// records after it.
func (rt *Router) note(name string, spec *TableSpec, tg *Target) {
	m := rt.shapes[name]
	if m == nil {
		m = &shapeMemory{}
		rt.shapes[name] = m
		if name == rt.single {
			rt.singles = m
		}
	}
	st := tg.Struct
	if tg.Op != OpDelete {
		m.last = st
	}
	if tg.Op != OpUpdate || st == nil || !spec.plainUpsert() {
		return
	}
	if ks := m.keyShape; ks != nil && ks.Struct == st {
		return
	}
	ks := CompileKeyShape(st, spec.IDColumns, spec.KeyVersionColumn())
	if ks == nil {
		ks = &KeyShape{Struct: st} // not read from bytes: remembered, so that it is not compiled per record
	}
	m.keyShape = ks
}

// spoolShape is the shape the bytes of records spooled into columns sp are read by: compiled from the
// last JSON object converted whole once its struct type is known to fit sp (nil: none).
func (m *shapeMemory) spoolShape(sp *SpoolColumns) *JSONShape {
	if st := m.last; st != nil && (st != m.tried || sp.SchemaID != m.triedSchema) {
		if err, ok := sp.Fits[st]; ok && err == nil {
			m.tried, m.triedSchema = st, sp.SchemaID
			m.shape = CompileShape(st, sp.SchemaID, sp.Fields)
		}
	}
	if js := m.shape; js != nil && js.SchemaID == sp.SchemaID {
		return js
	}
	return nil
}

// change derives the op and row of one record for a (non-raw) table: the record's change
// (Record.Change) as the table's keys, mode and version take it. With a version from the
// envelope, the row gets its normalized version in the metadata column. ok is false when the
// record changes nothing in the table.
func change(table string, spec *TableSpec, rec Record, cdcField string) (Target, bool, error) {
	value, key := rec.Value, rec.Key
	if value == nil {
		// tombstone: a key delete when the table is keyed, otherwise nothing to write
		km, ok := key.(map[string]any)
		if !ok || len(spec.IDColumns) == 0 {
			return Target{}, false, nil
		}
		return Target{Table: table, Op: OpDelete, Row: km}, true, nil
	}
	op, row, st, ok := rec.Change(cdcField)
	if !ok {
		return Target{}, false, nil
	}
	if spec.Upsert && op == OpInsert {
		op = OpUpdate
	}
	if op == OpDelete {
		km, _ := key.(map[string]any)
		if row == nil {
			row = map[string]any{}
		} else {
			row = CloneRow(row)
		}
		for _, c := range spec.IDColumns {
			if row[c] == nil && km != nil {
				row[c] = km[c]
			}
		}
		if len(spec.IDColumns) == 0 {
			return Target{}, false, nil // nothing to delete by in an unkeyed table
		}
	}
	if row == nil {
		return Target{}, false, nil
	}
	gap := NoGap
	switch vc := spec.VersionColumn; {
	case spec.CDCVersionColumn != "":
		v, err := EnvelopeVersion(vc, value)
		if err != nil {
			return Target{}, false, connect.DataErrorf("version %s: %v", vc, err)
		}
		if v == "" {
			gap = EnvelopeVersionMissing
			break
		}
		if op != OpDelete { // a delete's row is already a copy
			row = CloneRow(row)
		}
		row[spec.CDCVersionColumn] = v
	case vc != "":
		if row[vc] == nil && op != OpDelete {
			gap = VersionColumnMissing
		}
	case op == OpDelete && !spec.Delta:
		gap = UnversionedDelete
	}
	return Target{Table: table, Op: op, Row: row, Struct: st, Gap: gap}, true, nil
}

// routes returns the tables a record goes to (Apache semantics): static tables all get every
// record unless a route field is set, then each table whose route-regex matches its value;
// dynamic routing uses the lower-cased route field value as the table name.
func (rt *Router) routes(value Row) []string {
	c := &rt.routing
	if c.Dynamic {
		v, ok := FieldPath(value, c.RouteField)
		if !ok || v == nil {
			return nil
		}
		return []string{strings.ToLower(ToString(v))}
	}
	if c.RouteField == "" {
		return c.Tables
	}
	v, ok := FieldPath(value, c.RouteField)
	if !ok || v == nil {
		return nil
	}
	s := ToString(v)
	var out []string
	for _, name := range c.Tables {
		if re := c.RouteRegex[name]; re != nil && MatchFull(re, s) {
			out = append(out, name)
		}
	}
	return out
}

// MatchFull is Java's Pattern.matcher(s).matches().
func MatchFull(re *regexp.Regexp, s string) bool {
	loc := re.FindStringIndex(s)
	if loc != nil && loc[0] == 0 && loc[1] == len(s) {
		return true
	}
	full, err := regexp.Compile("^(?:" + re.String() + ")$")
	return err == nil && full.MatchString(s)
}
