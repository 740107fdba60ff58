package herder

import (
	"fmt"
	"math/big"
	"strings"
)

// versionRange is Maven's VersionRange as KIP-891 pins plugin versions with it (`connector.plugin.version`):
// "1.10.1" (a hard requirement once connectorVersionRequirement encloses it), "[1.0,2.0)", "(,1.10.1]",
// "[1.0,1.5),(1.5,)".
type versionRange struct {
	recommended  *mavenVersion // a soft requirement: a bare version
	restrictions []versionRestriction
}

type versionRestriction struct {
	lower, upper                   *mavenVersion // nil: unbounded
	lowerInclusive, upperInclusive bool
}

// connectorVersionRequirement is PluginUtils.connectorVersionRequirement: nil for no pin ("latest" or
// unset); a bare version is enclosed in [] and so required exactly. Errors carry Maven's message.
func connectorVersionRequirement(spec string, set bool) (*versionRange, error) {
	if !set || spec == "latest" {
		return nil, nil
	}
	spec = strings.TrimSpace(spec)
	r, err := parseVersionRange(spec)
	if err != nil {
		return nil, err
	}
	if r.hasRestrictions() {
		return r, nil
	}
	return parseVersionRange("[" + spec + "]")
}

// parseVersionRange is VersionRange.createFromVersionSpec.
func parseVersionRange(spec string) (*versionRange, error) {
	r := &versionRange{}
	process := spec
	var upper *mavenVersion
	for strings.HasPrefix(process, "[") || strings.HasPrefix(process, "(") {
		i1, i2 := strings.Index(process, ")"), strings.Index(process, "]")
		index := i2
		if (i2 < 0 || i1 < i2) && i1 >= 0 {
			index = i1
		}
		if index < 0 {
			return nil, fmt.Errorf("Unbounded range: %s", spec)
		}
		res, err := parseRestriction(process[:index+1])
		if err != nil {
			return nil, err
		}
		if upper != nil && (res.lower == nil || res.lower.compare(upper) < 0) {
			return nil, fmt.Errorf("Ranges overlap: %s", spec)
		}
		r.restrictions = append(r.restrictions, res)
		upper = res.upper
		process = strings.TrimSpace(process[index+1:])
		if strings.HasPrefix(process, ",") {
			process = strings.TrimSpace(process[1:])
		}
	}
	if process != "" {
		if len(r.restrictions) > 0 {
			return nil, fmt.Errorf("Only fully-qualified sets allowed in multiple set scenario: %s", spec)
		}
		r.recommended = parseMavenVersion(process)
		r.restrictions = append(r.restrictions, versionRestriction{})
	}
	return r, nil
}

func parseRestriction(spec string) (versionRestriction, error) {
	res := versionRestriction{lowerInclusive: strings.HasPrefix(spec, "["), upperInclusive: strings.HasSuffix(spec, "]")}
	process := strings.TrimSpace(spec[1 : len(spec)-1])
	lo, hi, comma := strings.Cut(process, ",")
	if !comma {
		if !res.lowerInclusive || !res.upperInclusive {
			return res, fmt.Errorf("Single version must be surrounded by []: %s", spec)
		}
		v := parseMavenVersion(process)
		res.lower, res.upper = v, v
		return res, nil
	}
	if lo = strings.TrimSpace(lo); lo != "" {
		res.lower = parseMavenVersion(lo)
	}
	if hi = strings.TrimSpace(hi); hi != "" {
		res.upper = parseMavenVersion(hi)
	}
	if res.lower != nil && res.upper != nil {
		if c := res.upper.compare(res.lower); c < 0 || (c == 0 && (!res.lowerInclusive || !res.upperInclusive)) {
			return res, fmt.Errorf("Range defies version ordering: %s", spec)
		}
	}
	return res, nil
}

func (r *versionRange) hasRestrictions() bool {
	return len(r.restrictions) > 0 && r.recommended == nil
}

// contains is VersionRange.containsVersion.
func (r *versionRange) contains(version string) bool {
	v := parseMavenVersion(version)
	for _, res := range r.restrictions {
		if res.contains(v) {
			return true
		}
	}
	return false
}

func (res versionRestriction) contains(v *mavenVersion) bool {
	if res.lower != nil {
		if c := res.lower.compare(v); c > 0 || (c == 0 && !res.lowerInclusive) {
			return false
		}
	}
	if res.upper != nil {
		if c := res.upper.compare(v); c < 0 || (c == 0 && !res.upperInclusive) {
			return false
		}
	}
	return true
}

// String is VersionRange.toString, which the JVM's messages print.
func (r *versionRange) String() string {
	if r.recommended != nil {
		return r.recommended.raw
	}
	parts := make([]string, len(r.restrictions))
	for i, res := range r.restrictions {
		var b strings.Builder
		b.WriteByte("(["[btoi(res.lowerInclusive)])
		if res.lower != nil {
			b.WriteString(res.lower.raw)
		}
		b.WriteByte(',')
		if res.upper != nil {
			b.WriteString(res.upper.raw)
		}
		b.WriteByte(")]"[btoi(res.upperInclusive)])
		parts[i] = b.String()
	}
	return strings.Join(parts, ",")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mavenVersion is Maven's ComparableVersion: items separated by '.', '-' and digit/letter transitions, numbers
// compared as numbers, the known qualifiers ordered alpha < beta < milestone < rc < snapshot < release < sp
// (then unknown ones, alphabetically), trailing zeros and release qualifiers ignored (1.10.1 = 1.10.1.0).
type mavenVersion struct {
	raw   string
	items versionList
}

// versionItem is one of *big.Int (a number), string (a qualifier) or versionList (after '-' or a transition).
type versionItem any

type versionList []versionItem

func parseMavenVersion(raw string) *mavenVersion {
	s := strings.ToLower(raw)
	root := &versionList{}
	list := root
	stack := []*versionList{root}
	isDigit := false
	start := 0
	item := func(buf string, digit bool) versionItem {
		if digit {
			n, _ := new(big.Int).SetString(buf, 10)
			return n
		}
		return qualifier(buf, false)
	}
	sub := func() {
		nl := &versionList{}
		*list = append(*list, nl)
		list = nl
		stack = append(stack, nl)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if i == start {
				*list = append(*list, big.NewInt(0))
			} else {
				*list = append(*list, item(s[start:i], isDigit))
			}
			start = i + 1
		case c == '-':
			if i == start {
				*list = append(*list, big.NewInt(0))
			} else {
				*list = append(*list, item(s[start:i], isDigit))
			}
			start = i + 1
			sub()
		case c >= '0' && c <= '9':
			if !isDigit && i > start {
				if len(*list) > 0 { // Maven 3.9 reads .X like -X for a qualifier X: 1.0.0.X1 < 1.0.0-X2
					sub()
				}
				*list = append(*list, qualifier(s[start:i], true))
				start = i
				sub()
			}
			isDigit = true
		default:
			if isDigit && i > start {
				*list = append(*list, item(s[start:i], true))
				start = i
				sub()
			}
			isDigit = false
		}
	}
	if len(s) > start {
		if !isDigit && len(*list) > 0 {
			sub()
		}
		*list = append(*list, item(s[start:], isDigit))
	}
	for i := len(stack) - 1; i >= 0; i-- {
		stack[i].normalize()
	}
	return &mavenVersion{raw: raw, items: flatten(root)}
}

// flatten turns the *versionList pointers used while parsing into values.
func flatten(l *versionList) versionList {
	out := make(versionList, len(*l))
	for i, it := range *l {
		if sub, ok := it.(*versionList); ok {
			out[i] = flatten(sub)
		} else {
			out[i] = it
		}
	}
	return out
}

// normalize drops trailing items that compare equal to nothing (0, a release qualifier, an empty list).
func (l *versionList) normalize() {
	for i := len(*l) - 1; i >= 0; i-- {
		it := (*l)[i]
		if isNullItem(it) {
			*l = append((*l)[:i], (*l)[i+1:]...)
		} else if _, isList := it.(*versionList); !isList {
			break
		}
	}
}

func isNullItem(it versionItem) bool {
	switch v := it.(type) {
	case *big.Int:
		return v.Sign() == 0
	case string:
		return comparableQualifier(v) == releaseIndex
	case *versionList:
		return len(*v) == 0
	case versionList:
		return len(v) == 0
	}
	return false
}

var qualifiers = []string{"alpha", "beta", "milestone", "rc", "snapshot", "", "sp"}

const releaseIndex = "5"

func qualifier(s string, followedByDigit bool) string {
	if followedByDigit && len(s) == 1 {
		switch s {
		case "a":
			return "alpha"
		case "b":
			return "beta"
		case "m":
			return "milestone"
		}
	}
	switch s {
	case "ga", "final", "release":
		return ""
	case "cr":
		return "rc"
	}
	return s
}

func comparableQualifier(q string) string {
	for i, k := range qualifiers {
		if k == q {
			return fmt.Sprint(i)
		}
	}
	return fmt.Sprintf("%d-%s", len(qualifiers), q)
}

func (v *mavenVersion) compare(o *mavenVersion) int { return compareItem(v.items, o.items) }

// compareItem compares a with b, either of which may be nil (no item: what a shorter version has).
func compareItem(a, b versionItem) int {
	switch x := a.(type) {
	case *big.Int:
		switch y := b.(type) {
		case nil:
			return x.Sign()
		case *big.Int:
			return x.Cmp(y)
		default: // a number is greater than a qualifier or a list
			return 1
		}
	case string:
		switch y := b.(type) {
		case nil:
			return strings.Compare(comparableQualifier(x), releaseIndex)
		case string:
			return strings.Compare(comparableQualifier(x), comparableQualifier(y))
		default:
			return -1
		}
	case versionList:
		switch y := b.(type) {
		case nil: // every item, not just the first (MNG-6964)
			for _, it := range x {
				if c := compareItem(it, nil); c != 0 {
					return c
				}
			}
			return 0
		case *big.Int:
			return -1
		case string:
			return 1
		case versionList:
			for i := 0; i < max(len(x), len(y)); i++ {
				var l, r versionItem
				if i < len(x) {
					l = x[i]
				}
				if i < len(y) {
					r = y[i]
				}
				var c int
				if l == nil {
					if r != nil {
						c = -compareItem(r, nil)
					}
				} else {
					c = compareItem(l, r)
				}
				if c != 0 {
					return c
				}
			}
			return 0
		}
	case nil:
		if b == nil {
			return 0
		}
		return -compareItem(b, nil)
	}
	return 0
}
