package herder

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/store"
)

// DistributedConfig is the distributed worker's group and storage configuration (the JVM's DistributedConfig).
type DistributedConfig struct {
	GroupID           string
	ConfigTopic       store.TopicSpec
	OffsetTopic       store.TopicSpec
	StatusTopic       store.TopicSpec
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	RebalanceTimeout  time.Duration
	// MaxDelay is scheduled.rebalance.max.delay.ms. Default 1000 (the JVM's is 300000, which leaves a dead
	// worker's tasks unassigned for five minutes). Failover after a crash costs the detection (the leader's
	// REST probe, ~1-2 s, else session.timeout.ms) + this delay + two short rebalances; a worker that comes
	// back within the delay still receives the lost work as a whole (docs/DISTRIBUTED.md, "Failover time").
	MaxDelay          time.Duration
	SyncTimeout       time.Duration // worker.sync.timeout.ms
	UnsyncBackoff     time.Duration // worker.unsync.backoff.ms
	Protocol          string        // connect.protocol
	KeyTTL            time.Duration // inter.worker.key.ttl.ms
	RestartBackoffMin time.Duration // task.restart.backoff.initial.ms (connectd): first automatic restart delay
	RestartBackoffMax time.Duration // task.restart.backoff.max.ms (connectd): cap of the exponential backoff
	// PeerProbeInterval is peer.probe.interval.ms (connectd): how often every member checks the other members'
	// REST listeners and removes a member whose listener refuses connections twice in a row (a SIGKILLed
	// worker) without waiting for its session timeout; 0 turns it off (internal/group/probe.go).
	PeerProbeInterval time.Duration
}

// DistributedConfigDef declares the distributed worker keys with their defaults.
func DistributedConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	str := func(name, def string, req bool) {
		k := connect.ConfigKey{Name: name, Type: connect.ConfigString, Importance: connect.High, Default: def}
		if req {
			k.Default = connect.NoDefault
		}
		d.Define(k)
	}
	long := func(name string, def int64) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.ConfigLong, Default: def, Importance: connect.Medium})
	}
	str("group.id", "", true)
	str("config.storage.topic", "", true)
	str("offset.storage.topic", "", true)
	str("status.storage.topic", "", true)
	str("connect.protocol", "sessioned", false)
	long("session.timeout.ms", 10000)
	long("heartbeat.interval.ms", 1000)
	long("rebalance.timeout.ms", 60000)
	long("scheduled.rebalance.max.delay.ms", 1000)
	long("worker.sync.timeout.ms", 3000)
	long("worker.unsync.backoff.ms", 300000)
	long("inter.worker.key.ttl.ms", 3600000)
	long("task.restart.backoff.initial.ms", 1000)
	long("task.restart.backoff.max.ms", 60000)
	long("peer.probe.interval.ms", 1000)
	return d
}

func propInt(props map[string]string, key string, def int64) (int64, error) {
	v, ok := props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, BadRequest("Invalid value %s for configuration %s: Not a number of type INT", v, key)
	}
	return n, nil
}

// ParseDistributedConfig reads the distributed keys from worker properties.
func ParseDistributedConfig(props map[string]string) (*DistributedConfig, error) {
	for _, k := range []string{"group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"} {
		if strings.TrimSpace(props[k]) == "" {
			return nil, fmt.Errorf("Missing required configuration \"%s\" which has no default value.", k)
		}
	}
	c := &DistributedConfig{GroupID: props["group.id"], Protocol: props["connect.protocol"]}
	if c.Protocol == "" {
		c.Protocol = "sessioned"
	}
	if _, err := group.ProtocolsFor(c.Protocol); err != nil {
		return nil, fmt.Errorf("Invalid value %s for configuration connect.protocol: String must be one of: eager, compatible, sessioned", c.Protocol)
	}
	ms := func(key string, def int64, dst *time.Duration) error {
		n, err := propInt(props, key, def)
		*dst = time.Duration(n) * time.Millisecond
		return err
	}
	for _, f := range []struct {
		k   string
		def int64
		dst *time.Duration
	}{
		{"session.timeout.ms", 10000, &c.SessionTimeout}, {"heartbeat.interval.ms", 1000, &c.HeartbeatInterval},
		{"rebalance.timeout.ms", 60000, &c.RebalanceTimeout}, {"scheduled.rebalance.max.delay.ms", 1000, &c.MaxDelay},
		{"worker.sync.timeout.ms", 3000, &c.SyncTimeout}, {"worker.unsync.backoff.ms", 300000, &c.UnsyncBackoff},
		{"inter.worker.key.ttl.ms", 3600000, &c.KeyTTL},
		{"task.restart.backoff.initial.ms", 1000, &c.RestartBackoffMin}, {"task.restart.backoff.max.ms", 60000, &c.RestartBackoffMax},
		{"peer.probe.interval.ms", 1000, &c.PeerProbeInterval},
	} {
		if err := ms(f.k, f.def, f.dst); err != nil {
			return nil, err
		}
	}
	topic := func(prefix, prop string, parts int64, single bool) (store.TopicSpec, error) {
		p, err := propInt(props, prefix+".partitions", parts)
		if err != nil {
			return store.TopicSpec{}, err
		}
		rf, err := propInt(props, prefix+".replication.factor", 3)
		if err != nil {
			return store.TopicSpec{}, err
		}
		extra := connect.WithPrefix(props, prefix+".")
		delete(extra, "partitions")
		delete(extra, "replication.factor")
		delete(extra, "topic")
		return store.TopicSpec{Name: props[prop], Property: prop, Partitions: int32(p), Replication: int16(rf), Configs: extra, SinglePartition: single}, nil
	}
	var err error
	if c.ConfigTopic, err = topic("config.storage", "config.storage.topic", 1, true); err != nil {
		return nil, err
	}
	if c.OffsetTopic, err = topic("offset.storage", "offset.storage.topic", 25, false); err != nil {
		return nil, err
	}
	if c.StatusTopic, err = topic("status.storage", "status.storage.topic", 5, false); err != nil {
		return nil, err
	}
	return c, nil
}
