package erase

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseKeys(t *testing.T) {
	k, err := ParseKey(" s1-k1 ", []string{"id"})
	require.NoError(t, err)
	require.Equal(t, "s1-k1", k.Text([]string{"id"}))
	_, err = ParseKey("x", []string{"a", "b"})
	require.ErrorContains(t, err, "JSON object")
	k, err = ParseKey(`{"a": 7, "b": "x"}`, []string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, "a=7,b=x", k.Text([]string{"a", "b"}))
	_, err = ParseKey(`{"a": 7}`, []string{"a", "b"})
	require.ErrorContains(t, err, "no value for key column b")
	ks, err := ReadKeys(strings.NewReader("# erased on request\nk1\n\nk2\n"), []string{"id"})
	require.NoError(t, err)
	require.Len(t, ks, 2)
}

// A line the key file reader cannot hold (over 1 MiB) is reported with its number, as a bad key is.
func TestReadKeysNamesAnOverlongLine(t *testing.T) {
	in := "k1\n# note\n" + strings.Repeat("x", 2<<20) + "\nk2\n"
	_, err := ReadKeys(strings.NewReader(in), []string{"id"})
	require.ErrorIs(t, err, bufio.ErrTooLong)
	require.ErrorContains(t, err, "line 3")
}

// A key that could match no row fails loudly rather than erase nothing: a nested value, a null, a column
// given twice, or text after the object. Scalars read as before.
func TestParseKeyRefusesWhatMatchesNothing(t *testing.T) {
	cols := []string{"a", "b"}
	for _, s := range []string{`{"a": 7, "b": {"x": 1}}`, `{"a": 7, "b": [1]}`, `{"a": 7, "b": null}`,
		`{"a": 7, "b": 1, "a": 8}`, `{"a": 7, "b": 1} junk`, `{"a": 7, "b": 1}{}`, `{"a": 7, "b": 1`, `{"a" 7}`} {
		_, err := ParseKey(s, cols)
		require.Error(t, err, s)
	}
	for s, want := range map[string]string{`{"a": 7, "b": "x"}`: "a=7,b=x", `{"b": 1.50, "a": true}`: "a=true,b=1.50",
		` {"a":"","b":-0} `: "a=,b=-0"} {
		k, err := ParseKey(s, cols)
		require.NoError(t, err, s)
		require.Equal(t, want, k.Text(cols), s)
	}
}

func TestMatcher(t *testing.T) {
	m := newMatcher("s1-k1")
	require.True(t, m.in("s1-k1"))
	require.True(t, m.in(`{"id":"s1-k1","name":"x"}`))
	require.False(t, m.in("s1-k10"))
	require.False(t, m.in(`{"id":"s1-k10"}`))
	n := newMatcher("42")
	require.True(t, n.in(`{"id":42}`))
	require.True(t, n.in("42"))
	require.False(t, n.in(`{"id":420}`))
	require.False(t, n.in("1420"))
}

func TestClickHouseWhere(t *testing.T) {
	types := map[string]string{"id": "String", "n": "Int64"}
	w, err := chWhere(types, []string{"n", "id"}, []Key{{Values: map[string]string{"n": "5", "id": "a'b"}}})
	require.NoError(t, err)
	require.Equal(t, "(`n`, `id`) IN ((5, 'a\\'b'))", w)
	_, err = chWhere(types, []string{"n"}, []Key{{Values: map[string]string{"n": "5 OR 1"}}})
	require.ErrorContains(t, err, "not a number")
}
