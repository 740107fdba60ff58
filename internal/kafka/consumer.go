package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/xdg-go/scram"
)

// fetchPool is the consumers' RecordPool: what one consumer's recycled batches give back serves the
// next batches of any.
var fetchPool = NewRecordPool(maxPooledFetchBytes)

// maxPooledFetchBytes bounds the free memory of fetchPool: about a fetch's worth for a few tasks.
const maxPooledFetchBytes = 16 << 20

// ConsumerOpts are the franz-go options of a group consumer configured from JVM consumer properties: the
// common client keys and security settings (ClientOpts) and the consumer keys. max.poll.records,
// group.id and the rebalance callbacks are the caller's.
func ConsumerOpts(props map[string]string) ([]kgo.Opt, error) {
	opts, err := ClientOpts(props)
	if err != nil {
		return nil, err
	}
	opts = append(opts,
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxPartitionBytes(DefaultMaxPartitionFetchBytes),
		// the JVM consumer's defaults where franz-go's differ: a resumed partition is fetched again
		// within fetch.max.wait.ms, and a task has max.poll.interval.ms to finish a batch at a rebalance
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.RebalanceTimeout(5*time.Minute),
		kgo.WithDecompressor(NewDecompressor(MaxDecompressBatchBytes, fetchPool)),
		kgo.WithPools(fetchPool),
	)
	ms := func(key string, opt func(time.Duration) kgo.Opt) error {
		var d time.Duration
		if err := durationMS(props, key, &d); err != nil {
			return err
		}
		if d > 0 {
			opts = append(opts, opt(d))
		}
		return nil
	}
	for key, opt := range map[string]func(time.Duration) kgo.Opt{
		"session.timeout.ms":    func(d time.Duration) kgo.Opt { return kgo.SessionTimeout(d) },
		"heartbeat.interval.ms": func(d time.Duration) kgo.Opt { return kgo.HeartbeatInterval(d) },
		"max.poll.interval.ms":  func(d time.Duration) kgo.Opt { return kgo.RebalanceTimeout(d) },
		"fetch.max.wait.ms":     func(d time.Duration) kgo.Opt { return kgo.FetchMaxWait(d) },
	} {
		if err := ms(key, opt); err != nil {
			return nil, err
		}
	}
	switch strings.ToLower(props["auto.offset.reset"]) {
	case "", "earliest", "none": // no "fail without an offset": earliest is the safe choice for a sink
	case "latest":
		opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	default:
		return nil, fmt.Errorf("invalid value %s for configuration auto.offset.reset", props["auto.offset.reset"])
	}
	if props["isolation.level"] == "read_committed" {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	for key, opt := range map[string]func(int32) kgo.Opt{
		"fetch.min.bytes":           func(n int32) kgo.Opt { return kgo.FetchMinBytes(n) },
		"max.partition.fetch.bytes": func(n int32) kgo.Opt { return kgo.FetchMaxPartitionBytes(n) },
		"fetch.max.bytes":           func(n int32) kgo.Opt { return kgo.FetchMaxBytes(n) },
	} {
		v := strings.TrimSpace(props[key])
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid value %s for configuration %s", props[key], key)
		}
		opts = append(opts, opt(int32(n)))
	}
	balancers, err := groupBalancers(props["partition.assignment.strategy"])
	if err != nil {
		return nil, err
	}
	return append(opts, kgo.Balancers(balancers...)), nil
}

// ClientOpts are the franz-go options of the common client keys (bootstrap.servers, client.id,
// request.timeout.ms, metadata.max.age.ms) and the security settings.
func ClientOpts(props map[string]string) ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(Brokers(props)...),
		kgo.WithLogger(kgoLogger{}),
		kgo.MetadataMaxAge(5 * time.Minute),
	}
	if v := props["client.id"]; v != "" {
		opts = append(opts, kgo.ClientID(ClientID(v)))
	}
	var d time.Duration
	if err := durationMS(props, "request.timeout.ms", &d); err != nil {
		return nil, err
	} else if d > 0 {
		opts = append(opts, kgo.RequestTimeoutOverhead(d))
	}
	d = 0
	if err := durationMS(props, "metadata.max.age.ms", &d); err != nil {
		return nil, err
	} else if d > 0 {
		opts = append(opts, kgo.MetadataMaxAge(d))
	}
	backoff, backoffMax := 100*time.Millisecond, time.Second // the JVM clients' defaults (KIP-580)
	if err := durationMS(props, "retry.backoff.ms", &backoff); err != nil {
		return nil, err
	}
	if err := durationMS(props, "retry.backoff.max.ms", &backoffMax); err != nil {
		return nil, err
	}
	opts = append(opts, kgo.RetryBackoffFn(retryBackoff(backoff, backoffMax)))
	sec, err := securityOpts(props)
	if err != nil {
		return nil, err
	}
	return append(opts, sec...), nil
}

// retryBackoff is the JVM clients' ExponentialBackoff: base·2^(tries−1), at most max, ±20% jitter.
func retryBackoff(base, maxBackoff time.Duration) func(int) time.Duration {
	return func(tries int) time.Duration {
		d := maxBackoff
		if base > 0 && tries < 30 {
			d = min(base<<max(tries-1, 0), maxBackoff)
		}
		return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	}
}

// LeaveGroup asks the coordinator of group, on a connection of its own, to remove memberID. A member whose
// JoinGroup waits for the rest of the group gets its answer at once (UNKNOWN_MEMBER_ID), so its client
// can stop without waiting for the rebalance.
func LeaveGroup(ctx context.Context, props map[string]string, group, memberID string) error {
	opts, err := ClientOpts(props)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = group, memberID
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = memberID
	reason := "the task is stopping"
	m.Reason = &reason
	req.Members = append(req.Members, m)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	for _, m := range resp.Members {
		if err := kerr.ErrorForCode(m.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}

// groupBalancers maps the JVM assignor class names to franz-go's implementations of the same protocols
// (names and assignments), so Go and JVM members share a group. With several, the group picks the first
// that every member lists; it rebalances cooperatively only if that one is cooperative-sticky.
func groupBalancers(strategy string) ([]kgo.GroupBalancer, error) {
	if strings.TrimSpace(strategy) == "" {
		return []kgo.GroupBalancer{kgo.RangeBalancer()}, nil
	}
	var out []kgo.GroupBalancer
	for _, s := range strings.Split(strategy, ",") {
		s = strings.TrimSpace(s)
		name := s[strings.LastIndex(s, ".")+1:]
		switch name {
		case "RangeAssignor":
			out = append(out, kgo.RangeBalancer())
		case "RoundRobinAssignor":
			out = append(out, kgo.RoundRobinBalancer())
		case "StickyAssignor":
			out = append(out, kgo.StickyBalancer())
		case "CooperativeStickyAssignor":
			out = append(out, kgo.CooperativeStickyBalancer())
		case "":
		default:
			return nil, fmt.Errorf("invalid value %s for configuration partition.assignment.strategy: %s is not supported (use RangeAssignor, RoundRobinAssignor, StickyAssignor or CooperativeStickyAssignor)", strategy, s)
		}
	}
	if len(out) == 0 {
		return []kgo.GroupBalancer{kgo.RangeBalancer()}, nil
	}
	return out, nil
}

func securityOpts(props map[string]string) ([]kgo.Opt, error) {
	proto, err := securityProtocol(props)
	if err != nil {
		return nil, err
	}
	var opts []kgo.Opt
	if proto == "SSL" || proto == "SASL_SSL" {
		tc, err := tlsConfig(props)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if strings.HasPrefix(proto, "SASL") {
		c, err := saslCredentials(props)
		if err != nil {
			return nil, err
		}
		switch c.mechanism {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: c.user, Pass: c.password}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scramMechanism{name: c.mechanism, hash: scram.SHA256, user: c.user, password: c.password}))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scramMechanism{name: c.mechanism, hash: scram.SHA512, user: c.user, password: c.password}))
		case "OAUTHBEARER":
			opts = append(opts, kgo.SASL(c.oauth.mechanism()))
		}
	}
	return opts, nil
}

// scramMechanism is SCRAM (RFC 5802/7677, as KIP-84) by github.com/xdg-go/scram. The JVM client does not
// SASLprep the password (ScramFormatter uses its UTF-8 bytes) and only escapes ',' and '=' in the user
// name, so neither does this: NewClientUnprepped keeps credentials created by kafka-configs/kafka-storage
// working for non-ASCII passwords too.
type scramMechanism struct {
	name, user, password string
	hash                 scram.HashGeneratorFcn
}

func (m scramMechanism) Name() string { return m.name }

func (m scramMechanism) Authenticate(context.Context, string) (sasl.Session, []byte, error) {
	c, err := m.hash.NewClientUnprepped(m.user, m.password, "")
	if err != nil {
		return nil, nil, err
	}
	conv := c.NewConversation()
	first, err := conv.Step("")
	if err != nil {
		return nil, nil, err
	}
	return scramSession{conv}, []byte(first), nil
}

type scramSession struct{ conv *scram.ClientConversation }

func (s scramSession) Challenge(b []byte) (bool, []byte, error) {
	resp, err := s.conv.Step(string(b))
	if err != nil {
		return false, nil, err
	}
	if s.conv.Done() {
		return true, nil, nil
	}
	return false, []byte(resp), nil
}

// PingConsumer connects cl to a broker and authenticates, so that a consumer that cannot reach the
// cluster or is refused fails at start with the cause.
func PingConsumer(ctx context.Context, cl *kgo.Client, props map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := cl.Ping(ctx)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Errorf("connecting to %s: sasl.mechanism %s is not enabled on this listener: %w", props["bootstrap.servers"], props["sasl.mechanism"], err)
	default:
		return fmt.Errorf("connecting to %s: %w", props["bootstrap.servers"], err)
	}
}

// kgoLogger sends franz-go's log lines to slog: errors and warnings as warnings (a consumer retries what
// fails), the rest at debug level.
type kgoLogger struct{}

func (kgoLogger) Level() kgo.LogLevel {
	if slog.Default().Enabled(context.Background(), slog.LevelDebug) {
		return kgo.LogLevelDebug
	}
	return kgo.LogLevelWarn
}

func (kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	l := slog.LevelDebug
	if level <= kgo.LogLevelWarn {
		l = slog.LevelWarn
	}
	slog.Log(context.Background(), l, msg, append(keyvals, "component", "kafka-consumer")...)
}
