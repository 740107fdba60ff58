package connect

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestJavaRendering(t *testing.T) {
	s := StructBuilder().Field("id", Int32Schema).Field("tags", ArrayBuilder(StringSchema).Optional().MustBuild()).MustBuild()
	cases := []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{1.0, "1.0"},
		{1e7, "1.0E7"},
		{0.0001, "1.0E-4"},
		{float32(0.1), "0.1"},
		{math.Inf(-1), "-Infinity"},
		{4.9e-324, "4.9E-324"},
		{NewDecimal(1234, 2), "12.34"},
		{NewDecimal(1, 9), "1E-9"},
		{map[string]any{"b": int32(2), "a": "x"}, "{a=x, b=2}"},
		{[]any{int64(1), true}, "[1, true]"},
		{NewStruct(s).MustPut("id", int32(7)).MustPut("tags", []any{"p"}), "Struct{id=7,tags=[p]}"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "Tue Jan 02 03:04:05 UTC 2024"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, JavaString(c.in), "%#v", c.in)
	}
}
