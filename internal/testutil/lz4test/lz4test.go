// Package lz4test writes LZ4 frames for tests: with pierrec's writer and any of its options (Frame), and as
// the JVM producer's KafkaLZ4BlockOutputStream writes them, as a franz-go compressor (JVMCompressor).
package lz4test

import (
	"bytes"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Frame writes data as one frame with pierrec's writer and opts.
func Frame(t testing.TB, data []byte, opts ...lz4.Option) []byte {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	require.NoError(t, w.Apply(opts...))
	_, err := w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// JVMCompressor writes lz4 frames as the JVM producer's KafkaLZ4BlockOutputStream does: 64 KiB
// independent blocks, no block or content checksum, no content size.
type JVMCompressor struct{}

// Compress implements kgo.Compressor.
func (JVMCompressor) Compress(dst *bytes.Buffer, src []byte, _ ...kgo.CompressFlag) ([]byte, kgo.CompressionCodecType) {
	w := lz4.NewWriter(dst)
	if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false), lz4.ConcurrencyOption(1)); err != nil {
		return nil, kgo.CodecError
	}
	if _, err := w.Write(src); err != nil {
		return nil, kgo.CodecError
	}
	if err := w.Close(); err != nil {
		return nil, kgo.CodecError
	}
	return dst.Bytes(), kgo.CodecLz4
}
