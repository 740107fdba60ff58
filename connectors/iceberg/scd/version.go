package scd

import (
	"strings"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// compareVersion orders two source versions of a key: as icerow.CompareVersion does (numbers by
// value, SQL Server LSNs by value, normalized envelope versions as strings), and positions made of
// ':'-separated parts with the same number of parts (MySQL file:pos:row, MongoDB ts:ord) part by
// part, so that pos 1000 follows pos 758.
func compareVersion(a, b any) int {
	sa, okA := a.(string)
	sb, okB := b.(string)
	if okA && okB && strings.Contains(sa, ":") && strings.Contains(sb, ":") {
		if _, hex := icerow.HexLSNParts(sa); hex {
			if _, hex := icerow.HexLSNParts(sb); hex {
				return icerow.CompareVersion(sa, sb)
			}
		}
		pa, pb := strings.Split(sa, ":"), strings.Split(sb, ":")
		if len(pa) == len(pb) {
			for i := range pa {
				if c := icerow.CompareVersion(pa[i], pb[i]); c != 0 {
					return c
				}
			}
			return 0
		}
	}
	return icerow.CompareVersion(a, b)
}
