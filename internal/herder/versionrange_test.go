package herder

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// mavenCompare is Maven 3.9.15's DefaultArtifactVersion.compareTo (signum) of each pair, from the jar the
// JVM Connect 4.3.1 worker ships.
var mavenCompare = []struct {
	a, b string
	want int
}{
	{"1.10.1", "1.10.1.0", 0},
	{"1.10.1", "1.10", 1},
	{"1.10.1", "1.9", 1},
	{"1.10.1", "1.10.1-SNAPSHOT", 1},
	{"1.10.1", "1.10.1-rc1", 1},
	{"1.10.1", "1.10.1-alpha", 1},
	{"1.10.1", "1.10.1-beta-2", 1},
	{"1.10.1", "1.10.1-final", 0},
	{"1.10.1", "1.10.1-ga", 0},
	{"1.10.1", "1.10.1-sp1", -1},
	{"1.10.1", "2.0", -1},
	{"1.10.1", "2", -1},
	{"1.10.1", "2.0.0-m1", -1},
	{"1.10.1", "1.10.01", 0},
	{"1.10.1", "4.3.1", -1},
	{"1.10.1", "1.0.0", 1},
	{"1.10.1", "1-foo", 1},
	{"1.10.1", "1.10.1-foo", -1},
	{"1.10.1", "1.10.1-cr1", 1},
	{"1.10.1", "1.10.2-alpha1", -1},
	{"1.10.1.0", "1.10", 1},
	{"1.10.1.0", "1.9", 1},
	{"1.10.1.0", "1.10.1-SNAPSHOT", 1},
	{"1.10.1.0", "1.10.1-rc1", 1},
	{"1.10.1.0", "1.10.1-alpha", 1},
	{"1.10.1.0", "1.10.1-beta-2", 1},
	{"1.10.1.0", "1.10.1-final", 0},
	{"1.10.1.0", "1.10.1-ga", 0},
	{"1.10.1.0", "1.10.1-sp1", -1},
	{"1.10.1.0", "2.0", -1},
	{"1.10.1.0", "2", -1},
	{"1.10.1.0", "2.0.0-m1", -1},
	{"1.10.1.0", "1.10.01", 0},
	{"1.10.1.0", "4.3.1", -1},
	{"1.10.1.0", "1.0.0", 1},
	{"1.10.1.0", "1-foo", 1},
	{"1.10.1.0", "1.10.1-foo", -1},
	{"1.10.1.0", "1.10.1-cr1", 1},
	{"1.10.1.0", "1.10.2-alpha1", -1},
	{"1.10", "1.9", 1},
	{"1.10", "1.10.1-SNAPSHOT", -1},
	{"1.10", "1.10.1-rc1", -1},
	{"1.10", "1.10.1-alpha", -1},
	{"1.10", "1.10.1-beta-2", -1},
	{"1.10", "1.10.1-final", -1},
	{"1.10", "1.10.1-ga", -1},
	{"1.10", "1.10.1-sp1", -1},
	{"1.10", "2.0", -1},
	{"1.10", "2", -1},
	{"1.10", "2.0.0-m1", -1},
	{"1.10", "1.10.01", -1},
	{"1.10", "4.3.1", -1},
	{"1.10", "1.0.0", 1},
	{"1.10", "1-foo", 1},
	{"1.10", "1.10.1-foo", -1},
	{"1.10", "1.10.1-cr1", -1},
	{"1.10", "1.10.2-alpha1", -1},
	{"1.9", "1.10.1-SNAPSHOT", -1},
	{"1.9", "1.10.1-rc1", -1},
	{"1.9", "1.10.1-alpha", -1},
	{"1.9", "1.10.1-beta-2", -1},
	{"1.9", "1.10.1-final", -1},
	{"1.9", "1.10.1-ga", -1},
	{"1.9", "1.10.1-sp1", -1},
	{"1.9", "2.0", -1},
	{"1.9", "2", -1},
	{"1.9", "2.0.0-m1", -1},
	{"1.9", "1.10.01", -1},
	{"1.9", "4.3.1", -1},
	{"1.9", "1.0.0", 1},
	{"1.9", "1-foo", 1},
	{"1.9", "1.10.1-foo", -1},
	{"1.9", "1.10.1-cr1", -1},
	{"1.9", "1.10.2-alpha1", -1},
	{"1.10.1-SNAPSHOT", "1.10.1-rc1", 1},
	{"1.10.1-SNAPSHOT", "1.10.1-alpha", 1},
	{"1.10.1-SNAPSHOT", "1.10.1-beta-2", 1},
	{"1.10.1-SNAPSHOT", "1.10.1-final", -1},
	{"1.10.1-SNAPSHOT", "1.10.1-ga", -1},
	{"1.10.1-SNAPSHOT", "1.10.1-sp1", -1},
	{"1.10.1-SNAPSHOT", "2.0", -1},
	{"1.10.1-SNAPSHOT", "2", -1},
	{"1.10.1-SNAPSHOT", "2.0.0-m1", -1},
	{"1.10.1-SNAPSHOT", "1.10.01", -1},
	{"1.10.1-SNAPSHOT", "4.3.1", -1},
	{"1.10.1-SNAPSHOT", "1.0.0", 1},
	{"1.10.1-SNAPSHOT", "1-foo", 1},
	{"1.10.1-SNAPSHOT", "1.10.1-foo", -1},
	{"1.10.1-SNAPSHOT", "1.10.1-cr1", 1},
	{"1.10.1-SNAPSHOT", "1.10.2-alpha1", -1},
	{"1.10.1-rc1", "1.10.1-alpha", 1},
	{"1.10.1-rc1", "1.10.1-beta-2", 1},
	{"1.10.1-rc1", "1.10.1-final", -1},
	{"1.10.1-rc1", "1.10.1-ga", -1},
	{"1.10.1-rc1", "1.10.1-sp1", -1},
	{"1.10.1-rc1", "2.0", -1},
	{"1.10.1-rc1", "2", -1},
	{"1.10.1-rc1", "2.0.0-m1", -1},
	{"1.10.1-rc1", "1.10.01", -1},
	{"1.10.1-rc1", "4.3.1", -1},
	{"1.10.1-rc1", "1.0.0", 1},
	{"1.10.1-rc1", "1-foo", 1},
	{"1.10.1-rc1", "1.10.1-foo", -1},
	{"1.10.1-rc1", "1.10.1-cr1", 0},
	{"1.10.1-rc1", "1.10.2-alpha1", -1},
	{"1.10.1-alpha", "1.10.1-beta-2", -1},
	{"1.10.1-alpha", "1.10.1-final", -1},
	{"1.10.1-alpha", "1.10.1-ga", -1},
	{"1.10.1-alpha", "1.10.1-sp1", -1},
	{"1.10.1-alpha", "2.0", -1},
	{"1.10.1-alpha", "2", -1},
	{"1.10.1-alpha", "2.0.0-m1", -1},
	{"1.10.1-alpha", "1.10.01", -1},
	{"1.10.1-alpha", "4.3.1", -1},
	{"1.10.1-alpha", "1.0.0", 1},
	{"1.10.1-alpha", "1-foo", 1},
	{"1.10.1-alpha", "1.10.1-foo", -1},
	{"1.10.1-alpha", "1.10.1-cr1", -1},
	{"1.10.1-alpha", "1.10.2-alpha1", -1},
	{"1.10.1-beta-2", "1.10.1-final", -1},
	{"1.10.1-beta-2", "1.10.1-ga", -1},
	{"1.10.1-beta-2", "1.10.1-sp1", -1},
	{"1.10.1-beta-2", "2.0", -1},
	{"1.10.1-beta-2", "2", -1},
	{"1.10.1-beta-2", "2.0.0-m1", -1},
	{"1.10.1-beta-2", "1.10.01", -1},
	{"1.10.1-beta-2", "4.3.1", -1},
	{"1.10.1-beta-2", "1.0.0", 1},
	{"1.10.1-beta-2", "1-foo", 1},
	{"1.10.1-beta-2", "1.10.1-foo", -1},
	{"1.10.1-beta-2", "1.10.1-cr1", -1},
	{"1.10.1-beta-2", "1.10.2-alpha1", -1},
	{"1.10.1-final", "1.10.1-ga", 0},
	{"1.10.1-final", "1.10.1-sp1", -1},
	{"1.10.1-final", "2.0", -1},
	{"1.10.1-final", "2", -1},
	{"1.10.1-final", "2.0.0-m1", -1},
	{"1.10.1-final", "1.10.01", 0},
	{"1.10.1-final", "4.3.1", -1},
	{"1.10.1-final", "1.0.0", 1},
	{"1.10.1-final", "1-foo", 1},
	{"1.10.1-final", "1.10.1-foo", -1},
	{"1.10.1-final", "1.10.1-cr1", 1},
	{"1.10.1-final", "1.10.2-alpha1", -1},
	{"1.10.1-ga", "1.10.1-sp1", -1},
	{"1.10.1-ga", "2.0", -1},
	{"1.10.1-ga", "2", -1},
	{"1.10.1-ga", "2.0.0-m1", -1},
	{"1.10.1-ga", "1.10.01", 0},
	{"1.10.1-ga", "4.3.1", -1},
	{"1.10.1-ga", "1.0.0", 1},
	{"1.10.1-ga", "1-foo", 1},
	{"1.10.1-ga", "1.10.1-foo", -1},
	{"1.10.1-ga", "1.10.1-cr1", 1},
	{"1.10.1-ga", "1.10.2-alpha1", -1},
	{"1.10.1-sp1", "2.0", -1},
	{"1.10.1-sp1", "2", -1},
	{"1.10.1-sp1", "2.0.0-m1", -1},
	{"1.10.1-sp1", "1.10.01", 1},
	{"1.10.1-sp1", "4.3.1", -1},
	{"1.10.1-sp1", "1.0.0", 1},
	{"1.10.1-sp1", "1-foo", 1},
	{"1.10.1-sp1", "1.10.1-foo", -1},
	{"1.10.1-sp1", "1.10.1-cr1", 1},
	{"1.10.1-sp1", "1.10.2-alpha1", -1},
	{"2.0", "2", 0},
	{"2.0", "2.0.0-m1", 1},
	{"2.0", "1.10.01", 1},
	{"2.0", "4.3.1", -1},
	{"2.0", "1.0.0", 1},
	{"2.0", "1-foo", 1},
	{"2.0", "1.10.1-foo", 1},
	{"2.0", "1.10.1-cr1", 1},
	{"2.0", "1.10.2-alpha1", 1},
	{"2", "2.0.0-m1", 1},
	{"2", "1.10.01", 1},
	{"2", "4.3.1", -1},
	{"2", "1.0.0", 1},
	{"2", "1-foo", 1},
	{"2", "1.10.1-foo", 1},
	{"2", "1.10.1-cr1", 1},
	{"2", "1.10.2-alpha1", 1},
	{"2.0.0-m1", "1.10.01", 1},
	{"2.0.0-m1", "4.3.1", -1},
	{"2.0.0-m1", "1.0.0", 1},
	{"2.0.0-m1", "1-foo", 1},
	{"2.0.0-m1", "1.10.1-foo", 1},
	{"2.0.0-m1", "1.10.1-cr1", 1},
	{"2.0.0-m1", "1.10.2-alpha1", 1},
	{"1.10.01", "4.3.1", -1},
	{"1.10.01", "1.0.0", 1},
	{"1.10.01", "1-foo", 1},
	{"1.10.01", "1.10.1-foo", -1},
	{"1.10.01", "1.10.1-cr1", 1},
	{"1.10.01", "1.10.2-alpha1", -1},
	{"4.3.1", "1.0.0", 1},
	{"4.3.1", "1-foo", 1},
	{"4.3.1", "1.10.1-foo", 1},
	{"4.3.1", "1.10.1-cr1", 1},
	{"4.3.1", "1.10.2-alpha1", 1},
	{"1.0.0", "1-foo", -1},
	{"1.0.0", "1.10.1-foo", -1},
	{"1.0.0", "1.10.1-cr1", -1},
	{"1.0.0", "1.10.2-alpha1", -1},
	{"1-foo", "1.10.1-foo", -1},
	{"1-foo", "1.10.1-cr1", -1},
	{"1-foo", "1.10.2-alpha1", -1},
	{"1.10.1-foo", "1.10.1-cr1", 1},
	{"1.10.1-foo", "1.10.2-alpha1", -1},
	{"1.10.1-cr1", "1.10.2-alpha1", -1},
	// a qualifier after '.' reads as after '-' (Debezium's 2.6.0.CR1, Confluent's 7.6.0.ccs)
	{"2.6.0.CR1", "2.6.0-CR1", 0},
	{"2.6.0.CR1", "2.6.0.Final", -1},
	{"2.6.0.Beta1", "2.6.0.CR1", -1},
	{"2.5.0.Final", "2.5.0", 0},
	{"7.6.0.ccs", "7.6.0-ccs", 0},
	{"1.0.0.M1", "1.0.0-SNAPSHOT", -1},
	{"1.0.0-1", "1.0.0.SNAPSHOT", 1},
	{"1.0.0.alpha1", "1.0.0a1", 0},
	{"1x", "1.x", 0},
	// a list against nothing compares all its items (MNG-6964)
	{"-.1", "", 1},
	{"1-0.1", "1", 1},
}

func TestMavenVersionCompare(t *testing.T) {
	for _, c := range mavenCompare {
		got := parseMavenVersion(c.a).compare(parseMavenVersion(c.b))
		require.Equal(t, c.want, sign(got), "%s vs %s", c.a, c.b)
		require.Equal(t, -c.want, sign(parseMavenVersion(c.b).compare(parseMavenVersion(c.a))), "%s vs %s", c.b, c.a)
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// TestConnectorVersionRequirement: PluginUtils.connectorVersionRequirement over Maven 3.9.15's VersionRange:
// the range printed and whether it holds 1.10.1, or the exception's message, as the JVM gives them.
func TestConnectorVersionRequirement(t *testing.T) {
	for _, c := range []struct {
		spec, printed string
		holds         bool
		err           string
	}{
		{spec: "1.10.1", printed: "[1.10.1,1.10.1]", holds: true},
		{spec: " 1.10.1 ", printed: "[1.10.1,1.10.1]", holds: true},
		{spec: "[1.0,2.0)", printed: "[1.0,2.0)", holds: true},
		{spec: "[1.0, 2.0)", printed: "[1.0,2.0)", holds: true},
		{spec: "[1.10.1]", printed: "[1.10.1,1.10.1]", holds: true},
		{spec: "2.0", printed: "[2.0,2.0]"},
		{spec: "[2.0,)", printed: "[2.0,)"},
		{spec: "(,1.10.1)", printed: "(,1.10.1)"},
		{spec: "1.10", printed: "[1.10,1.10]"},
		{spec: "1.10.1.0", printed: "[1.10.1.0,1.10.1.0]", holds: true},
		{spec: "1.10.1-SNAPSHOT", printed: "[1.10.1-SNAPSHOT,1.10.1-SNAPSHOT]"},
		{spec: "[1.0,1.5),(1.5,)", printed: "[1.0,1.5),(1.5,)", holds: true},
		{spec: "[1.10.1],[2.0]", printed: "[1.10.1,1.10.1],[2.0,2.0]", holds: true},
		{spec: "[1.0,1.5],[1.5,2.0]", printed: "[1.0,1.5],[1.5,2.0]", holds: true},
		{spec: "(,)", printed: "(,)", holds: true},
		{spec: "[,]", printed: "[,]", holds: true},
		{spec: "LATEST", printed: "[LATEST,LATEST]"},
		{spec: "[1.0", err: "Unbounded range: [1.0"},
		{spec: "1.0]", err: "Only fully-qualified sets allowed in multiple set scenario: [1.0]]"},
		{spec: "[1.0,1.0)", err: "Range defies version ordering: [1.0,1.0)"},
		{spec: "[2.0,1.0]", err: "Range defies version ordering: [2.0,1.0]"},
		{spec: "[1.0,1.5],[1.4,2.0]", err: "Ranges overlap: [1.0,1.5],[1.4,2.0]"},
		{spec: "(1.0]", err: "Single version must be surrounded by []: (1.0]"},
		{spec: "[1.0,1.5),1.6", err: "Only fully-qualified sets allowed in multiple set scenario: [1.0,1.5),1.6"},
	} {
		r, err := connectorVersionRequirement(c.spec, true)
		if c.err != "" {
			require.EqualError(t, err, c.err, c.spec)
			continue
		}
		require.NoError(t, err, c.spec)
		require.Equal(t, c.printed, r.String(), c.spec)
		require.Equal(t, c.holds, r.contains("1.10.1"), c.spec)
	}
	for _, none := range []struct {
		spec string
		set  bool
	}{{"", false}, {"latest", true}} {
		r, err := connectorVersionRequirement(none.spec, none.set)
		require.NoError(t, err)
		require.Nil(t, r)
	}
}
