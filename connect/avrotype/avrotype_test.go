package avrotype

import "testing"

func TestKinds(t *testing.T) {
	for k := Null; k <= Fixed; k++ {
		p, ok := Primitive(k.String())
		if ok != (k <= String) || (ok && p != k) {
			t.Errorf("Primitive(%q) = %v, %v", k.String(), p, ok)
		}
		if k.Named() != (k == Record || k == Enum || k == Fixed) {
			t.Errorf("%v.Named() = %v", k, k.Named())
		}
	}
	want := []string{"null", "boolean", "int", "long", "float", "double", "bytes", "string", "record", "enum", "array", "map", "union", "fixed"}
	for i, w := range want {
		if got := Kind(i).String(); got != w {
			t.Errorf("Kind(%d) = %q, want %q", i, got, w)
		}
	}
	if got := Kind(99).String(); got != "invalid" {
		t.Errorf("Kind(99) = %q", got)
	}
	for _, n := range []string{"record", "error", "Long", ""} {
		if _, ok := Primitive(n); ok {
			t.Errorf("Primitive(%q) is a primitive", n)
		}
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ full, ns, name string }{
		{"a.b.C", "a.b", "C"}, {"C", "", "C"}, {".C", "", "C"},
	} {
		ns, name := SplitName(c.full)
		if ns != c.ns || name != c.name {
			t.Errorf("SplitName(%q) = %q, %q", c.full, ns, name)
		}
	}
	for _, c := range []struct{ name, ns, want string }{
		{"C", "a.b", "a.b.C"}, {"x.C", "a.b", "x.C"}, {"C", "", "C"},
	} {
		if got := FullName(c.name, c.ns); got != c.want {
			t.Errorf("FullName(%q, %q) = %q", c.name, c.ns, got)
		}
	}
}
