package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
)

// Producer is connect.Producer on a franz-go client.
type Producer struct {
	cl *kgo.Client
}

// NewProducer connects a producer from client and producer properties; a record with a partition
// (not connect.AnyPartition) goes to that partition, any other by the murmur2 hash of its key as the
// JVM's default partitioner.
func NewProducer(ctx context.Context, props map[string]string, extra ...kgo.Opt) (*Producer, error) {
	popts, err := ProducerOpts(props)
	if err != nil {
		return nil, err
	}
	opts := append(popts, kgo.RecordPartitioner(recordPartitioner()))
	cl, err := Open(ctx, props, append(opts, extra...)...)
	if err != nil {
		return nil, err
	}
	return &Producer{cl: cl}, nil
}

// Client is the producer's franz-go client.
func (p *Producer) Client() *kgo.Client { return p.cl }

// recordPartitioner keeps a record's own partition when it has one (kgo.Record.Partition ≥ 0 is set
// by Produce only for those), else hashes the key.
func recordPartitioner() kgo.Partitioner {
	byKey := kgo.StickyKeyPartitioner(nil)
	return kgo.BasicConsistentPartitioner(func(topic string) func(*kgo.Record, int) int {
		hash := byKey.ForTopic(topic)
		return func(r *kgo.Record, n int) int {
			if r.Partition >= 0 {
				return int(r.Partition) // ≥ n fails the record as an invalid partition
			}
			return hash.Partition(r, n)
		}
	})
}

// errInvalidPartition is the failure of a record whose partition the topic lacks.
var errInvalidPartition = errors.New("the record's partition is not a partition of its topic")

// Produce sends records and waits for each; the first failure is a *connect.ProduceError.
func (p *Producer) Produce(ctx context.Context, records ...*connect.ProducerRecord) error {
	if len(records) == 0 {
		return nil
	}
	krs := make([]*kgo.Record, len(records))
	for i, r := range records {
		kr := &kgo.Record{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
		if r.Partition < 0 {
			kr.Partition = -1
		}
		if len(r.Headers) > 0 {
			kr.Headers = make([]kgo.RecordHeader, len(r.Headers))
			for j, h := range r.Headers {
				kr.Headers[j] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
			}
		}
		krs[i] = kr
	}
	results := p.cl.ProduceSync(ctx, krs...)
	var first *connect.ProduceError
	for _, res := range results {
		if res.Err == nil {
			continue
		}
		if first == nil {
			err := res.Err
			// franz-go fails a partition choice out of range with an untyped error
			if records[indexOf(krs, res.Record)].Partition >= 0 && strings.Contains(err.Error(), "invalid record partitioning choice") {
				err = fmt.Errorf("%w: %w", errInvalidPartition, err)
			}
			first = &connect.ProduceError{Topic: res.Record.Topic, Partition: res.Record.Partition, Total: len(records), Fatal: fatalProduce(err), Err: err}
		}
		first.Failed++
	}
	if first != nil {
		return first
	}
	return nil
}

func indexOf(rs []*kgo.Record, r *kgo.Record) int {
	for i := range rs {
		if rs[i] == r {
			return i
		}
	}
	return 0
}

// fatalProduce reports failures that sending again cannot fix.
func fatalProduce(err error) bool {
	return errors.Is(err, errInvalidPartition) || errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge) ||
		errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.InvalidTopicException) || errors.Is(err, kerr.InvalidRecord)
}

// closeFlushTimeout bounds the wait for records still in flight at Close (a Produce whose context ended).
const closeFlushTimeout = 30 * time.Second

// Close waits a while for records in flight and closes the client.
func (p *Producer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeFlushTimeout)
	defer cancel()
	_ = p.cl.Flush(ctx)
	p.cl.Close()
}

// TransactionalProducer is connect.TransactionalProducer on a franz-go client.
type TransactionalProducer struct{ Producer }

// NewTransactionalProducer connects a producer with transactional.id transactionalID; connecting
// initialises the id with the transaction coordinator, fencing older producers of the id.
func NewTransactionalProducer(ctx context.Context, props map[string]string, transactionalID string, extra ...kgo.Opt) (*TransactionalProducer, error) {
	p, err := NewProducer(ctx, props, append([]kgo.Opt{kgo.TransactionalID(transactionalID)}, extra...)...)
	if err != nil {
		return nil, err
	}
	return &TransactionalProducer{Producer: *p}, nil
}

func (p *TransactionalProducer) BeginTransaction() error { return p.cl.BeginTransaction() }

func (p *TransactionalProducer) CommitTransaction(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return err
	}
	return p.cl.EndTransaction(ctx, kgo.TryCommit)
}

func (p *TransactionalProducer) AbortTransaction(ctx context.Context) error {
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return err
	}
	return p.cl.EndTransaction(ctx, kgo.TryAbort)
}

// TopicAdmin is connect.TopicAdmin on a franz-go client.
type TopicAdmin struct{ cl *kgo.Client }

// NewTopicAdmin connects an admin client from client properties.
func NewTopicAdmin(ctx context.Context, props map[string]string) (*TopicAdmin, error) {
	cl, err := Open(ctx, props)
	if err != nil {
		return nil, err
	}
	return &TopicAdmin{cl: cl}, nil
}

func (a *TopicAdmin) EnsureTopic(ctx context.Context, spec connect.TopicSpec) error {
	return EnsureTopic(ctx, a.cl, spec)
}

func (a *TopicAdmin) Close() { a.cl.Close() }

var (
	_ connect.Producer              = (*Producer)(nil)
	_ connect.TransactionalProducer = (*TransactionalProducer)(nil)
	_ connect.TopicAdmin            = (*TopicAdmin)(nil)
)
