package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/connectd/connectd/connect"
)

// Producer is connect.Producer on a franz-go client.
type Producer struct {
	cl              *kgo.Client
	deliveryTimeout time.Duration // delivery.timeout.ms: how long one Produce may wait for its records
}

// NewProducer connects a producer from client and producer properties; a record with a partition
// (not connect.AnyPartition) goes to that partition, any other by the murmur2 hash of its key as the
// JVM's default partitioner.
func NewProducer(ctx context.Context, props map[string]string, extra ...kgo.Opt) (*Producer, error) {
	popts, err := ProducerOpts(props)
	if err != nil {
		return nil, err
	}
	dt, err := DeliveryTimeout(props)
	if err != nil {
		return nil, err
	}
	opts := append(popts, kgo.RecordPartitioner(recordPartitioner()))
	cl, err := Open(ctx, props, append(opts, extra...)...)
	if err != nil {
		return nil, err
	}
	return &Producer{cl: cl, deliveryTimeout: dt}, nil
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
	ctx, cancel := context.WithTimeout(ctx, p.deliveryTimeout)
	defer cancel()
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
type TransactionalProducer struct {
	Producer
	id       string
	produced atomic.Bool // a record of the current transaction was acknowledged
}

// NewTransactionalProducer connects a producer with transactional.id transactionalID (and the JVM's
// transaction.timeout.ms); connecting initialises the id with the transaction coordinator, fencing older
// producers of the id and ending the transaction they left open.
//
// Its transactions add their partitions and group offsets explicitly (TxnOffsetCommit up to version 4,
// not the implicit registration of KIP-890 part 2): SendOffsetsToTransaction commits offsets for a group
// this client is not a member of, which franz-go offers only to a group consumer.
func NewTransactionalProducer(ctx context.Context, props map[string]string, transactionalID string, extra ...kgo.Opt) (*TransactionalProducer, error) {
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(int16(kmsg.TxnOffsetCommit), 4)
	opts := []kgo.Opt{kgo.TransactionalID(transactionalID), kgo.MaxVersions(versions)}
	var timeout time.Duration
	if err := durationMS(props, "transaction.timeout.ms", &timeout); err != nil {
		return nil, err
	} else if timeout > 0 {
		opts = append(opts, kgo.TransactionTimeout(timeout))
	}
	p, err := NewProducer(ctx, props, append(opts, extra...)...)
	if err != nil {
		return nil, err
	}
	if _, _, err := p.cl.ProducerID(ctx); err != nil { // InitProducerId: fences the id's older producers now
		p.cl.Close()
		return nil, fmt.Errorf("initializing transactional id %s: %w", transactionalID, err)
	}
	return &TransactionalProducer{Producer: *p, id: transactionalID}, nil
}

func (p *TransactionalProducer) BeginTransaction() error {
	p.produced.Store(false)
	return p.cl.BeginTransaction()
}

func (p *TransactionalProducer) Produce(ctx context.Context, records ...*connect.ProducerRecord) error {
	err := p.Producer.Produce(ctx, records...)
	if err == nil && len(records) > 0 {
		p.produced.Store(true)
	}
	return err
}

// CommitTransaction flushes and commits; a failure of the commit request whose answer did not come
// wraps connect.ErrTransactionOutcomeUnknown.
func (p *TransactionalProducer) CommitTransaction(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return err
	}
	err := p.cl.EndTransaction(ctx, kgo.TryCommit)
	if err == nil || errors.Is(err, kerr.OperationNotAttempted) || errors.Is(err, kerr.TransactionAbortable) {
		return err
	}
	if ke, ok := errors.AsType[*kerr.Error](err); ok && !ke.Retriable && ke.Code != kerr.UnknownServerError.Code {
		return err // the coordinator refused the commit
	}
	return fmt.Errorf("%w: %w", connect.ErrTransactionOutcomeUnknown, err)
}

func (p *TransactionalProducer) AbortTransaction(ctx context.Context) error {
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return err
	}
	return p.cl.EndTransaction(ctx, kgo.TryAbort)
}

// SendOffsetsToTransaction adds group's offsets partition to the transaction (AddOffsetsToTxn) and
// commits offsets in it (TxnOffsetCommit with no member and generation -1, as the JVM producer's
// sendOffsetsToTransaction(offsets, groupId)).
func (p *TransactionalProducer) SendOffsetsToTransaction(ctx context.Context, group string, offsets []connect.TopicPartitionOffset) error {
	if len(offsets) == 0 {
		return nil
	}
	if !p.produced.Load() {
		return errors.New("offsets sent to a transaction that has produced no record")
	}
	id, epoch, err := p.cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = p.id, id, epoch, group
	for {
		resp, err := add.RequestWith(ctx, p.cl)
		if err != nil {
			return fmt.Errorf("adding the offsets of group %s to the transaction: %w", group, err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		if errors.Is(err, kerr.ConcurrentTransactions) { // the previous transaction is still being completed
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("adding the offsets of group %s to the transaction: %w", group, err)
		}
		break
	}
	commit := kmsg.NewPtrTxnOffsetCommitRequest()
	commit.TransactionalID, commit.Group, commit.ProducerID, commit.ProducerEpoch = p.id, group, id, epoch
	commit.Generation, commit.MemberID = -1, ""
	byTopic := map[string]int{}
	for _, o := range offsets {
		i, ok := byTopic[o.Topic]
		if !ok {
			i = len(commit.Topics)
			byTopic[o.Topic] = i
			t := kmsg.NewTxnOffsetCommitRequestTopic()
			t.Topic = o.Topic
			commit.Topics = append(commit.Topics, t)
		}
		part := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		part.Partition, part.Offset, part.LeaderEpoch = o.Partition, o.Offset, -1
		commit.Topics[i].Partitions = append(commit.Topics[i].Partitions, part)
	}
	resp, err := commit.RequestWith(ctx, p.cl)
	if err != nil {
		return fmt.Errorf("committing the offsets of group %s in the transaction: %w", group, err)
	}
	for _, t := range resp.Topics {
		for _, part := range t.Partitions {
			if err := kerr.ErrorForCode(part.ErrorCode); err != nil {
				return fmt.Errorf("committing the offset of %s-%d for group %s in the transaction: %w", t.Topic, part.Partition, group, err)
			}
		}
	}
	return nil
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
