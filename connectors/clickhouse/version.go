package clickhouse

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// position is a change event's ordering value, an unsigned integer of up to 128 bits (hi, lo).
// narrow is the value written to a UInt64 version column; it differs from lo only for MySQL binlog
// positions, which keep their compact 64-bit layout there. A value that does not fit 64 bits cannot be
// written to a UInt64 column (narrowErr says why and what to use instead).
type position struct {
	hi, lo    uint64
	narrow    uint64
	narrowErr string
	from      string // where the value came from, for messages (e.g. "source.lsn")
}

func pos64(v uint64, from string) position { return position{lo: v, narrow: v, from: from} }

func (p position) cmp(o position) int {
	switch {
	case p.hi != o.hi:
		return cmp.Compare(p.hi, o.hi)
	default:
		return cmp.Compare(p.lo, o.lo)
	}
}

// forColumn is the value appended to a version column of type typ.
func (p position) forColumn(typ string) (any, error) {
	if isWideUint(typ) {
		return new(big.Int).Or(new(big.Int).Lsh(new(big.Int).SetUint64(p.hi), 64), new(big.Int).SetUint64(p.lo)), nil
	}
	if p.narrowErr != "" {
		return nil, fmt.Errorf("version from %s does not fit the %s version column: %s", p.from, typ, p.narrowErr)
	}
	return p.narrow, nil
}

// positionFields names where the ordering value is read from: in a Debezium envelope (source block)
// and in a row unwrapped by ExtractNewRecordState (add.fields copies source fields as <prefix><field>).
type positionFields struct {
	unwrapped map[string][]string // source field → names it may have in an unwrapped row
}

// sourcePositionFields are the Debezium source fields that order change events, per connector.
var sourcePositionFields = []string{"lsn", "commit_lsn", "change_lsn", "scn", "file", "pos", "row", "ts_ms"}

// defaultPositionFields are the names ExtractNewRecordState gives with its default prefix "__".
func defaultPositionFields() positionFields {
	return positionFieldsFor(map[string]string{}, "__")
}

// positionFieldsFor maps source fields to unwrapped names: renamed ones (add.fields=lsn:my_lsn) first,
// then <prefix><field> and <prefix>source_<field>.
func positionFieldsFor(renamed map[string]string, prefix string) positionFields {
	pf := positionFields{unwrapped: map[string][]string{}}
	for _, f := range sourcePositionFields {
		var names []string
		if n, ok := renamed[f]; ok {
			names = append(names, n)
		}
		if f == "ts_ms" {
			// The envelope's own ts_ms (add.fields=ts_ms → __ts_ms) is the connector's processing time,
			// which a re-snapshot renews: only the source's commit time orders events.
			names = append(names, prefix+"source_ts_ms")
		} else {
			names = append(names, prefix+f, prefix+"source_"+f)
		}
		pf.unwrapped[f] = names
	}
	return pf
}

// sourcePosition reads the ordering value of a change event: from the envelope's source block, or from
// the fields add.fields put into an unwrapped row. ok is false when there is none; ts is true when the
// value is only the source commit time (ts_ms), which ties within a millisecond.
func (pf positionFields) sourcePosition(v any, envelope bool) (p position, ts bool, ok bool, err error) {
	get := func(f string) (any, string, bool) {
		if envelope {
			x, found := lookupPath(v, "source."+f)
			return x, "source." + f, found && x != nil
		}
		for _, n := range pf.unwrapped[f] {
			if x, found := lookup(v, n); found && x != nil {
				return x, n, true
			}
		}
		return nil, "", false
	}
	if x, from, found := get("lsn"); found {
		n, err := toUint64(x)
		if err != nil {
			return p, false, false, fmt.Errorf("%s: %v", from, err)
		}
		return pos64(n, from), false, true, nil
	}
	commit, cfrom, hasCommit := get("commit_lsn")
	change, chfrom, hasChange := get("change_lsn")
	if hasCommit || hasChange {
		return sqlServerPosition(commit, cfrom, hasCommit, change, chfrom, hasChange)
	}
	if x, from, found := get("scn"); found {
		p, err := decimalPosition(x, from)
		return p, false, err == nil, err
	}
	file, ffrom, hasFile := get("file")
	bpos, _, hasPos := get("pos")
	if hasFile && hasPos {
		row, _, _ := get("row")
		p, err := binlogPositionOf(file, bpos, row, ffrom)
		return p, false, err == nil, err
	}
	if x, from, found := get("ts_ms"); found {
		n, err := toUint64(x)
		if err != nil {
			return p, false, false, fmt.Errorf("%s: %v", from, err)
		}
		return pos64(n, from), true, true, nil
	}
	return p, false, false, nil
}

var binlogSeq = regexp.MustCompile(`(\d+)$`)

// binlogPositionOf orders MySQL/MariaDB events by binlog file sequence number, then position, then row
// in the event: 128 bits as seq(32) | pos(64) | row(32). In a UInt64 column the layout is
// seq(22) | pos(32) | row(10); a row number above 1023 is saturated (it only orders rows of one event,
// which hardly ever change one key twice), a larger file sequence or position does not fit.
func binlogPositionOf(file, pos, row any, from string) (position, error) {
	name := fmt.Sprint(file)
	m := binlogSeq.FindString(name)
	seq, err := strconv.ParseUint(m, 10, 32)
	if m == "" || err != nil {
		return position{}, fmt.Errorf("%s: binlog file name %q has no sequence number", from, name)
	}
	p, err := toUint64(pos)
	if err != nil {
		return position{}, fmt.Errorf("%s: pos: %v", from, err)
	}
	var r uint64
	if row != nil {
		if r, err = toUint64(row); err != nil {
			return position{}, fmt.Errorf("%s: row: %v", from, err)
		}
	}
	r = min(r, math.MaxUint32)
	out := position{hi: seq<<32 | p>>32, lo: p<<32 | r, from: from + "+pos"}
	switch {
	case seq >= 1<<22:
		out.narrowErr = fmt.Sprintf("binlog file sequence %d needs more than 22 bits; use a UInt128 version column", seq)
	case p >= 1<<32:
		out.narrowErr = fmt.Sprintf("binlog position %d needs more than 32 bits; use a UInt128 version column", p)
	default:
		out.narrow = seq<<42 | p<<10 | min(r, 1023)
	}
	return out, nil
}

// sqlServerPosition orders SQL Server events by commit_lsn, then change_lsn. An LSN
// "0000002a:00000758:0005" is three hex numbers (VLF 32 bits, block 32 bits, slot 16 bits): 80 bits.
// 128 bits hold the commit LSN and the block and slot of the change LSN (commit(80) | change(48));
// a UInt64 column holds the commit LSN alone while the VLF sequence number is below 65536.
func sqlServerPosition(commit any, cfrom string, hasCommit bool, change any, chfrom string, hasChange bool) (position, bool, bool, error) {
	var c, ch [2]uint64 // hi (16 bits), lo (64 bits) of an 80-bit LSN
	var err error
	if hasCommit {
		if c, err = parseSQLServerLSN(commit); err != nil {
			return position{}, false, false, fmt.Errorf("%s: %v", cfrom, err)
		}
	}
	if hasChange {
		if ch, err = parseSQLServerLSN(change); err != nil {
			return position{}, false, false, fmt.Errorf("%s: %v", chfrom, err)
		}
	}
	from := cfrom
	if !hasCommit {
		c, ch, from = ch, [2]uint64{}, chfrom
	}
	out := position{hi: c[0]<<48 | c[1]>>16, lo: c[1]<<48 | ch[1]&(1<<48-1), from: from}
	if c[0] != 0 {
		out.narrowErr = fmt.Sprintf("the LSN needs %d bits; use a UInt128 version column", 64+bitLen(c[0]))
	} else {
		out.narrow = c[1]
	}
	return out, false, true, nil
}

func bitLen(x uint64) int {
	n := 0
	for ; x != 0; x >>= 1 {
		n++
	}
	return n
}

func parseSQLServerLSN(v any) ([2]uint64, error) {
	s, ok := v.(string)
	if !ok {
		return [2]uint64{}, fmt.Errorf("LSN %v is not a string", v)
	}
	parts := strings.Split(strings.TrimSpace(s), ":")
	if len(parts) != 3 {
		return [2]uint64{}, fmt.Errorf("LSN %q is not vlf:block:slot", s)
	}
	vlf, err1 := strconv.ParseUint(parts[0], 16, 32)
	blk, err2 := strconv.ParseUint(parts[1], 16, 32)
	slot, err3 := strconv.ParseUint(parts[2], 16, 16)
	if err1 != nil || err2 != nil || err3 != nil {
		return [2]uint64{}, fmt.Errorf("LSN %q is not three hex numbers", s)
	}
	return [2]uint64{vlf >> 16, vlf<<48 | blk<<16 | slot}, nil
}

// decimalPosition reads an unsigned integer of up to 128 bits (Oracle SCNs are decimal strings and
// can exceed int64; UInt64 holds every SCN of 8 bytes).
func decimalPosition(x any, from string) (position, error) {
	if n, err := toUint64(x); err == nil {
		return pos64(n, from), nil
	}
	s := strings.TrimSpace(fmt.Sprint(x))
	b, ok := new(big.Int).SetString(s, 10)
	if !ok || b.Sign() < 0 || b.BitLen() > 128 {
		return position{}, fmt.Errorf("%s: %q is not an unsigned integer of at most 128 bits", from, s)
	}
	lo := new(big.Int).And(b, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(b, 64).Uint64()
	return position{hi: hi, lo: lo, from: from,
		narrowErr: fmt.Sprintf("%s needs %d bits; use a UInt128 version column", s, b.BitLen())}, nil
}

// parsePosition reads a configured version field (cdc.version.field): a number, a decimal string, a
// SQL Server LSN string, or a Connect Timestamp (as microseconds).
func parsePosition(x any, from string) (position, error) {
	switch v := x.(type) {
	case string:
		if strings.Count(v, ":") == 2 {
			c, err := parseSQLServerLSN(v)
			if err != nil {
				return position{}, fmt.Errorf("%s: %v", from, err)
			}
			p := position{hi: c[0], lo: c[1], narrow: c[1], from: from}
			if c[0] != 0 {
				p.narrowErr = "the LSN needs more than 64 bits; use a UInt128 version column"
			}
			return p, nil
		}
	case time.Time:
		if v.Before(time.Unix(0, 0)) {
			return position{}, fmt.Errorf("%s: %v is before 1970", from, v)
		}
		return pos64(uint64(v.UnixMicro()), from), nil
	}
	return decimalPosition(x, from)
}

// compareRowVersions orders two values of a row's own version column (numbers, strings or times).
func compareRowVersions(a, b any) (int, bool) {
	if ta, ok := a.(time.Time); ok {
		if tb, ok := b.(time.Time); ok {
			return ta.Compare(tb), true
		}
		return 0, false
	}
	if pa, err := parsePosition(a, ""); err == nil {
		if pb, err := parsePosition(b, ""); err == nil {
			return pa.cmp(pb), true
		}
	}
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return strings.Compare(sa, sb), true
		}
	}
	return 0, false
}

// next is the smallest position after p.
func (p position) next() position {
	out := p
	out.lo++
	if out.lo == 0 {
		out.hi++
	}
	if out.narrowErr == "" {
		if out.narrow == math.MaxUint64 {
			out.narrowErr = "the version after 2^64-1 needs more than 64 bits; use a UInt128 version column"
		}
		out.narrow++
	}
	return out
}

// versionAfter is the smallest version above v: a delete derived from the last live version (a
// tombstone, or a delete whose before image carries the version column) is written just above it, so
// that ReplacingMergeTree's "last insert wins" on equal versions cannot let a redelivery of that live
// event bring the row back. Any later event of the key has a strictly higher source position, so it still
// wins. Values that are not integers (dates, times) are kept as they are.
func versionAfter(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case position:
		return x.next()
	case time.Time:
		return v
	}
	p, err := parsePosition(v, "version")
	if err != nil {
		return v
	}
	if p.hi == 0 && p.lo < math.MaxUint64 {
		return p.lo + 1
	}
	n := p.next()
	return new(big.Int).Or(new(big.Int).Lsh(new(big.Int).SetUint64(n.hi), 64), new(big.Int).SetUint64(n.lo))
}
