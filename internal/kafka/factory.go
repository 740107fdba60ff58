package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
)

// Open connects a franz-go client built from the client properties (ClientOpts) and extra options, and
// checks that it reaches a broker and authenticates, so that a client that cannot fails at start with
// the cause.
func Open(ctx context.Context, props map[string]string, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := ClientOpts(props)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, err
	}
	if err := PingConsumer(ctx, cl, props); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// ProducerOpts are the franz-go options of the producer keys of props: acks (all by default, as
// Connect's internal producers), enable.idempotence, compression.type, linger.ms, max.request.size,
// delivery.timeout.ms and request.timeout.ms. Records of one partition stay in order across retries.
func ProducerOpts(props map[string]string) ([]kgo.Opt, error) {
	// delivery.timeout.ms: the JVM's default bounds a record's retries, where franz-go's would retry forever
	opts := []kgo.Opt{kgo.RecordDeliveryTimeout(2 * time.Minute)}
	idempotent := true
	switch v := strings.TrimSpace(props["enable.idempotence"]); strings.ToLower(v) {
	case "", "true":
	case "false":
		idempotent = false
	default:
		return nil, fmt.Errorf("invalid value %s for configuration enable.idempotence: expected true or false", v)
	}
	switch v := strings.TrimSpace(props["acks"]); strings.ToLower(v) {
	case "", "all", "-1":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "0":
		opts, idempotent = append(opts, kgo.RequiredAcks(kgo.NoAck())), false
	case "1":
		opts, idempotent = append(opts, kgo.RequiredAcks(kgo.LeaderAck())), false
	default:
		return nil, fmt.Errorf("invalid value %s for configuration acks: use all, -1, 0 or 1", v)
	}
	if !idempotent {
		// without sequence numbers, one request in flight per broker keeps a partition's records in order
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(1))
	}
	switch v := strings.TrimSpace(props["compression.type"]); strings.ToLower(v) {
	case "", "none":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
	case "gzip":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	case "snappy":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	case "lz4":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case "zstd":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	default:
		return nil, fmt.Errorf("invalid value %s for configuration compression.type: use none, gzip, snappy, lz4 or zstd", v)
	}
	if v := strings.TrimSpace(props["max.request.size"]); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("invalid value %s for configuration max.request.size", v)
		}
		opts = append(opts, kgo.ProducerBatchMaxBytes(int32(n)))
	}
	for key, opt := range map[string]func(time.Duration) kgo.Opt{
		"linger.ms":           func(d time.Duration) kgo.Opt { return kgo.ProducerLinger(d) },
		"delivery.timeout.ms": func(d time.Duration) kgo.Opt { return kgo.RecordDeliveryTimeout(d) },
		"request.timeout.ms":  func(d time.Duration) kgo.Opt { return kgo.ProduceRequestTimeout(d) },
	} {
		var d time.Duration
		if err := durationMS(props, key, &d); err != nil {
			return nil, err
		}
		if d > 0 {
			opts = append(opts, opt(d))
		}
	}
	return opts, nil
}

// EnsureTopic creates a topic unless it exists (the JVM's TopicAdmin.createOrFindTopics): an existing
// topic is left as it is.
func EnsureTopic(ctx context.Context, cl *kgo.Client, spec connect.TopicSpec) error {
	configs := make(map[string]*string, len(spec.Configs))
	for k, v := range spec.Configs {
		configs[k] = &v
	}
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, spec.Partitions, spec.ReplicationFactor, configs, spec.Name)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating topic %s: %w", spec.Name, err)
	}
	return nil
}
