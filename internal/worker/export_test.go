package worker

import "github.com/twmb/franz-go/pkg/kgo"

// SetDecompressPool makes the recycling tasks started from now on decompress into the pools f makes,
// until restore is called (once the worker that started them stopped).
func SetDecompressPool(f func() kgo.PoolDecompressBytes) (restore func()) {
	old := newDecompressPool
	newDecompressPool = f
	return func() { newDecompressPool = old }
}
