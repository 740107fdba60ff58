package erase

import (
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
