package commit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseApacheOffsets: a snapshot summary's offsets parse without panic, and what parses encodes and
// parses back to the same offsets.
func FuzzParseApacheOffsets(f *testing.F) {
	for _, s := range []string{`{"0":5}`, `{"0":0,"1":0}`, `{"0":12,"1":7,"2":9223372036854775807}`, `{}`, `null`, ``,
		`{"-1":-1}`, `{"+1":1}`, `{"01":1,"1":2}`, `{"2147483648":1}`, `{"0":9223372036854775808}`, `{"0":1.5}`,
		`{"0":"1"}`, `{"a":1}`, `{"0":1,}`, `{"0":`, `[1]`, "{\"\xff\":1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := parseApacheOffsets(s)
		if err != nil {
			return
		}
		back, err := parseApacheOffsets(o.encode())
		if err != nil || !maps.Equal(o, back) {
			t.Fatalf("%q parses as %v, which encodes as %s and parses as %v, %v", s, o, o.encode(), back, err)
		}
	})
}

// FuzzConnectdPayload: any control-topic record (an Apache sink event of a JVM worker, a framed or plain
// connectd message, or garbage) is classified without panic, and a connectd message framed by this
// process reads back unchanged.
func FuzzConnectdPayload(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "iceberg", "apache-events", "*.b64"))
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	own, err := json.Marshal(ctlMsg{Type: ctlData, Group: "connect-cdc-golden", Round: "r1", From: "w1",
		Offsets: []ctlTP{{Topic: "t", Partition: 0, Offset: 5}}, Tables: []ctlTable{{Name: "db.t", Base: 1}}})
	if err != nil {
		f.Fatal(err)
	}
	framed, err := frameConnectd("connect-cdc-golden", own)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range [][]byte{own, framed, framed[:40], {}, {0xC2, 0x01}, []byte("{"), []byte("null")} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if msg, apache := connectdPayload(b, "connect-cdc-golden"); msg != nil && !apache {
			var m ctlMsg
			_ = json.Unmarshal(msg, &m)
		}
		if !isConnectdJSON(b) {
			return
		}
		framed, err := frameConnectd("g", b)
		if err != nil {
			t.Fatal(err)
		}
		if msg, apache := connectdPayload(framed, "g"); apache || !bytes.Equal(msg, b) {
			t.Fatalf("%q framed reads as %q, apache %v", b, msg, apache)
		}
	})
}

// TestParseApacheOffsetsAsJackson: the Apache sink's offsets read as Jackson reads a Map<Integer, Long>: two
// spellings of one partition keep the later, and only one JSON object (or null) is read.
func TestParseApacheOffsetsAsJackson(t *testing.T) {
	for s, want := range map[string]apacheOffsets{
		`{"01":1,"1":2}`: {1: 2}, `{"1":2,"01":1}`: {1: 1}, `{"0":5, "+2":7}`: {0: 5, 2: 7}, `{}`: {}, `null`: {},
		` {"0":1} `: {0: 1}, `{"0":1,}`: nil, `{"0":1} {}`: nil, `{"0":1}x`: nil, `{"0":1.5}`: nil, `{"a":1}`: nil,
		`[1]`: nil, ``: nil, `{"0":`: nil,
	} {
		got, err := parseApacheOffsets(s)
		if want == nil {
			if err == nil {
				t.Errorf("%q parses as %v, want an error", s, got)
			}
		} else if err != nil || !maps.Equal(got, want) {
			t.Errorf("%q parses as %v, %v, want %v", s, got, err, want)
		}
	}
}
