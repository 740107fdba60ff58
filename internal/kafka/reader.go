package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
)

// TopicReader is connect.TopicReader on a franz-go client that consumes assigned partitions.
type TopicReader struct{ cl *kgo.Client }

// NewTopicReader connects a reader of spec's partitions. Where each starts is resolved here, so that a
// reader started "from the end" reads every record written after it returns.
func NewTopicReader(ctx context.Context, props map[string]string, spec connect.TopicReaderSpec) (*TopicReader, error) {
	opts, err := ClientOpts(props)
	if err != nil {
		return nil, err
	}
	iso := kgo.ReadUncommitted()
	if spec.ReadCommitted {
		iso = kgo.ReadCommitted()
	}
	admin, err := Open(ctx, props)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	starts, err := resolvePositions(ctx, kadm.NewClient(admin), spec)
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{spec.Topic: starts}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), // an offset no longer held
		kgo.FetchIsolationLevel(iso),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	return &TopicReader{cl: cl}, nil
}

// resolvePositions turns spec's positions into offsets: the end of a read_committed reader is the last
// stable offset, the start is the log start, a time the first offset stamped at or after it.
func resolvePositions(ctx context.Context, adm *kadm.Client, spec connect.TopicReaderSpec) (map[int32]kgo.Offset, error) {
	positions := spec.Partitions
	if positions == nil {
		md, err := adm.Metadata(ctx, spec.Topic)
		if err != nil {
			return nil, fmt.Errorf("partitions of %s: %w", spec.Topic, err)
		}
		td, ok := md.Topics[spec.Topic]
		if !ok || td.Err != nil {
			return nil, fmt.Errorf("partitions of %s: %w", spec.Topic, errors.Join(td.Err, errors.New("no such topic")))
		}
		positions = make(map[int32]connect.ReadPosition, len(td.Partitions))
		for p := range td.Partitions {
			positions[p] = connect.ReadPosition{Offset: connect.ReadFromEnd}
		}
	}
	out := make(map[int32]kgo.Offset, len(positions))
	var listed map[string]kadm.ListedOffsets // by kind, listed once
	lookup := func(kind string, p int32, list func() (kadm.ListedOffsets, error)) (int64, error) {
		if listed == nil {
			listed = map[string]kadm.ListedOffsets{}
		}
		lo, ok := listed[kind]
		if !ok {
			var err error
			if lo, err = list(); err == nil {
				err = lo.Error()
			}
			if err != nil {
				return 0, fmt.Errorf("listing offsets of %s: %w", spec.Topic, err)
			}
			listed[kind] = lo
		}
		o, ok := lo.Lookup(spec.Topic, p)
		if !ok {
			return 0, fmt.Errorf("listing offsets of %s: partition %d not found", spec.Topic, p)
		}
		return o.Offset, nil
	}
	for p, pos := range positions {
		var at int64
		var err error
		switch {
		case !pos.After.IsZero():
			ms := pos.After.UnixMilli()
			at, err = lookup(fmt.Sprint("after", ms), p, func() (kadm.ListedOffsets, error) { return adm.ListOffsetsAfterMilli(ctx, ms, spec.Topic) })
		case pos.Offset == connect.ReadFromEnd && spec.ReadCommitted:
			at, err = lookup("stable", p, func() (kadm.ListedOffsets, error) { return adm.ListCommittedOffsets(ctx, spec.Topic) })
		case pos.Offset == connect.ReadFromEnd:
			at, err = lookup("end", p, func() (kadm.ListedOffsets, error) { return adm.ListEndOffsets(ctx, spec.Topic) })
		case pos.Offset == connect.ReadFromStart:
			at, err = lookup("start", p, func() (kadm.ListedOffsets, error) { return adm.ListStartOffsets(ctx, spec.Topic) })
		case pos.Offset >= 0:
			at = pos.Offset
		default:
			err = fmt.Errorf("partition %d of %s: invalid position %d", p, spec.Topic, pos.Offset)
		}
		if err != nil {
			return nil, err
		}
		out[p] = kgo.NewOffset().At(at)
	}
	return out, nil
}

func (r *TopicReader) Poll(ctx context.Context) ([]connect.ConsumedRecord, error) {
	for {
		fs := r.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if fs.IsClientClosed() {
			return nil, kgo.ErrClientClosed
		}
		// other fetch errors (a broker away, a leader moving) are retried by the client
		if fs.NumRecords() == 0 {
			if len(fs.Errors()) > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
			continue
		}
		out := make([]connect.ConsumedRecord, 0, fs.NumRecords())
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, connect.ConsumedRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
				Key: r.Key, Value: r.Value, Timestamp: r.Timestamp})
		})
		return out, nil
	}
}

func (r *TopicReader) Close() { r.cl.Close() }

var _ connect.TopicReader = (*TopicReader)(nil)
