package worker

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/metrics"
)

// retentionCheckInterval spaces the checks of the consumed topics' retention; topic configs rarely change.
const retentionCheckInterval = 10 * time.Minute

// topicRetention is what a topic keeps: its retention.ms, or +Inf when it keeps records without a time bound
// (retention.ms=-1, or compaction without deletion, which keeps each key's latest record).
type topicRetention struct {
	topic     string
	retention time.Duration // math.MaxInt64: unbounded
}

// watchRetention runs in each connector's task 0 (every connector has exactly one, wherever it runs): it
// exports the retention of the topics the connector consumes and warns, per topic, when the retention is
// shorter than the worker's connectd.topic.retention.required.ms, the window in which a downstream
// system must be recoverable by replaying the topic.
func (st *sinkTask) watchRetention(ctx context.Context) {
	if st.id.Task != 0 {
		return
	}
	required := st.w.cfg.RetentionRequired
	adm := kadm.NewClient(st.client)
	first := time.NewTimer(time.Second) // the group's first assignment names the topics of a regex
	defer first.Stop()
	tick := time.NewTicker(retentionCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-first.C:
		case <-tick.C:
		}
		topics := st.client.GetConsumeTopics()
		if len(topics) == 0 {
			first.Reset(time.Second)
			continue
		}
		found, err := describeRetention(ctx, adm, topics)
		if err != nil {
			st.log.Warn("cannot read the retention of the consumed topics", "error", err)
			continue
		}
		for _, r := range found {
			secs := math.Inf(1)
			if r.retention != math.MaxInt64 {
				secs = r.retention.Seconds()
			}
			short := required > 0 && r.retention < required
			metrics.SetTopicRetention(st.id.Connector, r.topic, secs, short)
			if short {
				st.log.Warn("topic retention is shorter than the required replay window: a downstream system "+
					"that falls further behind, or needs a rebuild from Kafka, cannot get its records back",
					"topic", r.topic, "retention", r.retention, "required", required)
			}
		}
	}
}

// describeRetention reads retention.ms and cleanup.policy of topics (the broker resolves defaults).
func describeRetention(ctx context.Context, adm *kadm.Client, topics []string) ([]topicRetention, error) {
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var out []topicRetention
	for _, rc := range rcs {
		if rc.Err != nil {
			return nil, rc.Err
		}
		r := topicRetention{topic: rc.Name, retention: math.MaxInt64}
		policy := "delete"
		for _, c := range rc.Configs {
			if c.Value == nil {
				continue
			}
			switch c.Key {
			case "retention.ms":
				if ms, err := strconv.ParseInt(*c.Value, 10, 64); err == nil && ms >= 0 {
					r.retention = time.Duration(ms) * time.Millisecond
				}
			case "cleanup.policy":
				policy = *c.Value
			}
		}
		if !strings.Contains(policy, "delete") {
			r.retention = math.MaxInt64
		}
		out = append(out, r)
	}
	return out, nil
}
