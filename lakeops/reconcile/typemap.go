package reconcile

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connectors/clickhouse/chtype"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// The type mapping between the layers. Iceberg is the system of record: each compared column gets a kind
// from its Iceberg type, and both sides are turned into one canonical text per value of that kind:
//
//	kind       Iceberg type              ClickHouse types                          canonical text
//	bool       boolean                   Bool, UInt8/Int8.. (0/1)                  true | false
//	int        int, long                 Int8..Int256, UInt8..UInt256, Bool        decimal integer
//	float32    float                     Float32, Float64                          shortest text of the float32
//	float64    double                    Float32, Float64                          shortest text of the float64
//	decimal    decimal(P,S)              Decimal(P,S) of any width and scale       fixed point with exactly S digits
//	date       date                      Date, Date32                              days since 1970-01-01
//	timestamp  timestamp, timestamptz    DateTime64(p[,tz]), DateTime([tz])        microseconds since the epoch (UTC)
//	string     string                    String, LowCardinality(String), Enum8/16,  the text (FixedString: trailing
//	                                     FixedString(N), UUID                      NUL bytes removed)
//	uuid       uuid                      UUID, String                              lower-case 8-4-4-4-12
//	binary     binary, fixed(N)          String, FixedString(N)                    upper-case hex
//
// Nullable and LowCardinality wrappers are looked through. A null in Iceberg compares equal to a
// ClickHouse column's default when that column is not Nullable (the sink writes the default for a missing
// or null field there); in a Nullable column it must be NULL. Other pairs (nested types, time) are not
// compared and are listed as such in the report.

// kind is the comparison class of a column.
type kind int

const (
	kindBool kind = iota + 1
	kindInt
	kindFloat32
	kindFloat64
	kindDecimal
	kindDate
	kindTimestamp
	kindString
	kindUUID
	kindBinary
)

func (k kind) String() string {
	return [...]string{"", "bool", "int", "float32", "float64", "decimal", "date", "timestamp", "string", "uuid", "binary"}[k]
}

// nullText is the canonical text of NULL; no canonical value contains a NUL byte followed by this.
const nullText = "\x00NULL"

// isIntType reports whether a ClickHouse type name is one of the integer types.
func isIntType(name string) bool {
	return strings.HasPrefix(name, "Int") || strings.HasPrefix(name, "UInt")
}

// mapping is how one column is compared.
type mapping struct {
	Name           string `json:"name"`
	IcebergType    string `json:"iceberg_type"`
	ClickHouseType string `json:"clickhouse_type"`
	Kind           string `json:"kind,omitempty"`
	// Skipped says why a column present in both tables is not compared.
	Skipped string `json:"skipped,omitempty"`

	kind  kind
	scale int32       // decimal
	ch    chtype.Type // the wrappers looked through; a type it cannot read keeps its text as its name
	expr  string      // ClickHouse SQL yielding the canonical text (or close to it, finished by fromClickHouse)
}

// newMapping decides the kind of a column and the ClickHouse expression that reads it.
func newMapping(name string, it ice.Type, chTypeText string) mapping {
	m := mapping{Name: name, IcebergType: it.String(), ClickHouseType: chTypeText}
	m.ch, _ = chtype.Parse(chTypeText)
	col := quoteIdent(name)
	ct := m.ch
	fail := func() mapping {
		m.Skipped = fmt.Sprintf("no mapping from Iceberg %s to ClickHouse %s", it, chTypeText)
		return m
	}
	switch t := it.(type) {
	case ice.BooleanType:
		if ct.Name != "Bool" && !isIntType(ct.Name) {
			return fail()
		}
		m.kind, m.expr = kindBool, "if("+col+" != 0, 'true', 'false')"
	case ice.Int32Type, ice.Int64Type:
		switch {
		case isIntType(ct.Name):
			m.expr = "toString(" + col + ")"
		case ct.Name == "Bool":
			m.expr = "toString(toUInt8(" + col + "))"
		default:
			return fail()
		}
		m.kind = kindInt
	case ice.Float32Type, ice.Float64Type:
		if ct.Name != "Float32" && ct.Name != "Float64" {
			return fail()
		}
		m.kind, m.expr = kindFloat64, "toString("+col+")"
		if _, ok := it.(ice.Float32Type); ok {
			m.kind = kindFloat32
		}
	case ice.DecimalType:
		if !strings.HasPrefix(ct.Name, "Decimal") {
			return fail()
		}
		m.kind, m.scale, m.expr = kindDecimal, int32(t.Scale()), "toString("+col+")"
	case ice.DateType:
		if ct.Name != "Date" && ct.Name != "Date32" {
			return fail()
		}
		m.kind, m.expr = kindDate, "toString(toInt32("+col+"))"
	case ice.TimestampType, ice.TimestampTzType:
		switch ct.Name {
		case "DateTime64":
			m.expr = "toString(toUnixTimestamp64Micro(" + col + "))"
		case "DateTime":
			m.expr = "toString(toInt64(toUnixTimestamp(" + col + ")) * 1000000)"
		default:
			return fail()
		}
		m.kind = kindTimestamp
	case ice.StringType:
		switch ct.Name {
		case "String", "FixedString", "Enum8", "Enum16", "Enum", "UUID":
		default:
			return fail()
		}
		m.kind, m.expr = kindString, "toString("+col+")"
	case ice.UUIDType:
		if ct.Name != "UUID" && ct.Name != "String" && ct.Name != "FixedString" {
			return fail()
		}
		m.kind, m.expr = kindUUID, "toString("+col+")"
	case ice.BinaryType, ice.FixedType:
		if ct.Name != "String" && ct.Name != "FixedString" {
			return fail()
		}
		m.kind, m.expr = kindBinary, "hex("+col+")"
	default:
		return fail()
	}
	m.Kind = m.kind.String()
	if ct.Nullable {
		m.expr = "if(isNull(" + col + "), NULL, " + m.expr + ")"
	}
	return m
}

// fromIceberg is the canonical text of an Iceberg value (as icetable.LiveRows yields it).
func (m mapping) fromIceberg(v any) (string, error) {
	if v == nil {
		if m.ch.Nullable {
			return nullText, nil
		}
		return m.zero(), nil
	}
	switch m.kind {
	case kindBool:
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
	case kindInt:
		switch x := v.(type) {
		case int32:
			return strconv.FormatInt(int64(x), 10), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		}
	case kindFloat32:
		if f, ok := v.(float32); ok {
			return strconv.FormatFloat(float64(f), 'g', -1, 32), nil
		}
	case kindFloat64:
		switch f := v.(type) {
		case float64:
			return strconv.FormatFloat(f, 'g', -1, 64), nil
		case float32:
			return strconv.FormatFloat(float64(f), 'g', -1, 64), nil
		}
	case kindDecimal:
		if d, ok := v.(icerow.Decimal); ok {
			return decimalText(new(big.Rat).SetFrac(d.Unscaled, pow10(d.Scale)), m.scale), nil
		}
	case kindDate:
		if t, ok := v.(time.Time); ok {
			return strconv.FormatInt(floorDiv(t.Unix(), 86400), 10), nil
		}
	case kindTimestamp:
		if t, ok := v.(time.Time); ok {
			return strconv.FormatInt(t.UnixMicro(), 10), nil
		}
	case kindString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case kindUUID:
		switch u := v.(type) {
		case uuid.UUID:
			return u.String(), nil
		case [16]byte:
			return uuid.UUID(u).String(), nil
		}
	case kindBinary:
		if b, ok := v.([]byte); ok {
			return strings.ToUpper(hex.EncodeToString(b)), nil
		}
	}
	return "", fmt.Errorf("column %s: Iceberg value %v (%T) does not fit kind %s", m.Name, v, v, m.kind)
}

// fromClickHouse finishes the canonical text of a value read with m.expr (null: SQL NULL).
func (m mapping) fromClickHouse(s string, null bool) (string, error) {
	if null {
		return nullText, nil
	}
	switch m.kind {
	case kindFloat32, kindFloat64:
		bits := 64
		if m.kind == kindFloat32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return "", fmt.Errorf("column %s: ClickHouse float %q: %w", m.Name, s, err)
		}
		return strconv.FormatFloat(f, 'g', -1, bits), nil
	case kindDecimal:
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return "", fmt.Errorf("column %s: ClickHouse decimal %q", m.Name, s)
		}
		return decimalText(r, m.scale), nil
	case kindString:
		if m.ch.Name == "FixedString" {
			return strings.TrimRight(s, "\x00"), nil
		}
	case kindUUID:
		return strings.ToLower(s), nil
	}
	return s, nil
}

// zero is the canonical text of the ClickHouse default of the column's type.
func (m mapping) zero() string {
	switch m.kind {
	case kindBool:
		return "false"
	case kindInt, kindFloat32, kindFloat64, kindDate, kindTimestamp:
		return "0"
	case kindDecimal:
		return decimalText(new(big.Rat), m.scale)
	case kindUUID:
		return uuid.Nil.String()
	}
	return ""
}

func decimalText(r *big.Rat, scale int32) string {
	return r.FloatString(int(max(scale, 0)))
}

func pow10(n int32) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// versionText is the canonical text of a source version: a number's decimal digits. Iceberg's `_cdc_version`
// stores each number of a source position as its digit count (two digits) followed by its digits, the parts
// of a composite position joined by '.': a single-number position (PostgreSQL lsn, Oracle scn) decodes to
// that number, which is what the ClickHouse sink writes into its version column. A composite position
// (MySQL binlog file/pos/row, SQL Server LSNs) stays in its stored form and is not compared numerically.
func versionText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		if n, ok := decodeCDCVersion(x); ok {
			return n
		}
		return x
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case time.Time:
		return strconv.FormatInt(x.UnixMicro(), 10)
	}
	return fmt.Sprint(v)
}

// decodeCDCVersion decodes a single-number `_cdc_version` value ("041010" → "1010").
func decodeCDCVersion(s string) (string, bool) {
	if len(s) < 3 || strings.Contains(s, ".") {
		return "", false
	}
	n, err := strconv.Atoi(s[:2])
	if err != nil || n != len(s)-2 {
		return "", false
	}
	for _, c := range s[2:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	d := strings.TrimLeft(s[2:], "0")
	if d == "" {
		d = "0"
	}
	return d, true
}

// versionLess orders canonical versions: by value when both are numbers, else as strings.
func versionLess(a, b string) bool {
	x, okx := new(big.Int).SetString(a, 10)
	y, oky := new(big.Int).SetString(b, 10)
	if okx && oky {
		return x.Cmp(y) < 0
	}
	if a == "" || b == "" {
		return a == ""
	}
	return a < b
}

func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "`", "\\`") + "`"
}

func quoteString(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
