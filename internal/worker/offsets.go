package worker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
)

// adminTimeout bounds one offsets or cluster request of the REST API, connecting included.
const adminTimeout = 30 * time.Second

// GroupOffsets is the committed offsets of a sink connector's consumer group (GET /connectors/{n}/offsets).
func (w *Worker) GroupOffsets(group string) (map[connect.TopicPartition]int64, error) {
	ctx, adm, closeFn, err := w.admin()
	if err != nil {
		return nil, err
	}
	defer closeFn()
	out := map[connect.TopicPartition]int64{}
	resp, err := adm.FetchOffsets(ctx, group)
	// A group that never committed has no offsets: brokers with the KIP-848 group coordinator (and kfake) say
	// so with GROUP_ID_NOT_FOUND, older ones with an empty answer.
	if errors.Is(err, kerr.GroupIDNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing offsets of group %s: %w", group, err)
	}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[connect.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.At
		}
	})
	return out, nil
}

// GroupIsEmpty reports whether the group has no active members (offsets may only be altered then).
func (w *Worker) GroupIsEmpty(group string) (bool, error) {
	ctx, adm, closeFn, err := w.admin()
	if err != nil {
		return false, err
	}
	defer closeFn()
	ds, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return false, err
	}
	for _, d := range ds {
		if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
			return false, fmt.Errorf("describing group %s: %w", group, d.Err)
		}
		if len(d.Members) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// AlterGroupOffsets commits the given offsets for the group; a nil offset deletes the partition's offset.
func (w *Worker) AlterGroupOffsets(group string, offsets map[connect.TopicPartition]*int64) error {
	ctx, adm, closeFn, err := w.admin()
	if err != nil {
		return err
	}
	defer closeFn()
	var tps []connect.TopicPartition
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool { return tps[i].String() < tps[j].String() })
	toCommit := kadm.Offsets{}
	for _, tp := range tps {
		if offsets[tp] == nil {
			resp, err := adm.DeleteOffsets(ctx, group, kadm.TopicsSet{tp.Topic: {tp.Partition: {}}})
			if err == nil {
				err = resp[tp.Topic][tp.Partition]
			}
			if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, kerr.GroupIDNotFound) {
				return fmt.Errorf("resetting offset of %s: %w", tp, err)
			}
			continue
		}
		toCommit.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: *offsets[tp], LeaderEpoch: -1})
	}
	if len(toCommit) == 0 {
		return nil
	}
	resp, err := adm.CommitOffsets(ctx, group, toCommit)
	if err != nil {
		return fmt.Errorf("committing offsets for %s: %w", group, err)
	}
	for _, o := range resp.Sorted() {
		if o.Err != nil {
			return fmt.Errorf("committing offset of %s-%d: %w", o.Topic, o.Partition, o.Err)
		}
	}
	return nil
}

// DeleteGroup removes the consumer group (DELETE /connectors/{n}/offsets); a missing group is fine.
func (w *Worker) DeleteGroup(group string) error {
	ctx, adm, closeFn, err := w.admin()
	if err != nil {
		return err
	}
	defer closeFn()
	resp, err := adm.DeleteGroups(ctx, group)
	if err == nil {
		err = resp[group].Err
	}
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return fmt.Errorf("deleting consumer group %s: %w", group, err)
	}
	return nil
}

// ClusterID reads the Kafka cluster id (GET /).
func (w *Worker) ClusterID() (string, error) {
	ctx, adm, closeFn, err := w.admin()
	if err != nil {
		return "", err
	}
	defer closeFn()
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return "", err
	}
	return md.Cluster, nil
}

// admin connects an admin client with the worker's admin properties; its context bounds the request.
func (w *Worker) admin() (context.Context, *kadm.Client, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	cl, err := kafka.Open(ctx, w.cfg.ClientProps("admin"))
	if err != nil {
		cancel()
		return nil, nil, nil, connect.Retriable(fmt.Errorf("connecting to Kafka: %w", err))
	}
	return ctx, kadm.NewClient(cl), func() { cl.Close(); cancel() }, nil
}
