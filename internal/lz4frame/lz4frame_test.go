package lz4frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/lz4test"
)

// pierrecDecode is the reference: pierrec's frame reader, as franz-go's default decompressor runs it.
func pierrecDecode(src []byte) ([]byte, error) {
	var out bytes.Buffer
	_, err := out.ReadFrom(lz4.NewReader(bytes.NewReader(src)))
	return out.Bytes(), err
}

// lz4TestData are the kinds of input a batch may hold: records like the sinks', runs, incompressible bytes.
func lz4TestData(rng *rand.Rand, n int) map[string][]byte {
	json := make([]byte, 0, n)
	for i := 0; len(json) < n; i++ {
		json = fmt.Appendf(json, `{"id":%d,"name":"customer-%07d","region":"eu-west","amount":%d.%02d}`, i, rng.IntN(1e6), rng.IntN(1e5), rng.IntN(100))
	}
	random := make([]byte, n)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	return map[string][]byte{"json": json[:n], "zeros": make([]byte, n), "random": random}
}

func TestDecodeMatchesPierrecReader(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	sizes := []int{0, 1, 100, 64<<10 - 1, 64 << 10, 300 << 10, 5 << 20}
	blocks := []lz4.BlockSize{lz4.Block64Kb, lz4.Block256Kb, lz4.Block1Mb, lz4.Block4Mb}
	for _, n := range sizes {
		for kind, data := range lz4TestData(rng, n) {
			for _, bs := range blocks {
				for _, blockSum := range []bool{false, true} {
					for _, contentSum := range []bool{false, true} {
						for _, withSize := range []bool{false, true} {
							name := fmt.Sprintf("%s-%d/block-%d/blocksum-%v/contentsum-%v/size-%v", kind, n, bs, blockSum, contentSum, withSize)
							opts := []lz4.Option{lz4.BlockSizeOption(bs), lz4.BlockChecksumOption(blockSum), lz4.ChecksumOption(contentSum)}
							if withSize {
								opts = append(opts, lz4.SizeOption(uint64(n)))
							}
							frame := lz4test.Frame(t, data, opts...)
							want, err := pierrecDecode(frame)
							require.NoError(t, err, name)
							require.Equal(t, data, want, name)
							got, err := Decode(frame, 1<<30)
							require.NoError(t, err, name)
							require.Equal(t, want, got, name)
							require.Equal(t, len(got), cap(got), "%s: the output is allocated at its size", name)
						}
					}
				}
			}
		}
	}
}

func TestDecodeConcatenatedAndSkippable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := lz4TestData(rng, 200<<10)
	skippable := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, skippableMagic|0x7), 3)
	skippable = append(skippable, 1, 2, 3)
	var src, want []byte
	src = append(src, lz4test.Frame(t, data["json"], lz4.BlockSizeOption(lz4.Block64Kb))...)
	src = append(src, skippable...)
	src = append(src, lz4test.Frame(t, data["random"], lz4.ChecksumOption(false))...)
	src = append(src, lz4test.Frame(t, nil)...)
	src = append(src, lz4test.Frame(t, data["zeros"], lz4.SizeOption(200<<10), lz4.BlockChecksumOption(true))...)
	want = append(append(append(want, data["json"]...), data["random"]...), data["zeros"]...)
	ref, err := pierrecDecode(src)
	require.NoError(t, err)
	require.Equal(t, want, ref)
	got, err := Decode(src, 1<<30)
	require.NoError(t, err)
	require.Equal(t, want, got)

	got, err = Decode(nil, 1<<30)
	require.NoError(t, err)
	require.Empty(t, got)
}

// dependentFrame builds a frame of linked blocks (B.Indep=0), which pierrec's writer does not write:
// stored blocks alternate with compressed ones whose matches reach back up to 64 KiB into the output of
// the blocks before them.
func dependentFrame(t testing.TB, rng *rand.Rand, blocks int) []byte {
	frame := binary.LittleEndian.AppendUint32(nil, frameMagic)
	frame = append(frame, 0x40, 0x40, 0) // version 1, linked blocks; 64 KiB blocks; header checksum below
	frame = withHeaderChecksum(t, frame)
	written := 0
	for b := range blocks {
		if b%2 == 0 {
			n := 1 + rng.IntN(20<<10)
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			frame = binary.LittleEndian.AppendUint32(frame, uint32(n)|1<<31)
			frame = append(frame, data...)
			written += n
			continue
		}
		var block []byte
		size := 0
		for range 1 + rng.IntN(50) {
			match := 4 + rng.IntN(14)                               // one nibble, no length extension
			offset := 1 + rng.IntN(min(written+size, windowSize-1)) // 16 bits, 0 invalid
			block = append(block, byte(match-4))
			block = binary.LittleEndian.AppendUint16(block, uint16(offset))
			size += match
		}
		block = append(block, 0x10, 'x') // the last sequence: one literal
		frame = binary.LittleEndian.AppendUint32(frame, uint32(len(block)))
		frame = append(frame, block...)
		written += size + 1
	}
	return binary.LittleEndian.AppendUint32(frame, 0)
}

// withHeaderChecksum sets the header checksum byte (the last of frame) to the one pierrec's reader accepts:
// it checks the header's checksum, which this decoder does not.
func withHeaderChecksum(t testing.TB, frame []byte) []byte {
	for hc := range 256 {
		frame[len(frame)-1] = byte(hc)
		_, err := pierrecDecode(binary.LittleEndian.AppendUint32(bytes.Clone(frame), 0))
		if !errors.Is(err, lz4.ErrInvalidHeaderChecksum) {
			return frame
		}
	}
	t.Fatal("no header checksum fits")
	return nil
}

func TestDecodeDependentBlocks(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range 200 {
		frame := dependentFrame(t, rng, 1+rng.IntN(12))
		want, err := pierrecDecode(frame)
		require.NoError(t, err, "frame %d", i)
		got, err := Decode(frame, 1<<30)
		require.NoError(t, err, "frame %d", i)
		require.Equal(t, want, got, "frame %d", i)
	}
	// short blocks: the bound taken for them passes a limit the output does not; the output is measured then
	frame := dependentFrame(t, rand.New(rand.NewPCG(7, 8)), 6)
	want, err := pierrecDecode(frame)
	require.NoError(t, err)
	bound, err := walkFrames(frame, 1<<30, estimate, nil)
	require.NoError(t, err)
	require.Greater(t, bound, len(want))
	got, err := Decode(frame, len(want))
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, len(got), cap(got))
	_, err = Decode(frame, len(want)-1)
	require.ErrorIs(t, err, ErrTooLarge)

	// the same frame with independent blocks reaches before its block's start: an error
	frame = dependentFrame(t, rand.New(rand.NewPCG(3, 4)), 2)
	frame[4] |= 0x20
	frame = withHeaderChecksum(t, frame[:7])[:7:7]
	_, err = Decode(append(frame, dependentFrame(t, rand.New(rand.NewPCG(3, 4)), 2)[7:]...), 1<<30)
	require.ErrorIs(t, err, ErrFrame)
}

func TestDecodeBoundsOutput(t *testing.T) {
	data := make([]byte, 1<<20)
	frame := lz4test.Frame(t, data)
	_, err := Decode(frame, 1<<20-1)
	require.ErrorIs(t, err, ErrTooLarge)
	got, err := Decode(frame, 1<<20)
	require.NoError(t, err)
	require.Equal(t, data, got)

	// a block decoding past the frame's block size is refused, as pierrec's reader refuses it
	frame = lz4test.Frame(t, make([]byte, 1<<20), lz4.BlockSizeOption(lz4.Block4Mb))
	frame[5] = 0x40 // BD: 64 KiB blocks
	frame = withHeaderChecksum(t, frame[:7])[:7:7]
	frame = append(frame, lz4test.Frame(t, make([]byte, 1<<20), lz4.BlockSizeOption(lz4.Block4Mb))[7:]...)
	_, refErr := pierrecDecode(frame)
	require.Error(t, refErr)
	_, err = Decode(frame, 1<<30)
	require.ErrorIs(t, err, ErrFrame)
}

// The frame format makes every frame independent: a frame's first linked block has no history, while
// pierrec's reader carries the frame before's.
func TestDecodeFramesAreIndependent(t *testing.T) {
	first := dependentFrame(t, rand.New(rand.NewPCG(1, 1)), 1) // one stored block
	second := withHeaderChecksum(t, append(binary.LittleEndian.AppendUint32(nil, frameMagic), 0x40, 0x40, 0))
	block := []byte{0x00, 0x01, 0x00, 0x10, 'x'} // a match of 4 bytes at offset 1, then one literal
	second = append(binary.LittleEndian.AppendUint32(second, uint32(len(block))), block...)
	second = binary.LittleEndian.AppendUint32(second, 0)
	src := append(first, second...)
	_, err := Decode(src, 1<<30)
	require.ErrorIs(t, err, ErrFrame)
	_, err = Decode(second, 1<<30)
	require.ErrorIs(t, err, ErrFrame)
	_, refErr := pierrecDecode(src)
	require.NoError(t, refErr, "pierrec's reader no longer carries history across frames: tighten FuzzLZ4Frame")
}

// FuzzLZ4Frame: whatever the input, Decode gives pierrec's reader's bytes or an error, and allocates no
// more than its limit; DecodeGuess gives Decode's, whatever the guess. The two legitimately differ where this decoder skips what pierrec's verifies
// (header, block and content checksums: the batch CRC covers them), on legacy frames (magic 0x184C2102),
// which Kafka never writes and this decoder refuses, on output past the limit, and where a later frame's
// linked blocks reach into the frame before it (TestDecodeFramesAreIndependent): for inputs of one frame,
// pierrec's success must be this decoder's.
func FuzzLZ4Frame(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	data := lz4TestData(rng, 70<<10)
	for _, kind := range []string{"json", "zeros", "random"} {
		f.Add(lz4test.Frame(f, data[kind], lz4.BlockSizeOption(lz4.Block64Kb), lz4.BlockChecksumOption(kind == "json"), lz4.SizeOption(70<<10)))
		f.Add(lz4test.Frame(f, data[kind][:1000]))
	}
	f.Add(dependentFrame(f, rng, 4))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := Decode(src, 8<<20)
		want, refErr := pierrecDecode(src)
		checksum := errors.Is(refErr, lz4.ErrInvalidHeaderChecksum) || errors.Is(refErr, lz4.ErrInvalidBlockChecksum) ||
			errors.Is(refErr, lz4.ErrInvalidFrameChecksum)
		switch {
		case err == nil && refErr == nil:
			require.Equal(t, want, got)
		case err == nil && !checksum:
			t.Fatalf("decoded %d bytes; pierrec's reader: %v", len(got), refErr)
		case err != nil && refErr == nil && !bytes.Contains(src, []byte{0x02, 0x21, 0x4C, 0x18}) && len(want) <= 8<<20 &&
			bytes.Count(src, []byte{0x04, 0x22, 0x4D, 0x18}) <= 1:
			t.Fatalf("%v; pierrec's reader decoded %d bytes", err, len(want))
		}
		require.LessOrEqual(t, cap(got), 8<<20, "allocated past the bound")
		// a guess of the output's size, too small or large enough, gives the same bytes or error
		for _, guess := range []int{len(src), len(got), 4 * len(src)} {
			g, gerr := DecodeGuess(src, 8<<20, guess, Fresh)
			require.Equal(t, err == nil, gerr == nil, "guess %d: %v, %v", guess, err, gerr)
			require.Equal(t, got, g, "guess %d", guess)
			require.LessOrEqual(t, cap(g), 8<<20, "guess %d: allocated past the bound", guess)
		}
	})
}
