package icerow_test

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// mustVersion is envelopeVersion of path over an envelope whose source block is src.
func mustVersion(t *testing.T, path string, src map[string]any) string {
	t.Helper()
	v, err := icerow.EnvelopeVersion(path, icerow.Row{"op": "u", "before": nil, "after": icerow.Row{}, "source": src})
	require.NoError(t, err)
	require.NotEmpty(t, v, "%s of %v", path, src)
	return v
}

// requireAscending checks that the versions of path over the source blocks increase strictly
// (as strings, the way they are compared in the table and in <table>__deletes).
func requireAscending(t *testing.T, path string, srcs ...map[string]any) {
	t.Helper()
	prev := ""
	for i, src := range srcs {
		v := mustVersion(t, path, src)
		if i > 0 {
			require.Less(t, prev, v, "%s: %v must be above %v", path, srcs[i], srcs[i-1])
		}
		prev = v
	}
}

func TestEnvelopeVersionOrder(t *testing.T) {
	t.Run("postgres-lsn", func(t *testing.T) {
		requireAscending(t, "source.lsn",
			icerow.Row{"lsn": int64(9)}, icerow.Row{"lsn": int64(10)}, icerow.Row{"lsn": json.Number("999")}, icerow.Row{"lsn": float64(1000)},
			icerow.Row{"lsn": int64(1) << 40}, icerow.Row{"lsn": int64(9223372036854775807)})
		require.Equal(t, "041010", mustVersion(t, "source.lsn", icerow.Row{"lsn": int64(1010)}))
	})
	t.Run("mysql-binlog", func(t *testing.T) {
		for _, path := range []string{"source.pos", "source.file", "source.row", "source"} {
			requireAscending(t, path,
				icerow.Row{"file": "mysql-bin.000009", "pos": int64(900), "row": int64(0)},
				icerow.Row{"file": "mysql-bin.000009", "pos": int64(900), "row": int64(1)},
				icerow.Row{"file": "mysql-bin.000009", "pos": int64(1200)},
				icerow.Row{"file": "mysql-bin.000010", "pos": int64(4)}, // rollover: pos restarts
				icerow.Row{"file": "mysql-bin.999999", "pos": int64(7000)},
				icerow.Row{"file": "mysql-bin.1000000", "pos": int64(4)}, // rollover of the digit count
				icerow.Row{"file": "mysql-bin.1000000", "pos": int64(5), "row": int64(0)})
		}
		require.Equal(t, "0242.03758.011", mustVersion(t, "source.pos", icerow.Row{"file": "mysql-bin.000042", "pos": int64(758), "row": int32(1)}))
		_, err := icerow.EnvelopeVersion("source.pos", icerow.Row{"source": map[string]any{"file": "binlog", "pos": int64(1)}})
		require.ErrorContains(t, err, "sequence number")
	})
	t.Run("sqlserver-lsn", func(t *testing.T) {
		requireAscending(t, "source.change_lsn",
			icerow.Row{"change_lsn": "00000027:00000758:0005"},
			icerow.Row{"change_lsn": "00000027:00000758:0005", "event_serial_no": int64(2)},
			icerow.Row{"change_lsn": "00000027:000009ff:0001"},
			icerow.Row{"change_lsn": "00000027:00000A00:0001"}, // upper case: not above as a string
			icerow.Row{"change_lsn": "27:10000:0"},             // unpadded: by value
			icerow.Row{"change_lsn": "00000100:00000000:0000"})
		requireAscending(t, "source.commit_lsn",
			icerow.Row{"commit_lsn": "00000027:00000758:0005", "change_lsn": "00000027:00000750:0002"},
			icerow.Row{"commit_lsn": "00000027:00000758:0005", "change_lsn": "00000027:00000751:0002"},
			icerow.Row{"commit_lsn": "00000027:00000a00:0001", "change_lsn": "00000027:00000700:0002"})
		_, err := icerow.EnvelopeVersion("source.change_lsn", icerow.Row{"source": map[string]any{"commit_lsn": "1:2:3"}})
		require.NoError(t, err, "a snapshot read has no change_lsn: no version")
	})
	t.Run("oracle-scn", func(t *testing.T) {
		requireAscending(t, "source.scn",
			icerow.Row{"scn": "999"}, icerow.Row{"scn": "1000"}, icerow.Row{"scn": "9223372036854775807"},
			icerow.Row{"scn": "9223372036854775808"}, icerow.Row{"scn": "99999999999999999999"}, icerow.Row{"scn": "100000000000000000000000"})
	})
	t.Run("ts-ms-and-auto", func(t *testing.T) {
		requireAscending(t, "source.ts_ms", icerow.Row{"ts_ms": int64(999)}, icerow.Row{"ts_ms": int64(1000)})
		requireAscending(t, "source", icerow.Row{"ts_ms": int64(5)}, icerow.Row{"ts_ms": int64(6)})
		requireAscending(t, "source", icerow.Row{"lsn": int64(5), "ts_ms": int64(9)}, icerow.Row{"lsn": int64(6), "ts_ms": int64(1)})
		requireAscending(t, "source", icerow.Row{"scn": "99"}, icerow.Row{"scn": "100"})
		requireAscending(t, "source", icerow.Row{"change_lsn": "a:1:1", "commit_lsn": "a:2:1"}, icerow.Row{"change_lsn": "a:1:0", "commit_lsn": "b:0:0"})
		requireAscending(t, "source", icerow.Row{"ts_ms": int64(2000), "ord": int64(9)}, icerow.Row{"ts_ms": int64(2000), "ord": int64(10)})
	})
	t.Run("unwrapped", func(t *testing.T) {
		// ExtractNewRecordState add.fields=lsn -> __lsn; add.fields=source.lsn -> __source_lsn
		for _, row := range []icerow.Row{{"id": 1, "__lsn": int64(1010)}, {"id": 1, "__source_lsn": int64(1010)}} {
			v, err := icerow.EnvelopeVersion("source.lsn", row)
			require.NoError(t, err)
			require.Equal(t, "041010", v)
		}
		v, err := icerow.EnvelopeVersion("source.pos", icerow.Row{"__file": "mysql-bin.000042", "__pos": int64(758)})
		require.NoError(t, err)
		require.Equal(t, "0242.03758.010", v)
		v, err = icerow.EnvelopeVersion("source", icerow.Row{"__source_scn": "12345678901234567890123"})
		require.NoError(t, err)
		require.Equal(t, "2312345678901234567890123", v)
		v, err = icerow.EnvelopeVersion("source.lsn", icerow.Row{"id": 1})
		require.NoError(t, err)
		require.Empty(t, v, "nothing to resolve")
	})
	t.Run("generic-paths", func(t *testing.T) {
		v, err := icerow.EnvelopeVersion("transaction.total_order", icerow.Row{"transaction": map[string]any{"total_order": int64(7)}})
		require.NoError(t, err)
		require.Equal(t, "017", v)
		v, err = icerow.EnvelopeVersion("after.updated", icerow.Row{"after": map[string]any{"updated": time.UnixMicro(5)}})
		require.NoError(t, err)
		require.Equal(t, "015", v)
	})
}

func TestCompareVersion(t *testing.T) {
	for _, c := range []struct {
		a, b any
		want int
	}{
		{int64(1), int32(2), -1},
		{"9223372036854775808", "9223372036854775807", 1}, // beyond int64
		{"99999999999999999999", "100000000000000000000", -1},
		{"00000027:00000A00:0001", "00000027:000009ff:0001", 1}, // hex by value
		{"27:758:5", "00000027:00000758:0005", 0},
		{time.Unix(10, 0), time.Unix(9, 0), 1},
		{1.5, 2.5, -1},
		{"1.5", "10.25", -1},
		{nil, int64(1), -1},
		{"b", "a", 1},
	} {
		require.Equal(t, c.want, icerow.CompareVersion(c.a, c.b), "%v vs %v", c.a, c.b)
	}
}

// FuzzVersionEncoding: the normalized encoding of integers orders as the integers do, and
// arbitrary values never make it panic.
func FuzzVersionEncoding(f *testing.F) {
	f.Add(int64(0), int64(1), "mysql-bin.000001", "00000027:00000758:0005")
	f.Add(int64(-5), int64(-6), "x", "1:2")
	f.Add(int64(-9223372036854775808), int64(9223372036854775807), "99999999999999999999", "")
	f.Fuzz(func(t *testing.T, a, b int64, s1, s2 string) {
		ea, err := icerow.JoinVersion(a, s1)
		if err != nil {
			return
		}
		eb, err := icerow.JoinVersion(b, s1)
		require.NoError(t, err)
		want := big.NewInt(a).Cmp(big.NewInt(b))
		require.Equal(t, want, strings.Compare(ea, eb), "%d %q vs %d %q", a, ea, b, eb)
		_, _ = icerow.EnvelopeVersion("source", icerow.Row{"source": map[string]any{"file": s1, "pos": s2, "change_lsn": s2}})
		_, _ = icerow.EnvelopeVersion("source.scn", icerow.Row{"__scn": s1})
		_ = icerow.CompareVersion(s1, s2)
	})
}
