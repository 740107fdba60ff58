package jvm

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSONErrors(t *testing.T) {
	cases := map[string]string{
		`{"a" 1}`:          "Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value\n at " + RedactedSource + "line: 1, column: 7]",
		`{"a":1 "b"`:       "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries\n at " + RedactedSource + "line: 1, column: 9]",
		`[1,]`:             "Unexpected character (']' (code 93)): expected a valid value " + validValues + "\n at " + RedactedSource + "line: 1, column: 5]",
		`{"a":tru}`:        "Unrecognized token 'tru': was expecting " + validValues + "\n at " + RedactedSource + "line: 1, column: 10]",
		"{\"a\":\"b\nc\"}": "Illegal unquoted character ((CTRL-CHAR, code 10)): has to be escaped using backslash to be included in string value\n at " + RedactedSource + "line: 1, column: 9]",
	}
	for in, want := range cases {
		_, err := ParseJSON([]byte(in))
		require.Error(t, err, in)
		assert.Equal(t, want, err.Error(), in)
	}
	v, err := ParseJSON([]byte(`{"a":"1"} trailing garbage`))
	require.NoError(t, err, "Jackson ignores trailing tokens")
	assert.Equal(t, []string{"a"}, v.Keys)
	v, err = ParseJSON(bytes.TrimSpace([]byte("  \n ")))
	require.NoError(t, err)
	assert.Nil(t, v)
}

const nestingMsg = "Document nesting depth (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)"

// Jackson's limit: 1000 nested containers parse, the 1001st fails; 10M do not exhaust the stack.
func TestNestingLimit(t *testing.T) {
	_, err := ParseJSON([]byte(strings.Repeat("[", 1000) + strings.Repeat("]", 1000)))
	require.NoError(t, err)
	for _, doc := range []string{
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
		strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001),
		strings.Repeat("[", 10_000_000),
		strings.Repeat(`[{"k":`, 5_000_000),
	} {
		_, err := ParseJSON([]byte(doc))
		var ne *NestingError
		require.ErrorAs(t, err, &ne)
		assert.Equal(t, nestingMsg, err.Error())
	}
}

// FuzzParseJSON: any input parses or fails with a Jackson message carrying a location (or the nesting limit's
// message, which has none); a parsed value's positions lie within the input and keys and values pair up.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9"],"b":null}`, `[true,false]`, `{"a" 1}`, `"\ud83d\ude00"`, `-0.1E+2`, `[{"k":`, "\n\n{\"a\":tru}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseJSON(b)
		// the stream parser accepts the same documents, and reports where the rest of the body goes wrong
		sv, serr := ParseJSONStream(b)
		if (err == nil) != (serr == nil) {
			t.Fatalf("String parser: %v, stream parser: %v", err, serr)
		}
		if serr == nil && sv != nil {
			if terr := TrailingTokens(b, sv.End, "T"); terr != nil && !strings.Contains(terr.Error(), "\n at "+RedactedSource+"line: ") {
				t.Fatalf("trailing-token error without a location: %q", terr)
			}
		}
		if err != nil {
			var ne *NestingError
			if !errors.As(err, &ne) && !strings.Contains(err.Error(), "\n at "+RedactedSource+"line: ") {
				t.Fatalf("error without a location: %q", err)
			}
			return
		}
		var check func(v *Value)
		check = func(v *Value) {
			if v.Start < 0 || v.End > len(b) || v.Start >= v.End {
				t.Fatalf("value at [%d,%d) outside the input of %d bytes", v.Start, v.End, len(b))
			}
			if len(v.Keys) != len(v.Vals) {
				t.Fatalf("%d keys, %d values", len(v.Keys), len(v.Vals))
			}
			for _, e := range append(v.Vals, v.Elems...) {
				check(e)
			}
		}
		if v != nil {
			check(v)
		}
	})
}
