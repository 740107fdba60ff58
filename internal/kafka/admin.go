package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/connectd/connectd/connect"
)

// The topic metadata and group offsets of TopicAdmin (connect.TopicAdmin).

func (a *TopicAdmin) Metadata(ctx context.Context, topics ...string) (connect.TopicMetadata, error) {
	md, err := kadm.NewClient(a.cl).Metadata(ctx, topics...)
	if err != nil {
		return connect.TopicMetadata{}, fmt.Errorf("metadata: %w", err)
	}
	out := connect.TopicMetadata{Brokers: len(md.Brokers), Partitions: make(map[string][]int32, len(md.Topics))}
	for name, td := range md.Topics {
		if td.Err != nil {
			continue // missing, or not authorized
		}
		ps := make([]int32, 0, len(td.Partitions))
		for p := range td.Partitions {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		out.Partitions[name] = ps
	}
	return out, nil
}

func (a *TopicAdmin) GroupOffsets(ctx context.Context, group, topic string) (map[int32]int64, error) {
	resp, err := kadm.NewClient(a.cl).FetchOffsets(ctx, group)
	if err == nil {
		err = resp.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]int64{}, nil // a group that never committed
	}
	if err != nil {
		return nil, fmt.Errorf("offsets of group %s: %w", group, err)
	}
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out, nil
}

func (a *TopicAdmin) CommitGroupOffsets(ctx context.Context, group string, offsets []connect.TopicPartitionOffset) error {
	os := kadm.Offsets{}
	for _, o := range offsets {
		os.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: o.Offset, LeaderEpoch: -1})
	}
	resp, err := kadm.NewClient(a.cl).CommitOffsets(ctx, group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("committing offsets of group %s: %w", group, err)
	}
	return nil
}

func (a *TopicAdmin) GroupMembers(ctx context.Context, group string) (int, error) {
	described, err := kadm.NewClient(a.cl).DescribeGroups(ctx, group)
	if err == nil {
		err = described.Error()
	}
	// an unknown classic group is described as Dead, no error; GROUP_ID_NOT_FOUND is the answer for a group of
	// the consumer protocol (KIP-848), whose members this request does not list
	if err != nil {
		return 0, fmt.Errorf("describing group %s: %w", group, err)
	}
	n := 0
	for _, g := range described {
		n += len(g.Members)
	}
	return n, nil
}
