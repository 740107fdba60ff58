package worker

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters/header"
	"github.com/connectd/connectd/converters/jsonconv"
	"github.com/connectd/connectd/converters/str"
	"github.com/connectd/connectd/internal/kafka"
)

// A task whose records' bytes cannot outlive the put that took them decompresses fetched batches into
// pooled buffers (kafka.DecompressPool) and recycles each record once that put succeeded: a batch's
// buffer is reused when all its records were recycled. A record recycled while anything still reads
// its key, value or headers would hand over another batch's bytes, so recycling is decided per task
// and conservatively; a record that is not recycled is merely left to the garbage collector.
//
// What may read a record's bytes after its conversion:
//   - the put that took it, and its redeliveries: a jsonvalue.Value is the record's value bytes, valid
//     until Put returns (connect/jsonvalue), and a retriable failure keeps the batch for redelivery;
//   - a converter's result that aliases them: ByteArrayConverter's, or an unknown converter's;
//   - the originals kept for the DLQ and the errant-record reporter (sinkTask.raw), which produce the
//     bytes as consumed.
//
// Records dropped before they were put (a seek, a revocation, a rewind, a stash for a paused partition
// that is dropped) are not recycled.

// newDecompressPool makes a recycling task's pool.
var newDecompressPool = func() kgo.PoolDecompressBytes { return kafka.NewDecompressPool() }

// recyclesRecords says whether the task recycles its records: its key, value and header converters
// copy what they take of the bytes, and it keeps no originals for error reports.
func (st *sinkTask) recyclesRecords() bool {
	return st.errs.dlq == nil && !st.errs.tolerateAll &&
		copiesBytes(st.keyConv, st.keyConvClass) && copiesBytes(st.valConv, st.valConvClass) &&
		copiesBytes(st.hdrConv, st.hdrConvClass)
}

// copiesBytes says whether c, of class, is a converter known to copy every byte or string it takes
// from the bytes it converts.
func copiesBytes(c any, class string) bool {
	switch c.(type) {
	case *jsonconv.Converter, *str.Converter, *header.Converter:
		return true
	case connect.HeaderConverter:
		// the registry wraps a converter that serves as header converter: known by its class
		return class == jsonconv.ClassName || class == str.ClassName
	}
	return false
}

// recycleRecords recycles the records of the puts since the last successful one, after a put
// succeeded: none of them is in a batch kept for redelivery, and the task has them no longer.
func (st *sinkTask) recycleRecords() {
	for i, msgs := range st.putMsgs {
		for _, m := range msgs {
			m.Recycle()
		}
		st.putMsgs[i] = nil
	}
	st.putMsgs = st.putMsgs[:0]
}

// releaseIdleBuffers empties the free buffers of the pool of a task that put nothing for a flush interval:
// an idle task keeps none.
func (st *sinkTask) releaseIdleBuffers() {
	if p, ok := st.pool.(interface{ Release() }); ok {
		p.Release()
	}
}
