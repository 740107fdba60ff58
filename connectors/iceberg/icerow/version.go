package icerow

// Versions taken from the change event's envelope (the position of the change in the source
// log), normalized to strings that order as the positions do, so that a plain string
// comparison works within a commit, against live rows and in `<table>__deletes`.
//
// Encoding: each numeric component is written as its digit count (two digits) followed by its
// decimal digits ("1010" -> "041010"); components are joined by '.'. Two such strings compare
// as their components do, number by number, whatever their magnitude (Oracle SCNs beyond
// int64 included). A negative component is '-', then 99 minus its digit count, then its digits
// 9-complemented, which sorts below every non-negative one and in numeric order among
// negatives.

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// IsEnvelopePath reports whether a configured version column names a position in the change
// event (`source` or a dotted path such as `source.lsn`) rather than a column of the row.
func IsEnvelopePath(vc string) bool {
	return vc == "source" || strings.Contains(vc, ".")
}

// KnownSourceFields are the `source.*` version paths with a dedicated ordering.
var KnownSourceFields = map[string]bool{
	"": true, "lsn": true, "scn": true, "commit_scn": true, "change_lsn": true, "commit_lsn": true,
	"file": true, "pos": true, "row": true, "ts_ms": true,
}

// envelopeField reads parent.field of a change event: from the envelope, or from a row that
// ExtractNewRecordState unwrapped with add.fields (default prefix "__": `source.lsn` becomes
// `__lsn` when added as `lsn`, `__source_lsn` when added as `source.lsn`).
func envelopeField(value Row, parent, field string) any {
	if p, ok := value[parent].(map[string]any); ok {
		return p[field]
	}
	if v, ok := value["__"+parent+"_"+field]; ok {
		return v
	}
	if parent == "source" {
		return value["__"+field]
	}
	return nil
}

// EnvelopeVersion returns the normalized version of a change event for path ("source",
// "source.lsn", ...), "" when the event does not carry it.
func EnvelopeVersion(path string, value Row) (string, error) {
	parent, field := "source", ""
	if path != "source" {
		i := strings.IndexByte(path, '.')
		parent, field = path[:i], path[i+1:]
	}
	get := func(f string) any { return envelopeField(value, parent, f) }
	if parent == "source" && field == "" {
		switch {
		case get("lsn") != nil:
			field = "lsn"
		case get("scn") != nil:
			field = "scn"
		case get("commit_lsn") != nil || get("change_lsn") != nil:
			field = "commit_lsn"
		case get("file") != nil:
			field = "file"
		case get("ord") != nil: // MongoDB: oplog seconds, then the increment
			return JoinVersion(get("ts_ms"), get("ord"))
		default:
			field = "ts_ms"
		}
	}
	if parent == "source" {
		switch field {
		case "change_lsn":
			if get("change_lsn") == nil {
				return "", nil
			}
			return JoinVersion(get("change_lsn"), get("event_serial_no"))
		case "commit_lsn":
			if get("commit_lsn") == nil {
				return "", nil
			}
			return JoinVersion(get("commit_lsn"), get("change_lsn"), get("event_serial_no"))
		case "file", "pos", "row":
			f := get("file")
			if f == nil {
				return "", nil
			}
			seq, err := binlogSequence(ToString(f))
			if err != nil {
				return "", err
			}
			return JoinVersion(seq, get("pos"), get("row"))
		}
	}
	v := get(field)
	if v == nil {
		v, _ = FieldPath(value, path)
	}
	if v == nil {
		return "", nil
	}
	return JoinVersion(v)
}

// binlogSequence is the sequence number of a MySQL binlog file name ("mysql-bin.000042": 42).
func binlogSequence(file string) (*big.Int, error) {
	s := file[strings.LastIndexByte(file, '.')+1:]
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || s == "" {
		return nil, fmt.Errorf("binlog file name %q does not end in a sequence number", file)
	}
	return n, nil
}

// JoinVersion encodes the components of one version; a missing (nil) component counts as 0.
func JoinVersion(parts ...any) (string, error) {
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 {
			sb.WriteByte('.')
		}
		if err := appendVersionPart(&sb, p); err != nil {
			return "", err
		}
	}
	return sb.String(), nil
}

func appendVersionPart(sb *strings.Builder, v any) error {
	switch x := v.(type) {
	case nil:
		return appendVersionNumber(sb, new(big.Int))
	case *big.Int:
		return appendVersionNumber(sb, x)
	case time.Time:
		return appendVersionNumber(sb, big.NewInt(x.UnixMicro()))
	case string:
		s := strings.TrimSpace(x)
		if n, ok := new(big.Int).SetString(s, 10); ok {
			return appendVersionNumber(sb, n)
		}
		if parts, ok := HexLSNParts(s); ok {
			for i, n := range parts {
				if i > 0 {
					sb.WriteByte('.')
				}
				if err := appendVersionNumber(sb, n); err != nil {
					return err
				}
			}
			return nil
		}
		sb.WriteString(s) // an opaque string orders as a string
		return nil
	case float32, float64:
		f, _ := ToFloat64(x)
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return fmt.Errorf("version %v is not an integer", f)
		}
		n, _ := new(big.Float).SetFloat64(f).Int(nil)
		return appendVersionNumber(sb, n)
	case Decimal:
		if x.Scale != 0 {
			return fmt.Errorf("version %s is not an integer", x)
		}
		return appendVersionNumber(sb, x.Unscaled)
	}
	if n, err := ToInt64(v); err == nil {
		return appendVersionNumber(sb, big.NewInt(n))
	}
	if u, ok := v.(uint64); ok {
		return appendVersionNumber(sb, new(big.Int).SetUint64(u))
	}
	return appendVersionPart(sb, ToString(v))
}

func appendVersionNumber(sb *strings.Builder, n *big.Int) error {
	digits := new(big.Int).Abs(n).String()
	if len(digits) > 99 {
		return fmt.Errorf("version %s has more than 99 digits", n)
	}
	if n.Sign() >= 0 {
		fmt.Fprintf(sb, "%02d%s", len(digits), digits)
		return nil
	}
	fmt.Fprintf(sb, "-%02d", 99-len(digits))
	for _, c := range []byte(digits) {
		sb.WriteByte('9' - (c - '0'))
	}
	return nil
}

// HexLSNParts parses a SQL Server LSN ("00000027:00000758:0005", any case and width) into its
// three numbers.
func HexLSNParts(s string) ([]*big.Int, bool) {
	fs := strings.Split(s, ":")
	if len(fs) != 3 {
		return nil, false
	}
	out := make([]*big.Int, 3)
	for i, f := range fs {
		n, ok := new(big.Int).SetString(f, 16)
		if !ok || f == "" || strings.ContainsAny(f, "+-xX_") {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// CompareVersion orders two versions of a key: numbers by value (digit strings of any length
// too), SQL Server LSNs by value, timestamps by time, anything else as strings. Envelope
// versions are normalized strings (EnvelopeVersion) and compare as strings.
func CompareVersion(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	if ia, err := ToInt64(a); err == nil {
		if ib, err := ToInt64(b); err == nil {
			return cmpOrdered(ia, ib)
		}
	}
	if ta, ok := a.(time.Time); ok {
		if tb, ok := b.(time.Time); ok {
			return ta.Compare(tb)
		}
	}
	sa, aStr := a.(string)
	sb, bStr := b.(string)
	if aStr && bStr {
		na, okA := new(big.Int).SetString(strings.TrimSpace(sa), 10)
		nb, okB := new(big.Int).SetString(strings.TrimSpace(sb), 10)
		if okA && okB {
			return na.Cmp(nb)
		}
		if pa, ok := HexLSNParts(sa); ok {
			if pb, ok := HexLSNParts(sb); ok {
				for i := range pa {
					if c := pa[i].Cmp(pb[i]); c != 0 {
						return c
					}
				}
				return 0
			}
		}
		if fa, err := strconv.ParseFloat(sa, 64); err == nil {
			if fb, err := strconv.ParseFloat(sb, 64); err == nil {
				return cmpOrdered(fa, fb)
			}
		}
		return strings.Compare(sa, sb)
	}
	if fa, err := ToFloat64(a); err == nil {
		if fb, err := ToFloat64(b); err == nil {
			return cmpOrdered(fa, fb)
		}
	}
	return strings.Compare(ToString(a), ToString(b))
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
