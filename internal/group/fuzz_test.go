package group

import (
	"reflect"
	"testing"
)

// protocolSeeds adds the JVM's golden messages, truncated copies of them, and messages with duplicated work,
// null arrays, negative counts and lengths far past the end, each bare and as a member's allocation.
func protocolSeeds(f *testing.F) {
	for _, b := range golden(f) {
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:len(b)-1])
	}
	dup := assignmentHeader(V1)
	dup.i32(2)
	dup.str("a")
	dup.i32(3)
	dup.i32(ConnectorTask)
	dup.i32(ConnectorTask)
	dup.i32(1)
	dup.str("b")
	dup.i32(1)
	dup.i32(0)
	dup.i32(-1)
	dup.i32(15000)
	huge := assignmentHeader(V2)
	huge.i32(1)
	huge.str("a")
	huge.i32(1 << 30)
	neg := assignmentHeader(V1)
	neg.i32(1)
	neg.str("a")
	neg.i32(-5)
	neg.i32(-1)
	neg.i32(-1)
	meta := func(n int32, alloc []byte) []byte {
		w := &writer{}
		w.i16(V2)
		w.str("http://w:8083/")
		w.i64(3)
		w.i32(n)
		w.b = append(w.b, alloc...)
		return w.b
	}
	for _, b := range [][]byte{dup.b, huge.b, neg.b} {
		f.Add(b)
		f.Add(meta(int32(len(b)), b))
		f.Add(meta(1<<31-1, b))
		f.Add(meta(-7, nil))
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff})
	f.Add([]byte{0, 0, 0x7f, 0xff, 'a'})
}

// FuzzDecodeAssignment: no panic, and a decoded assignment survives encoding and decoding again (its work
// compared as sets, since the encoder groups it by connector).
func FuzzDecodeAssignment(f *testing.F) {
	protocolSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAssignment(b)
		if err != nil {
			return
		}
		back, err := DecodeAssignment(EncodeAssignment(a))
		if err != nil {
			t.Fatalf("re-decoding %+v: %v", a, err)
		}
		if !sameAssignment(a, back) {
			t.Fatalf("round trip of %x: %+v became %+v", b, a, back)
		}
	})
}

// FuzzDecodeMetadata: no panic, and decoded metadata survives encoding and decoding again (an empty
// allocation is written as null, a non-empty one at the metadata's version).
func FuzzDecodeMetadata(f *testing.F) {
	protocolSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ws, err := DecodeMetadata(b)
		if err != nil {
			return
		}
		back, err := DecodeMetadata(EncodeMetadata(*ws))
		if err != nil {
			t.Fatalf("re-decoding %+v: %v", ws, err)
		}
		if back.Version != ws.Version || back.URL != ws.URL || back.Offset != ws.Offset {
			t.Fatalf("round trip of %x: %+v became %+v", b, ws, back)
		}
		if ws.Version == V0 || ws.Assignment.IsEmpty() {
			if back.Assignment != nil {
				t.Fatalf("round trip of %x: no allocation became %+v", b, back.Assignment)
			}
			return
		}
		want := *ws.Assignment
		want.Version = ws.Version
		if back.Assignment == nil || !sameAssignment(&want, back.Assignment) {
			t.Fatalf("round trip of %x: allocation %+v became %+v", b, want, back.Assignment)
		}
	})
}

// sameAssignment compares two assignments as their version's layout holds them, with work as sets.
func sameAssignment(a, b *Assignment) bool {
	if a.Version != b.Version || a.Error != b.Error || a.Leader != b.Leader || a.LeaderURL != b.LeaderURL ||
		a.Offset != b.Offset || (a.Version >= V1 && a.Delay != b.Delay) {
		return false
	}
	same := func(c1 []string, t1 []TaskID, c2 []string, t2 []TaskID) bool {
		return reflect.DeepEqual(ConnectorsAndTasks{c1, t1}.Sorted(), ConnectorsAndTasks{c2, t2}.Sorted())
	}
	return same(a.Connectors, a.Tasks, b.Connectors, b.Tasks) && (a.Version < V1 ||
		same(a.RevokedConnectors, a.RevokedTasks, b.RevokedConnectors, b.RevokedTasks))
}
