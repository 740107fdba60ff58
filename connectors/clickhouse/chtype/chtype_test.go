package chtype

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		name string
		args []string
	}{
		{"Int32", "Int32", nil},
		{"Map(String, Array(Nullable(Decimal(18, 4))))", "Map", []string{"String", "Array(Nullable(Decimal(18, 4)))"}},
		{"Enum8('a' = 1, 'b,(' = 2)", "Enum8", []string{"'a' = 1", "'b,(' = 2"}},
		{"Tuple(`a,b` Int32, \"c)\" String)", "Tuple", []string{"`a,b` Int32", "\"c)\" String"}},
		{"DateTime64(3, 'Europe/Berlin')", "DateTime64", []string{"3", "'Europe/Berlin'"}},
	} {
		name, args, err := Split(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.name, name, c.in)
		require.Equal(t, c.args, args, c.in)
	}
	_, _, err := Split("Array(Int32")
	require.EqualError(t, err, `bad type "Array(Int32"`)
}

// TestParse: the wrappers are looked through and the arguments of nested and quoted types are split at
// their top level only.
func TestParse(t *testing.T) {
	for _, c := range []struct {
		in       string
		base     string
		name     string
		args     []string
		nullable bool
	}{
		{"String", "String", "String", nil, false},
		{"Tuple(a String, b Array(Decimal(18, 4)))", "Tuple(a String, b Array(Decimal(18, 4)))", "Tuple",
			[]string{"a String", "b Array(Decimal(18, 4))"}, false},
		{"Nullable(DateTime64(3, 'UTC'))", "DateTime64(3, 'UTC')", "DateTime64", []string{"3", "'UTC'"}, true},
		{"Enum8('a,b' = 1)", "Enum8('a,b' = 1)", "Enum8", []string{"'a,b' = 1"}, false},
		{"LowCardinality(Nullable(String))", "String", "String", nil, true},
		{" Nullable(Decimal(38, 10)) ", "Decimal(38, 10)", "Decimal", []string{"38", "10"}, true},
		{"Map(LowCardinality(String), Nullable(Int64))", "Map(LowCardinality(String), Nullable(Int64))", "Map",
			[]string{"LowCardinality(String)", "Nullable(Int64)"}, false},
		{"Enum16('it''s, (x)' = -1, 'b' = 2)", "Enum16('it''s, (x)' = -1, 'b' = 2)", "Enum16",
			[]string{"'it''s, (x)' = -1", "'b' = 2"}, false},
		{"DateTime('Asia/Tokyo')", "DateTime('Asia/Tokyo')", "DateTime", []string{"'Asia/Tokyo'"}, false},
	} {
		got, err := Parse(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, Type{Full: c.in, Base: c.base, Name: c.name, Args: c.args, Nullable: c.nullable}, got, c.in)
	}
	got, err := Parse("Nullable(Array(Int32)")
	require.EqualError(t, err, `bad type "Array(Int32"`)
	require.Equal(t, Type{Full: "Nullable(Array(Int32)", Base: "Array(Int32", Name: "Array(Int32", Nullable: true}, got)
}

func TestTupleElem(t *testing.T) {
	for in, want := range map[string][2]string{
		"a Int32":                      {"a", "Int32"},
		"Int32":                        {"", "Int32"},
		"Nullable(String)":             {"", "Nullable(String)"},
		"`a b` Array(String)":          {"a b", "Array(String)"},
		"\"x\\\"y\" UInt8":             {"x\"y", "UInt8"},
		"  b  LowCardinality(String) ": {"b", "LowCardinality(String)"},
	} {
		n, typ := TupleElem(in)
		require.Equal(t, want, [2]string{n, typ}, in)
	}
}

func TestEnum(t *testing.T) {
	m, err := Enum([]string{"'a' = 1", "'it''s' = -2", `'tab\there' = 3`, "'x=y' = 4"})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"a": 1, "it's": -2, "tab\there": 3, "x=y": 4}, m)
	_, err = Enum([]string{"a = 1"})
	require.Error(t, err)
}

// FuzzSplit: any input gives an answer or an error, never a panic, and the arguments are
// pieces of the input.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"Int32", "Map(String, Array(Nullable(Decimal(18, 4))))", "Enum8('a' = 1, 'b,(' = 2)", "Tuple(`a` Int32)", "(", ")", "A('\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, args, err := Split(s)
		if err != nil {
			return
		}
		for _, a := range args {
			if !strings.Contains(s, a) {
				t.Fatalf("argument %q is not part of %q", a, s)
			}
			TupleElem(a)
			if strings.HasPrefix(a, "'") {
				_, _ = Unquote(a)
			}
		}
		_, _ = Enum(args)
	})
}

// FuzzParse: any input gives a type or an error, never a panic; the base is a piece of the input and the
// arguments are pieces of the base.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"Nullable(DateTime64(3, 'UTC'))", "LowCardinality(Nullable(String))", "Tuple(a String, b Array(Decimal(18, 4)))",
		"Enum8('a,b' = 1)", "Nullable(", "Nullable()", "LowCardinality(Nullable(Nullable(X)))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ct, err := Parse(s)
		if !strings.Contains(s, ct.Base) {
			t.Fatalf("base %q is not part of %q", ct.Base, s)
		}
		if err != nil {
			return
		}
		for _, a := range ct.Args {
			if !strings.Contains(ct.Base, a) {
				t.Fatalf("argument %q is not part of %q", a, ct.Base)
			}
		}
	})
}
