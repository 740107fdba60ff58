package clickhouse

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

func envelopeWith(src map[string]any) map[string]any {
	return map[string]any{"op": "u", "before": nil, "after": map[string]any{"id": 1.0}, "source": src}
}

// ordered asserts that the source blocks are in strictly increasing version order, both in an
// envelope and as an unwrapped row with ExtractNewRecordState's add.fields names.
func ordered(t *testing.T, srcs ...map[string]any) []position {
	t.Helper()
	pf := defaultPositionFields()
	var out []position
	for i, src := range srcs {
		p, _, ok, err := pf.sourcePosition(envelopeWith(src), true)
		require.NoError(t, err)
		require.True(t, ok, "%v", src)
		row := map[string]any{"id": 1.0}
		for k, v := range src {
			row["__"+k] = v
		}
		q, _, ok, err := pf.sourcePosition(row, false)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, p.hi, q.hi)
		require.Equal(t, p.lo, q.lo)
		if i > 0 {
			require.Equal(t, 1, p.cmp(out[i-1]), "%v must be after %v", src, srcs[i-1])
		}
		out = append(out, p)
	}
	return out
}

func TestPositionPostgresLSN(t *testing.T) {
	ps := ordered(t, map[string]any{"lsn": 9.0}, map[string]any{"lsn": 10.0}, map[string]any{"lsn": int64(1) << 40})
	require.Equal(t, uint64(1)<<40, ps[2].narrow)
}

func TestPositionMySQLBinlog(t *testing.T) {
	ps := ordered(t,
		map[string]any{"file": "mysql-bin.000009", "pos": 900.0, "row": 0.0},
		map[string]any{"file": "mysql-bin.000010", "pos": 4.0},             // a later file starts at a small position
		map[string]any{"file": "mysql-bin.000010", "pos": 4.0, "row": 1.0}, // next row of the same event
		map[string]any{"file": "mysql-bin.000010", "pos": 120.0},
		map[string]any{"file": "mysql-bin.999999", "pos": 9000.0},
		map[string]any{"file": "mysql-bin.1000000", "pos": 4.0}, // gains a digit: smaller as a string
		map[string]any{"file": "mysql-bin.1000000", "pos": float64(int64(1) << 33)},
	)
	// The 64-bit layout of earlier versions: file sequence << 42 | pos << 10 | row.
	require.Equal(t, uint64(9)<<42|900<<10, ps[0].narrow)
	require.Equal(t, uint64(10)<<42|4<<10|1, ps[2].narrow)
	require.Empty(t, ps[5].narrowErr)
	require.Contains(t, ps[6].narrowErr, "UInt128")
	_, err := ps[6].forColumn("UInt64")
	require.ErrorContains(t, err, "UInt128")
	v, err := ps[6].forColumn("UInt128")
	require.NoError(t, err)
	want := new(big.Int).Lsh(big.NewInt(1000000), 96)
	want.Or(want, new(big.Int).Lsh(big.NewInt(1<<33), 32))
	require.Equal(t, want, v)

	// Rows beyond 1023 saturate in 64 bits (never wrap) and stay exact in 128.
	pf := defaultPositionFields()
	a, _, _, _ := pf.sourcePosition(envelopeWith(map[string]any{"file": "b.000001", "pos": 10.0, "row": 1023.0}), true)
	b, _, _, _ := pf.sourcePosition(envelopeWith(map[string]any{"file": "b.000001", "pos": 10.0, "row": 5000.0}), true)
	require.Equal(t, a.narrow, b.narrow)
	require.Equal(t, 1, b.cmp(a))

	_, _, _, err = pf.sourcePosition(envelopeWith(map[string]any{"file": "binlog", "pos": 10.0}), true)
	require.ErrorContains(t, err, "no sequence number")
}

func TestPositionSQLServerLSN(t *testing.T) {
	ps := ordered(t,
		map[string]any{"commit_lsn": "00000027:00000758:0005"}, // snapshot: no change_lsn
		map[string]any{"commit_lsn": "00000027:00000ac0:0002", "change_lsn": "00000027:00000a00:0002"},
		map[string]any{"commit_lsn": "00000027:00000ac0:0002", "change_lsn": "00000027:00000a10:0001"}, // same transaction
		map[string]any{"commit_lsn": "0000002A:00000010:0001", "change_lsn": "0000002A:00000008:0001"}, // upper-case hex, by value
		map[string]any{"commit_lsn": "0000002b:00000004:0001", "change_lsn": "0000002b:00000002:0001"},
		map[string]any{"commit_lsn": "00010000:00000001:0001", "change_lsn": "00010000:00000001:0001"}, // beyond 64 bits
	)
	// A UInt64 column holds the commit LSN while the VLF sequence number is below 65536.
	require.Equal(t, uint64(0x27)<<48|0x758<<16|5, ps[0].narrow)
	require.Equal(t, ps[1].narrow, ps[2].narrow)
	require.Contains(t, ps[5].narrowErr, "UInt128")
	_, err := parseSQLServerLSN("27:xyz:1")
	require.Error(t, err)
}

func TestPositionOracleSCN(t *testing.T) {
	ps := ordered(t,
		map[string]any{"scn": "9"},
		map[string]any{"scn": "10"},                   // not by string
		map[string]any{"scn": "9223372036854775808"},  // 2^63: beyond int64
		map[string]any{"scn": "18446744073709551615"}, // 2^64-1: UInt64 still holds it
		map[string]any{"scn": "18446744073709551616"},
	)
	require.Equal(t, uint64(1)<<63, ps[2].narrow)
	require.Empty(t, ps[3].narrowErr)
	require.Contains(t, ps[4].narrowErr, "UInt128")
}

func TestPositionPrecedenceAndTimestamp(t *testing.T) {
	pf := defaultPositionFields()
	p, ts, ok, err := pf.sourcePosition(envelopeWith(map[string]any{"lsn": 5.0, "ts_ms": 1e12}), true)
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, ts)
	require.Equal(t, "source.lsn", p.from)
	p, ts, ok, _ = pf.sourcePosition(envelopeWith(map[string]any{"ts_ms": 1e12}), true)
	require.True(t, ok)
	require.True(t, ts)
	require.Equal(t, uint64(1e12), p.narrow)
	// The envelope's own ts_ms (add.fields=ts_ms → __ts_ms) is processing time, never a version.
	_, _, ok, _ = pf.sourcePosition(map[string]any{"id": 1.0, "__ts_ms": 1e12}, false)
	require.False(t, ok)
	_, _, ok, _ = pf.sourcePosition(map[string]any{"id": 1.0, "__source_ts_ms": 1e12}, false)
	require.True(t, ok)
	// Renamed and prefixed add.fields.
	rf := positionFieldsFor(map[string]string{"lsn": "pg_lsn"}, "cdc_")
	p, _, ok, _ = rf.sourcePosition(map[string]any{"pg_lsn": 7.0}, false)
	require.True(t, ok)
	require.Equal(t, uint64(7), p.narrow)
	p, _, ok, _ = rf.sourcePosition(map[string]any{"cdc_source_scn": "8"}, false)
	require.True(t, ok)
	require.Equal(t, uint64(8), p.narrow)
}

func TestUnwrapConfigChecks(t *testing.T) {
	base := func(kv ...string) map[string]string {
		p := map[string]string{"hostname": "h", "debeziumCDCEnabled": "true", "transforms": "unwrap",
			"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	cfg, err := ParseConfig(base())
	require.NoError(t, err)
	require.Len(t, cfg.cdcWarnings, 1)
	require.Contains(t, cfg.cdcWarnings[0], "Kafka offset")
	require.Contains(t, cfg.cdcWarnings[0], "transforms.unwrap.add.fields")

	cfg, err = ParseConfig(base("transforms.unwrap.add.fields", "op,source.ts_ms"))
	require.NoError(t, err)
	require.Contains(t, cfg.cdcWarnings[0], "ts_ms")

	for _, f := range []string{"lsn", "source.lsn", "scn", "file,pos,row", "commit_lsn,change_lsn", "lsn:pg_lsn"} {
		cfg, err = ParseConfig(base("transforms.unwrap.add.fields", f))
		require.NoError(t, err)
		require.Empty(t, cfg.cdcWarnings, f)
	}
	cfg, err = ParseConfig(base("transforms.unwrap.add.fields", "lsn:pg_lsn", "transforms.unwrap.add.fields.prefix", "x_"))
	require.NoError(t, err)
	require.Equal(t, []string{"pg_lsn", "x_lsn", "x_source_lsn"}, cfg.unwrap.fields.unwrapped["lsn"])

	cfg, err = ParseConfig(base("transforms.unwrap.add.fields", "lsn", "transforms.unwrap.delete.tombstone.handling.mode", "drop"))
	require.NoError(t, err)
	require.Len(t, cfg.cdcWarnings, 1)
	require.Contains(t, cfg.cdcWarnings[0], "drops delete events")

	// A version path into the envelope can never resolve after the envelope is unwrapped.
	_, err = ParseConfig(base("cdc.version.field", "source.lsn"))
	require.ErrorContains(t, err, "add.fields")
	_, err = ParseConfig(base("cdc.version.field", "__lsn"))
	require.NoError(t, err)
	_, err = ParseConfig(map[string]string{"hostname": "h", "debeziumCDCEnabled": "true", "cdc.version.field": "source.lsn"})
	require.NoError(t, err)
	// Without CDC handling nothing is checked.
	cfg, err = ParseConfig(base("debeziumCDCEnabled", "false"))
	require.NoError(t, err)
	require.Empty(t, cfg.cdcWarnings)
}

func TestVersionAfter(t *testing.T) {
	require.Equal(t, uint64(301), versionAfter(300.0))
	require.Equal(t, uint64(301), versionAfter("300")) // read from the table with toString
	require.Equal(t, uint64(1)<<63+1, versionAfter("9223372036854775808"))
	big65 := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(0))
	require.Equal(t, big65, versionAfter("18446744073709551615"))
	p := position{hi: 0, lo: ^uint64(0), narrow: ^uint64(0)}
	n := p.next()
	require.Equal(t, uint64(1), n.hi)
	require.Equal(t, uint64(0), n.lo)
	require.NotEmpty(t, n.narrowErr)
	require.Equal(t, "2026-11-01 00:00:00.000", versionAfter("2026-11-01 00:00:00.000"), "dates are kept")
	require.Nil(t, versionAfter(nil))
}
