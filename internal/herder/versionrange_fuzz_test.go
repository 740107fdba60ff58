package herder

import "testing"

// FuzzParseVersionRange: no panic, a parsed range without empty bounds prints a spec that parses to the same
// range, and each restriction holds its bounds exactly when they are inclusive.
func FuzzParseVersionRange(f *testing.F) {
	for _, s := range []string{"1.10.1", " 1.10.1 ", "[1.0,2.0)", "[1.0, 2.0)", "[1.10.1]", "(,1.10.1)", "[2.0,)",
		"[1.0,1.5),(1.5,)", "[1.10.1],[2.0]", "[1.0,1.5],[1.5,2.0]", "(,)", "[,]", "LATEST", "[1.0", "1.0]",
		"[1.0,1.0)", "[2.0,1.0]", "[1.0,1.5],[1.4,2.0]", "(1.0]", "[1.0,1.5),1.6", "", "[", "(", "[]", "()", "[,",
		"[1,2,3]", "[[1,2]", "[1.0-SNAPSHOT,1.0]", "(1.0-alpha1,1.0-beta-2)", "[1.0.0.0.0,1]", "[1-sp,1-foo]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		r, err := parseVersionRange(spec)
		if err != nil {
			return
		}
		printable := true // an empty bound prints as none, as in the JVM
		for _, res := range r.restrictions {
			printable = printable && (res.lower == nil || res.lower.raw != "") && (res.upper == nil || res.upper.raw != "")
		}
		if again, err := parseVersionRange(r.String()); printable && (err != nil || again.String() != r.String()) {
			t.Fatalf("%q prints as %q, which parses to %v, %v", spec, r.String(), again, err)
		}
		for _, res := range r.restrictions {
			if res.lower != nil && res.contains(parseMavenVersion(res.lower.raw)) != res.lowerInclusive {
				t.Fatalf("%q: restriction %v holds its lower bound: %v", spec, res, !res.lowerInclusive)
			}
			if res.upper != nil && res.contains(parseMavenVersion(res.upper.raw)) != res.upperInclusive {
				t.Fatalf("%q: restriction %v holds its upper bound: %v", spec, res, !res.upperInclusive)
			}
		}
	})
}

// FuzzMavenVersionCompare: no panic, and compare is reflexive and antisymmetric over any three versions. It is
// not transitive, in the JVM either: 0 < AA < 0A0000 < 0.
func FuzzMavenVersionCompare(f *testing.F) {
	for _, s := range []string{"1.10.1", "1.10.1-SNAPSHOT", "1.10.1-beta-2", "1.10.1-sp1", "2.0.0-m1", "1.10.01",
		"1-foo", "2.6.0.CR1", "7.6.0.ccs", "1.0.0a1", "", ".", "-", "..", "--", "1-", "-1", "1..2", "1--2", "a1", "1a",
		"a-1", "1.0.0-", "alpha", "1-ALPHA", "1-a1", "1-b", "1-m2", "1-cr", "1-ga", "1-final", "1-release", "1-sp",
		"1.0x", "x.0", "000", "99999999999999999999999", "1-99999999999999999999999-1", "1.-1", "1-.1", "1-1.foo-bar.2"} {
		f.Add(s, "1.10.1-cr1", "1.10.2-alpha1")
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		vs := []*mavenVersion{parseMavenVersion(a), parseMavenVersion(b), parseMavenVersion(c)}
		for i, x := range vs {
			for _, y := range vs[i:] {
				if xy, yx := sign(x.compare(y)), sign(y.compare(x)); xy != -yx || (x == y && xy != 0) {
					t.Fatalf("compare(%q, %q) = %d but compare(%q, %q) = %d", x.raw, y.raw, xy, y.raw, x.raw, yx)
				}
			}
		}
	})
}
