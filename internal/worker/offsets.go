package worker

import (
	"errors"
	"fmt"
	"sort"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
)

// GroupOffsets is the committed offsets of a sink connector's consumer group (GET /connectors/{n}/offsets).
func (w *Worker) GroupOffsets(group string) (map[connect.TopicPartition]int64, error) {
	admin, closeFn, err := w.admin()
	if err != nil {
		return nil, err
	}
	defer closeFn()
	out := map[connect.TopicPartition]int64{}
	resp, err := admin.ListConsumerGroupOffsets(group, nil)
	// A group that never committed has no offsets: brokers with the KIP-848 group coordinator (and kfake) say
	// so with GROUP_ID_NOT_FOUND, older ones with an empty answer.
	if errors.Is(err, sarama.ErrGroupIDNotFound) || (err == nil && resp.Err == sarama.ErrGroupIDNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing offsets of group %s: %w", group, err)
	}
	if resp.Err != sarama.ErrNoError {
		return nil, fmt.Errorf("listing offsets of group %s: %w", group, resp.Err)
	}
	for topic, parts := range resp.Blocks {
		for p, b := range parts {
			if b.Err == sarama.ErrNoError && b.Offset >= 0 {
				out[connect.TopicPartition{Topic: topic, Partition: p}] = b.Offset
			}
		}
	}
	return out, nil
}

// GroupIsEmpty reports whether the group has no active members (offsets may only be altered then).
func (w *Worker) GroupIsEmpty(group string) (bool, error) {
	admin, closeFn, err := w.admin()
	if err != nil {
		return false, err
	}
	defer closeFn()
	ds, err := admin.DescribeConsumerGroups([]string{group})
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		if len(d.Members) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// AlterGroupOffsets commits the given offsets for the group; a nil offset deletes the partition's offset.
func (w *Worker) AlterGroupOffsets(group string, offsets map[connect.TopicPartition]*int64) error {
	props := w.cfg.ClientProps("admin")
	cfg, err := kafka.NewConfig(props)
	if err != nil {
		return err
	}
	client, err := kafka.NewClient(kafka.Brokers(props), cfg)
	if err != nil {
		return fmt.Errorf("connecting to Kafka: %w", err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(nopCloseClient{client})
	if err != nil {
		return err
	}
	defer admin.Close()
	var tps []connect.TopicPartition
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].String() < tps[j].String() })
	var toCommit []connect.TopicPartition
	for _, tp := range tps {
		if offsets[tp] == nil {
			if err := admin.DeleteConsumerGroupOffset(group, tp.Topic, tp.Partition); err != nil &&
				!errors.Is(err, sarama.ErrUnknownTopicOrPartition) && !errors.Is(err, sarama.ErrGroupIDNotFound) {
				return fmt.Errorf("resetting offset of %s: %w", tp, err)
			}
			continue
		}
		toCommit = append(toCommit, tp)
	}
	if len(toCommit) == 0 {
		return nil
	}
	coord, err := client.Coordinator(group)
	if err != nil {
		return fmt.Errorf("finding the coordinator of %s: %w", group, err)
	}
	req := &sarama.OffsetCommitRequest{ConsumerGroup: group, ConsumerGroupGeneration: -1, Version: 2, RetentionTime: -1}
	for _, tp := range toCommit {
		req.AddBlock(tp.Topic, tp.Partition, *offsets[tp], 0, "")
	}
	resp, err := coord.CommitOffset(req)
	if err != nil {
		return fmt.Errorf("committing offsets for %s: %w", group, err)
	}
	for topic, parts := range resp.Errors {
		for p, kerr := range parts {
			if kerr != sarama.ErrNoError {
				return fmt.Errorf("committing offset of %s-%d: %w", topic, p, kerr)
			}
		}
	}
	return nil
}

// DeleteGroup removes the consumer group (DELETE /connectors/{n}/offsets); a missing group is fine.
func (w *Worker) DeleteGroup(group string) error {
	admin, closeFn, err := w.admin()
	if err != nil {
		return err
	}
	defer closeFn()
	if err := admin.DeleteConsumerGroup(group); err != nil && !errors.Is(err, sarama.ErrGroupIDNotFound) {
		return fmt.Errorf("deleting consumer group %s: %w", group, err)
	}
	return nil
}

// ClusterID reads the Kafka cluster id (GET /).
func (w *Worker) ClusterID() (string, error) {
	props := w.cfg.ClientProps("admin")
	cfg, err := kafka.NewConfig(props)
	if err != nil {
		return "", err
	}
	client, err := kafka.NewClient(kafka.Brokers(props), cfg)
	if err != nil {
		return "", err
	}
	defer client.Close()
	b, err := client.Controller()
	if err != nil {
		return "", err
	}
	md, err := b.GetMetadata(&sarama.MetadataRequest{Version: 2})
	if err != nil {
		return "", err
	}
	if md.ClusterID == nil {
		return "", nil
	}
	return *md.ClusterID, nil
}

func (w *Worker) admin() (sarama.ClusterAdmin, func(), error) {
	props := w.cfg.ClientProps("admin")
	cfg, err := kafka.NewConfig(props)
	if err != nil {
		return nil, nil, err
	}
	admin, err := sarama.NewClusterAdmin(kafka.Brokers(props), cfg)
	if err != nil {
		return nil, nil, connect.Retriable(fmt.Errorf("connecting to Kafka: %w", err))
	}
	return admin, func() { admin.Close() }, nil
}
