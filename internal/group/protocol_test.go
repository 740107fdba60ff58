package group

import (
	"bufio"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// golden reads testdata/distributed/protocol-golden.txt: bytes serialized by the JVM's ConnectProtocol and
// IncrementalCooperativeConnectProtocol (connect-runtime 4.3.1, regenerate with testdata/distributed/jvm.sh golden).
func golden(t testing.TB) map[string][]byte {
	f, err := os.Open("../../testdata/distributed/protocol-golden.txt")
	require.NoError(t, err)
	defer f.Close()
	out := map[string][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, h, ok := strings.Cut(sc.Text(), " ")
		require.True(t, ok)
		b, err := hex.DecodeString(h)
		require.NoError(t, err)
		out[name] = b
	}
	return out
}

func TestProtocolGolden(t *testing.T) {
	g := golden(t)
	const url = "http://127.0.0.1:8083/"
	cur := &Assignment{Version: V1, Leader: "leader-1", LeaderURL: "http://l:8083/", Offset: 7,
		Connectors: []string{"a"}, Tasks: []TaskID{{"a", 0}, {"a", 1}, {"b", 2}}}
	inc := Assignment{Leader: "leader-1", LeaderURL: "http://l:8083/", Offset: 7,
		Connectors: []string{"a"}, Tasks: []TaskID{{"a", 0}, {"b", 1}},
		RevokedConnectors: []string{"c"}, RevokedTasks: []TaskID{{"c", 3}}, Delay: 15000}
	incV1, incV2 := inc, inc
	incV1.Version, incV2.Version = V1, V2

	metas := []struct {
		name string
		ws   WorkerState
	}{
		{"metadata_v0", WorkerState{Version: V0, URL: url, Offset: 42}},
		{"metadata_v0_nooffset", WorkerState{Version: V0, URL: url, Offset: -1}},
		{"metadata_v1_empty", WorkerState{Version: V1, URL: url, Offset: 42}},
		{"metadata_v2_empty", WorkerState{Version: V2, URL: url, Offset: 42}},
		{"metadata_v1_alloc", WorkerState{Version: V1, URL: url, Offset: 42, Assignment: cur}},
		{"metadata_v2_alloc", WorkerState{Version: V2, URL: url, Offset: 42, Assignment: cur}},
	}
	for _, tc := range metas {
		t.Run(tc.name, func(t *testing.T) {
			want, ok := g[tc.name]
			require.True(t, ok, "golden %s missing", tc.name)
			require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(EncodeMetadata(tc.ws)))
			ws, err := DecodeMetadata(want)
			require.NoError(t, err)
			require.Equal(t, tc.ws.Version, ws.Version)
			require.Equal(t, tc.ws.URL, ws.URL)
			require.Equal(t, tc.ws.Offset, ws.Offset)
			if tc.ws.Assignment != nil {
				require.NotNil(t, ws.Assignment)
				require.Equal(t, tc.ws.Version, ws.Assignment.Version)
				require.Equal(t, cur.Connectors, ws.Assignment.Connectors)
				require.Equal(t, cur.Tasks, ws.Assignment.Tasks)
			} else {
				require.Nil(t, ws.Assignment)
			}
		})
	}

	asgs := []struct {
		name string
		a    Assignment
	}{
		{"assignment_v0", Assignment{Version: V0, Leader: "leader-1", LeaderURL: "http://l:8083/", Offset: 7,
			Connectors: []string{"a"}, Tasks: []TaskID{{"a", 0}, {"b", 1}}}},
		{"assignment_v0_mismatch", Assignment{Version: V0, Error: ConfigMismatch, Leader: "leader-1", LeaderURL: "http://l:8083/", Offset: 9}},
		{"assignment_v1", incV1},
		{"assignment_v2", incV2},
		{"assignment_v2_nothing", Assignment{Version: V2, Leader: "leader-1", LeaderURL: "http://l:8083/", Offset: 7}},
	}
	for _, tc := range asgs {
		t.Run(tc.name, func(t *testing.T) {
			want := g[tc.name]
			require.NotEmpty(t, want)
			require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(EncodeAssignment(&tc.a)))
			got, err := DecodeAssignment(want)
			require.NoError(t, err)
			require.Equal(t, tc.a, *got)
		})
	}
}

func TestDecodeTolerance(t *testing.T) {
	// V1 assignment without the optional trailing fields (revoked, delay) decodes with defaults.
	a := Assignment{Version: V0, Leader: "l", LeaderURL: "u", Offset: 3, Connectors: []string{"x"}}
	b := EncodeAssignment(&a)
	b[1] = 1 // claim V1
	got, err := DecodeAssignment(b)
	require.NoError(t, err)
	require.Equal(t, int16(1), got.Version)
	require.Equal(t, []string{"x"}, got.Connectors)
	require.Zero(t, got.Delay)

	for _, bad := range [][]byte{{}, {0}, {0, 0, 0, 5, 'a'}, {0xff, 0xff}} {
		_, err := DecodeAssignment(bad)
		require.Error(t, err)
		_, err = DecodeMetadata(bad)
		require.Error(t, err)
	}
	// A future version with extra trailing bytes is read as far as we know it.
	ws := EncodeMetadata(WorkerState{Version: V2, URL: "u", Offset: 1})
	ws[1] = 3
	got2, err := DecodeMetadata(append(ws, 1, 2, 3))
	require.NoError(t, err)
	require.Equal(t, "u", got2.URL)
}

func TestProtocolsFor(t *testing.T) {
	for mode, want := range map[string][]string{
		"eager": {"default"}, "compatible": {"compatible", "default"}, "sessioned": {"sessioned", "compatible", "default"},
	} {
		vs, err := ProtocolsFor(mode)
		require.NoError(t, err)
		var names []string
		for _, v := range vs {
			names = append(names, ProtocolName(v))
			back, err := ProtocolVersion(ProtocolName(v))
			require.NoError(t, err)
			require.Equal(t, v, back)
		}
		require.Equal(t, want, names)
	}
	_, err := ProtocolsFor("bogus")
	require.Error(t, err)
}

// TestDecodeAsJVM: IncrementalCooperativeConnectProtocol's answers (connect-runtime 4.3.1), which read every
// version with the V1 layouts: the fields after the config offset may be missing, but not cut short, and a
// connector's task array is never null.
func TestDecodeAsJVM(t *testing.T) {
	msg := func(v int16, tail ...int32) []byte {
		w := assignmentHeader(v)
		for _, x := range tail {
			w.i32(x)
		}
		return w.b
	}
	for _, c := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"v1 without assignment", msg(V1), true},
		{"v0 without assignment", msg(V0), true},
		{"v0 null assignment", msg(V0, -1), true},
		{"v0 with revoked and delay", msg(V0, 0, 0, 5), true},
		{"v0 cut in revoked", append(msg(V0, 0), 0), false},
		{"v2 cut in delay", append(msg(V2, 0, 0), 0, 0), false},
		{"negative task count", append(append(msg(V2, 1), 0, 1, 'a'), 0xff, 0xff, 0xff, 0xfe), false},
	} {
		_, err := DecodeAssignment(c.b)
		require.Equal(t, c.ok, err == nil, "%s: %v", c.name, err)
	}

	meta := func(v int16, alloc ...byte) []byte {
		w := &writer{}
		w.i16(v)
		w.str("http://w:8083/")
		w.i64(3)
		return append(w.b, alloc...)
	}
	alloc := msg(V1, 0, 0, 0)
	withAlloc := append(meta(V0, 0, 0, 0, byte(len(alloc))), alloc...)
	ws, err := DecodeMetadata(withAlloc)
	require.NoError(t, err)
	require.NotNil(t, ws.Assignment, "a V0 member's allocation is read too")
	for _, cut := range [][]byte{meta(V2, 0), meta(V2, 0, 0, 0), meta(V0, 0xff)} {
		_, err := DecodeMetadata(cut)
		require.Error(t, err, "%x", cut)
	}
}

// assignmentHeader is an assignment of version v up to its config offset: no error, leader-1, offset 7.
func assignmentHeader(v int16) *writer {
	w := &writer{}
	w.i16(v)
	w.i16(NoError)
	w.str("leader-1")
	w.str("http://l:8083/")
	w.i64(7)
	return w
}
