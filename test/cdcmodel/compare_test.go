package cdcmodel

import (
	"fmt"
	"sort"
	"strings"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
)

// diff compares what a view holds for one stream (rendered keys) with the model; "" when equal.
func diff(s cdcstream.Stream, want map[string]cdcstream.Row, got map[string][]cdcstream.Row) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range want {
		keys[s.Prefix+"-"+k] = true
	}
	for k := range got {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, full := range sorted {
		w, live := want[strings.TrimPrefix(full, s.Prefix+"-")]
		w.ID = full
		g := got[full]
		switch {
		case !live && len(g) > 0:
			fmt.Fprintf(&b, "    %q: want absent (deleted or never created), got %v\n", full, g)
		case live && len(g) == 0:
			fmt.Fprintf(&b, "    %q: want %v, got absent\n", full, w)
		case live && (len(g) > 1 || !rowEqual(w, g[0])):
			fmt.Fprintf(&b, "    %q: want %v, got %v\n", full, w, g)
		}
	}
	return b.String()
}

func rowEqual(a, b cdcstream.Row) bool {
	if a.ID != b.ID || a.Name != b.Name || a.Qty != b.Qty || a.UpdatedAt != b.UpdatedAt || (a.Email == nil) != (b.Email == nil) {
		return false
	}
	return a.Email == nil || *a.Email == *b.Email
}

// byPrefix groups a view's rows by stream prefix.
func byPrefix(rows map[string][]cdcstream.Row) map[string]map[string][]cdcstream.Row {
	out := map[string]map[string][]cdcstream.Row{}
	for k, r := range rows {
		p := cdcstream.PrefixOf(k)
		if out[p] == nil {
			out[p] = map[string][]cdcstream.Row{}
		}
		out[p][k] = r
	}
	return out
}

// keyed gives the model's rows of a stream their rendered ids.
func keyed(s cdcstream.Stream, state map[string]cdcstream.Row) map[string]cdcstream.Row {
	out := make(map[string]cdcstream.Row, len(state))
	for k, r := range state {
		r.ID = s.Prefix + "-" + k
		out[k] = r
	}
	return out
}
