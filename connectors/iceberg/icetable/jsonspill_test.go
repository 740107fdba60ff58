package icetable

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// spillWindow reads what was written at every offset, for random records read in rising offset order
// with random gaps, records longer than its window among them (seed printed).
func TestSpillWindowReads(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var files ScratchFiles
	s, err := NewJSONSpill(&files, t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	type rec struct {
		off int64
		b   []byte
	}
	var recs []rec
	for i := range 3000 {
		n := 1 + rng.IntN(2000)
		if rng.IntN(200) == 0 {
			n = spillWindowBytes + rng.IntN(spillWindowBytes)
		}
		b := bytes.Repeat([]byte{byte(i)}, n)
		off, err := s.Write(b)
		require.NoError(t, err)
		recs = append(recs, rec{off, b})
	}
	s.End()
	for range 5 {
		w := spillWindow{s: s}
		for _, r := range recs {
			if rng.IntN(3) == 0 {
				continue
			}
			got, err := w.read(r.off, len(r.b))
			require.NoError(t, err)
			require.True(t, bytes.Equal(r.b, got), "record at %d, %d bytes", r.off, len(r.b))
		}
	}
}
