package chshim

import (
	"bytes"
	"testing"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// Blocks of nested types produced by the engine survive Native → protocol → Native byte for byte.
func TestTranscodeRoundTrip(t *testing.T) {
	s := chdbtest.Session(t)
	out, err := s.Query("SELECT number AS id, "+
		"CAST(([('x', number / 2)], map('k', [toLowCardinality(toString(number % 3))])) AS "+
		"Tuple(`a b` Array(Tuple(String, Float64)), m Map(String, Array(LowCardinality(String))))) AS t, "+
		"toDecimal256(number, 10) AS d, CAST(if(number % 2 = 0, 'a,', 'b)') AS Enum8('a,' = 1, 'b)' = 2)) AS e, "+
		"toFixedString('ab', 3) AS f, if(number % 3 = 0, NULL, toString(number)) AS n, "+
		"toLowCardinality(if(number % 4 = 0, NULL, toString(number % 5))) AS lcn, "+
		"[[toIPv6('::1')], []] AS ips, toDateTime64(number, 3, 'UTC') AS ts, (1, 2)::Point AS p "+
		"FROM numbers(20000)", "Native")
	require.NoError(t, err)
	in := proto.NewReader(bytes.NewReader(out))
	var back bytes.Buffer
	blocks := 0
	for {
		var wire proto.Buffer
		_, err := transcodeBlock(in, &wire, nativeLayout, layoutFor(proto.Version))
		if err == errEndOfBlocks {
			break
		}
		require.NoError(t, err)
		blocks++
		var native proto.Buffer
		_, err = transcodeBlock(proto.NewReader(bytes.NewReader(wire.Buf)), &native, layoutFor(proto.Version), nativeLayout)
		require.NoError(t, err)
		back.Write(native.Buf)
	}
	require.Greater(t, blocks, 0)
	require.Equal(t, out, back.Bytes())
}
