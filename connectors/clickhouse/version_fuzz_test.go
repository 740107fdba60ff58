package clickhouse

import (
	"cmp"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// Source positions come from records (untrusted input): parsing never panics, and where it succeeds the
// order is the order of the numbers the fields spell.
func FuzzSourcePositions(f *testing.F) {
	f.Add("00000027:00000758:0005", "0000002a:00000010:0001", "mysql-bin.999999", uint64(9000), "mysql-bin.1000000", uint64(4), "18446744073709551616")
	f.Add("ffffffff:ffffffff:ffff", "0:0:0", "x", uint64(0), "binlog.0", ^uint64(0), "-1")
	f.Fuzz(func(t *testing.T, lsnA, lsnB, fileA string, posA uint64, fileB string, posB uint64, scn string) {
		a, errA := parseSQLServerLSN(lsnA)
		b, errB := parseSQLServerLSN(lsnB)
		if errA == nil && errB == nil {
			pa, _, _, _ := sqlServerPosition(lsnA, "a", true, nil, "", false)
			pb, _, _, _ := sqlServerPosition(lsnB, "b", true, nil, "", false)
			want := new(big.Int).Lsh(new(big.Int).SetUint64(a[0]), 64)
			want.Or(want, new(big.Int).SetUint64(a[1]))
			other := new(big.Int).Lsh(new(big.Int).SetUint64(b[0]), 64)
			other.Or(other, new(big.Int).SetUint64(b[1]))
			if got := pa.cmp(pb); got != want.Cmp(other) {
				t.Fatalf("%s vs %s: cmp %d, by value %d", lsnA, lsnB, got, want.Cmp(other))
			}
		}
		ba, errA := binlogPositionOf(fileA, posA, nil, "a")
		bb, errB := binlogPositionOf(fileB, posB, nil, "b")
		if errA == nil && errB == nil {
			seq := func(name string) uint64 {
				n, _ := strconv.ParseUint(binlogSeq.FindString(name), 10, 32)
				return n
			}
			want := 0
			switch sa, sb := seq(fileA), seq(fileB); {
			case sa != sb:
				want = cmp.Compare(sa, sb)
			default:
				want = cmp.Compare(posA, posB)
			}
			if got := ba.cmp(bb); got != want {
				t.Fatalf("%s:%d vs %s:%d: cmp %d, want %d", fileA, posA, fileB, posB, got, want)
			}
			if ba.narrowErr == "" && bb.narrowErr == "" && cmp.Compare(ba.narrow, bb.narrow) != want {
				t.Fatalf("narrow layout reorders %s:%d and %s:%d", fileA, posA, fileB, posB)
			}
		}
		if p, err := decimalPosition(scn, "scn"); err == nil {
			n, ok := new(big.Int).SetString(strings.TrimSpace(scn), 10)
			if !ok {
				t.Fatalf("%q accepted but not a number", scn)
			}
			got := new(big.Int).Lsh(new(big.Int).SetUint64(p.hi), 64)
			got.Or(got, new(big.Int).SetUint64(p.lo))
			if got.Cmp(n) != 0 {
				t.Fatalf("%q read as %s", scn, got)
			}
			if v, err := p.forColumn("UInt64"); err == nil && fmt.Sprint(v) != n.String() {
				t.Fatalf("%q written to UInt64 as %v", scn, v)
			}
		}
		_ = versionAfter(scn)
		_, _ = parsePosition(lsnA, "x")
	})
}
