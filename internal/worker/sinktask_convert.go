package worker

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/jsonvalue"
)

// process converts and transforms fetched batches (the resume queue, then b, then any batches already
// waiting) and puts them as one batch.
func (st *sinkTask) process(ctx context.Context, b *batch) error {
	bs := st.ready
	st.ready = nil
	n := 0
	for _, r := range bs {
		n += len(r.msgs)
	}
	if b != nil {
		bs = append(bs, b)
		n += len(b.msgs)
	}
more:
	for n < st.maxBatch {
		select {
		case o := <-st.batches:
			bs = append(bs, o)
			n += len(o.msgs)
		default:
			break more
		}
	}
	st.recordsBuf, st.jsonBuf, st.jsonMembers = st.recordsBuf[:0], st.jsonBuf[:0], st.jsonMembers[:0]
	clear(st.putBatches)
	st.putBatches = st.putBatches[:0]
	for _, b := range bs {
		if !st.assignment[b.tp] || b.epoch < st.seekEpoch[b.tp] {
			continue // fetched before the partition's seek: it is fetched again from the new position
		}
		if st.taskPaused[b.tp] {
			// fetched before the pause: kept for the resume
			st.stashed[b.tp] = append(st.stashed[b.tp], b)
			continue
		}
		if _, seen := st.lastCommitted[b.tp]; !seen && len(b.msgs) > 0 {
			// the session's start position is the last committed one (JVM: positions at assignment)
			st.lastCommitted[b.tp] = b.msgs[0].Offset
			if _, ok := st.current[b.tp]; !ok {
				st.current[b.tp] = b.msgs[0].Offset
			}
		}
		if err := st.convertBatch(ctx, b); err != nil {
			return err
		}
		st.putBatches = append(st.putBatches, b)
	}
	if len(st.recordsBuf) > 0 {
		st.ptrBuf = st.ptrBuf[:0]
		for i := range st.recordsBuf {
			st.ptrBuf = append(st.ptrBuf, &st.recordsBuf[i])
		}
		if err := st.put(ctx, st.ptrBuf); err != nil {
			return err
		}
	} else {
		st.applyPending()
	}
	if st.recycles && st.retryBatch == nil {
		st.recycle()
	}
	return nil
}

// recyclingKeyConverters are the key converters whose Connect keys never alias the record's bytes.
var recyclingKeyConverters = map[string]bool{
	"org.apache.kafka.connect.storage.StringConverter": true,
	"org.apache.kafka.connect.json.JsonConverter":      true,
}

// recyclesRecords reports whether the records of a put may go back to the consumer's pool once the put
// returned: their values reach the task as jsonvalue.Values, which it keeps only as copies, or through
// the JSON converter; their keys through a converter that copies; and no DLQ report or error log keeps
// the originals. A record with headers is never recycled (a header converter may keep its bytes).
func (st *sinkTask) recyclesRecords() bool {
	return st.jsonValues != nil && recyclingKeyConverters[st.keyConvClass] && st.errs.dlq == nil && !st.errs.tolerateAll
}

// recycle gives the records of the batches just put back to the consumer's pool (kgo.Record.Recycle):
// the next fetches decode into their memory.
func (st *sinkTask) recycle() {
	for _, b := range st.putBatches {
		for _, m := range b.msgs {
			if len(m.Headers) == 0 {
				m.Recycle()
			}
		}
	}
}

func (st *sinkTask) convertBatch(ctx context.Context, b *batch) error {
	st.metrics.Read.Add(float64(len(b.msgs)))
	if n := len(b.msgs); n > 0 {
		st.metrics.SetLag(b.tp.Topic, b.tp.Partition, max(b.hwm-(b.msgs[n-1].Offset+1), 0))
		st.noteHWM(b.tp, b.hwm)
	}
	// a batch is of one partition: its offset and topic are noted once, after its last converted record
	next := int64(-1)
	defer func() {
		if next >= 0 {
			// records dropped by the error handler or a filter still advance the offset (once put succeeds)
			st.pending[b.tp] = next
		}
	}()
	active := st.activeTopics == nil || st.activeTopics[b.tp.Topic]
	for _, m := range b.msgs {
		st.recordsBuf = append(st.recordsBuf, connect.SinkRecord{})
		slot := &st.recordsBuf[len(st.recordsBuf)-1]
		rec, skip, err := st.convert(ctx, m, slot)
		if err != nil {
			return err
		}
		next = m.Offset + 1
		if !active {
			active = true
			st.activeTopics[m.Topic] = true
			st.w.topicActive(st.id.Connector, m.Topic, st.id.Task)
		}
		if skip || rec == nil {
			st.recordsBuf = st.recordsBuf[:len(st.recordsBuf)-1]
			continue
		}
		if st.errs.dlq != nil || st.errs.tolerateAll {
			st.raw[rawKey{m.Topic, m.Partition, m.Offset}] = m
		}
		if rec != slot {
			*slot = *rec
		}
	}
	return nil
}

// convert converts m into *rec and runs the transformations on it: the record returned is rec or
// the last transformation's. Records and their jsonvalue.Values live in buffers of the task that the next
// batch reuses, as the records a Put takes are the task's only until it returns.
func (st *sinkTask) convert(ctx context.Context, m *kgo.Record, rec *connect.SinkRecord) (*connect.SinkRecord, bool, error) {
	*rec = connect.SinkRecord{
		Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
		OriginalTopic: m.Topic, OriginalPartition: m.Partition, OriginalOffset: m.Offset,
		Timestamp: connect.NoTimestamp, TimestampType: connect.CreateTime,
	}
	if ms := m.Timestamp.UnixMilli(); ms >= 0 { // a negative one is the producer's "no timestamp" (JVM)
		rec.Timestamp = ms
	}
	if m.Attrs.TimestampType() == 1 {
		rec.TimestampType = connect.LogAppendTime
	}
	if len(m.Headers) > 0 {
		hs, err := st.convertHeaders(m)
		if err != nil {
			skip, err := st.errs.retry(ctx, StageHeaderConverter, st.hdrConvClass, m, err, func() (e error) {
				hs, e = st.convertHeaders(m)
				return e
			})
			if skip || err != nil {
				return nil, skip, err
			}
		}
		rec.Headers = hs
	}
	sv, skip, err := st.convertData(ctx, StageKeyConverter, st.keyConvClass, st.keyConv, m, rec.Headers, m.Key)
	if skip || err != nil {
		return nil, skip, err
	}
	rec.KeySchema, rec.Key = sv.Schema, sv.Value
	if jv := st.jsonValue(m, rec.Headers); jv != nil {
		rec.Value = jv
	} else {
		sv, skip, err = st.convertData(ctx, StageValueConverter, st.valConvClass, st.valConv, m, rec.Headers, m.Value)
		if skip || err != nil {
			return nil, skip, err
		}
		rec.ValueSchema, rec.Value = sv.Schema, sv.Value
	}
	for i := range st.chain {
		step := &st.chain[i]
		out, err := step.apply(rec)
		if err != nil {
			if out, skip, err = st.retryTransform(ctx, step, m, rec, err); skip || err != nil {
				return nil, skip, err
			}
		}
		if out == nil {
			return nil, true, nil
		}
		rec = out
	}
	return rec, false, nil
}

// jsonValue is the value of m left unconverted for the task (jsonvalue.Value), or nil when it is not a
// schemaless JSON object or the task does not take such values. Its members are listed in jsonMembers,
// which, like jsonBuf, is kept until the next batch.
func (st *sinkTask) jsonValue(m *kgo.Record, hs connect.Headers) *jsonvalue.Value {
	if st.jsonValues == nil {
		return nil
	}
	n := len(st.jsonMembers)
	members, ok := st.jsonValues.SchemalessJSONObject(m.Value, st.jsonMembers)
	if !ok {
		return nil
	}
	st.jsonMembers = members
	listed := members[n:len(members):len(members)] // capped: later appends never write into it
	if len(m.Value) > jsonvalue.MaxListedBytes {
		listed = nil // the converter listed none
	}
	st.jsonBuf = append(st.jsonBuf, jsonvalue.Value{Bytes: m.Value, Topic: m.Topic, Headers: hs, Conv: st.valConv, Members: listed})
	return &st.jsonBuf[len(st.jsonBuf)-1]
}

func (st *sinkTask) convertHeaders(m *kgo.Record) (connect.Headers, error) {
	hs := make(connect.Headers, 0, len(m.Headers))
	for _, h := range m.Headers {
		sv, err := st.hdrConv.ToConnectHeader(m.Topic, h.Key, h.Value)
		if err != nil {
			return nil, err
		}
		hs = append(hs, connect.Header{Key: h.Key, Schema: sv.Schema, Value: sv.Value})
	}
	return hs, nil
}

// convertData runs a key or value converter; only a failure goes through the error handler (retryConvert
// is a separate function so that its closure's captures cost nothing on the clean path).
func (st *sinkTask) convertData(ctx context.Context, stage Stage, class string, conv connect.Converter, m *kgo.Record, hs connect.Headers, data []byte) (connect.SchemaAndValue, bool, error) {
	sv, err := conv.ToConnectData(m.Topic, hs, data)
	if err == nil {
		return sv, false, nil
	}
	return st.retryConvert(ctx, stage, class, conv, m, hs, data, err)
}

func (st *sinkTask) retryConvert(ctx context.Context, stage Stage, class string, conv connect.Converter, m *kgo.Record, hs connect.Headers, data []byte, first error) (connect.SchemaAndValue, bool, error) {
	var sv connect.SchemaAndValue
	skip, err := st.errs.retry(ctx, stage, class, m, first, func() (e error) {
		sv, e = conv.ToConnectData(m.Topic, hs, data)
		return e
	})
	return sv, skip, err
}

func (st *sinkTask) retryTransform(ctx context.Context, step *transformStep, m *kgo.Record, rec *connect.SinkRecord, first error) (*connect.SinkRecord, bool, error) {
	var out *connect.SinkRecord
	skip, err := st.errs.retry(ctx, StageTransformation, step.class, m, first, func() (e error) {
		out, e = step.apply(rec)
		return e
	})
	return out, skip, err
}
