package store

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topicPartitions returns how many partitions topic has, and whether it exists.
func topicPartitions(ctx context.Context, admin *kadm.Client, topic string) (int, bool, error) {
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		return 0, false, err
	}
	d, ok := details[topic]
	switch {
	case !ok, errors.Is(d.Err, kerr.UnknownTopicOrPartition):
		return 0, false, nil
	case d.Err != nil:
		return 0, false, d.Err
	}
	return len(d.Partitions), true, nil
}

// topicConfig returns the value of one configuration of topic (empty if unset), failing with the topic's own
// error code (UNKNOWN_TOPIC_OR_PARTITION for a topic not known yet).
func topicConfig(ctx context.Context, admin *kadm.Client, topic, name string) (string, error) {
	rcs, err := admin.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return "", err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return "", err
	}
	if rc.Err != nil {
		return "", rc.Err
	}
	for _, c := range rc.Configs {
		if c.Key == name && c.Value != nil {
			return *c.Value, nil
		}
	}
	return "", nil
}
