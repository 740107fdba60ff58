package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/state"
)

func (st *sinkTask) openConsumer() error {
	props := map[string]string{}
	for k, v := range st.w.cfg.ClientProps("consumer") {
		props[k] = v
	}
	for k, v := range connect.WithPrefix(st.connProps, "consumer.override.") {
		props[k] = v
	}
	cfg, err := kafka.NewConfig(props)
	if err != nil {
		return err
	}
	if err := kafka.ApplyConsumer(cfg, props); err != nil {
		return err
	}
	cfg.ClientID = fmt.Sprintf("connector-consumer-%s-%d", st.id.Connector, st.id.Task)
	if v := props["client.id"]; v != "" {
		cfg.ClientID = v
	}
	st.groupID = "connect-" + st.id.Connector
	if v := props["group.id"]; v != "" {
		st.groupID = v
	}
	st.maxBatch = 500
	if v := props["max.poll.records"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("invalid max.poll.records %q", v)
		}
		st.maxBatch = n
	}
	// Every connection of the consumer goes through the wakeup, which a stop uses to interrupt a join.
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = st.wakeup.withDialer(&net.Dialer{Timeout: cfg.Net.DialTimeout, KeepAlive: cfg.Net.KeepAlive, LocalAddr: cfg.Net.LocalAddr})
	client, err := kafka.NewClient(kafka.Brokers(props), cfg)
	if err != nil {
		return connect.Retriable(fmt.Errorf("creating consumer for %s: %w", st.groupID, err))
	}
	group, err := sarama.NewConsumerGroupFromClient(st.groupID, client)
	if err != nil {
		client.Close()
		return fmt.Errorf("creating consumer group %s: %w", st.groupID, err)
	}
	st.client, st.group = client, group
	return nil
}

// consume keeps the group session alive; each session ends at a rebalance, or when the loop asks for a
// rejoin (a rewind of partitions that are already being fetched).
func (st *sinkTask) consume(ctx context.Context, done chan struct{}) {
	defer close(done)
	defer st.wakeup.consumeEnded()
	h := &groupHandler{st: st}
	for ctx.Err() == nil {
		topics, err := st.resolveTopics()
		if err != nil || len(topics) == 0 {
			if err != nil {
				st.log.Warn("resolving topics", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				continue
			}
		}
		sessCtx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-st.restartCh:
				cancel()
			case <-sessCtx.Done():
			}
		}()
		if st.topicsRegex != nil {
			go st.watchTopics(sessCtx, cancel, topics)
		}
		err = st.group.Consume(sessCtx, topics, h)
		st.wakeup.leaveSession()
		cancel()
		if err != nil && ctx.Err() == nil {
			if errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			}
			st.log.Warn("consumer group session ended", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
}

func (st *sinkTask) resolveTopics() ([]string, error) {
	if st.topicsRegex == nil {
		return st.topics, nil
	}
	if err := st.client.RefreshMetadata(); err != nil {
		return nil, err
	}
	all, err := st.client.Topics()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range all {
		if m := st.topicsRegex.FindString(t); m == t {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

// watchTopics ends the session when the regex matches a different topic set.
func (st *sinkTask) watchTopics(ctx context.Context, cancel context.CancelFunc, current []string) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			ts, err := st.resolveTopics()
			if err == nil && fmt.Sprint(ts) != fmt.Sprint(current) {
				cancel()
				return
			}
		}
	}
}

type groupHandler struct{ st *sinkTask }

func (h *groupHandler) Setup(sess sarama.ConsumerGroupSession) error {
	if !h.st.wakeup.enterSession() {
		return nil // stopping: the session ends at once, nothing was handed to the task
	}
	ev := groupEvent{assigned: true, sess: sess, claims: sess.Claims(), done: make(chan struct{})}
	select {
	case h.st.events <- ev:
	case <-sess.Context().Done():
		return nil
	}
	<-ev.done
	return nil
}

func (h *groupHandler) Cleanup(sess sarama.ConsumerGroupSession) error {
	ev := groupEvent{sess: sess, claims: sess.Claims(), done: make(chan struct{})}
	h.st.events <- ev
	<-ev.done
	return nil
}

func (h *groupHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	tp := connect.TopicPartition{Topic: claim.Topic(), Partition: claim.Partition()}
	msgs := claim.Messages()
	max := h.st.maxBatch
	for {
		var first *sarama.ConsumerMessage
		select {
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			first = m
		case <-sess.Context().Done():
			return nil
		}
		b := &batch{sess: sess, tp: tp, msgs: make([]*sarama.ConsumerMessage, 1, min(max, 64)), hwm: claim.HighWaterMarkOffset()}
		b.msgs[0] = first
	drain:
		for len(b.msgs) < max {
			select {
			case m, ok := <-msgs:
				if !ok {
					break drain
				}
				b.msgs = append(b.msgs, m)
			default:
				break drain
			}
		}
		select {
		case h.st.batches <- b:
		case <-sess.Context().Done():
			return nil
		}
	}
}

func (st *sinkTask) onAssigned(ev groupEvent) error {
	defer close(ev.done)
	st.sess = ev.sess
	var tps []connect.TopicPartition
	for topic, parts := range ev.claims {
		for _, p := range parts {
			tp := connect.TopicPartition{Topic: topic, Partition: p}
			tps = append(tps, tp)
			st.assignment[tp] = true
		}
	}
	sortTPs(tps)
	st.rejoining = false
	st.opening = true
	err := st.task.Open(tps)
	st.opening = false
	if err != nil {
		return fmt.Errorf("opening partitions %v: %w", tps, err)
	}
	for tp, off := range st.pendingSeeks {
		if st.assignment[tp] {
			setOffset(ev.sess, tp.Topic, tp.Partition, off, "")
			st.current[tp] = off
		}
	}
	st.pendingSeeks = map[connect.TopicPartition]int64{}
	for tp := range st.taskPaused {
		if !st.assignment[tp] { // JVM: pausedPartitions.retainAll(assignment)
			delete(st.taskPaused, tp)
			st.group.Resume(map[string][]int32{tp.Topic: {tp.Partition}})
		}
	}
	if st.target != state.Started {
		st.group.PauseAll()
	}
	st.log.Info("partitions assigned", "partitions", fmt.Sprint(tps))
	return nil
}

func (st *sinkTask) onRevoked(ctx context.Context, ev groupEvent) error {
	defer close(ev.done)
	if st.sess == nil {
		return nil
	}
	var tps []connect.TopicPartition
	for tp := range st.assignment {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	var err error
	if !st.isCancelled() { // a task cancelled after the graceful timeout skips its final commit (JVM)
		err = st.commit(context.Background(), true)
	}
	if cerr := st.task.Close(tps); cerr != nil && err == nil {
		err = fmt.Errorf("closing partitions: %w", cerr)
	}
	st.sess = nil
	st.assignment = map[connect.TopicPartition]bool{}
	st.current = map[connect.TopicPartition]int64{}
	st.pending = map[connect.TopicPartition]int64{}
	st.lastCommitted = map[connect.TopicPartition]int64{}
	st.stashed = map[connect.TopicPartition][]*batch{}
	st.retryBatch, st.idleAt = nil, time.Time{}
	st.ready = nil
	st.pendingSeeks = map[connect.TopicPartition]int64{}
	st.raw = map[rawKey]*sarama.ConsumerMessage{}
	return err
}
