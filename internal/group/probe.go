package group

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Dead-peer detection (connectd only): the coordinator notices a SIGKILLed worker only after its session
// timeout (10 s by default, and never under the broker's group.min.session.timeout.ms, 6 s by default). The
// members learn of it sooner by probing each other's advertised REST addresses each probe interval: every
// member probes every other member (the leader knows their URLs from the JoinGroup, the others ask the
// coordinator with DescribeGroups once the group is stable, else probe the leader alone). A probed worker whose
// address actively refuses connections twice in a row (the host answers, nothing listens: the process is gone)
// is removed from the group on its behalf (LeaveGroup with its member id, as the admin client's
// removeMembersFromConsumerGroup does), which starts the rebalance at once; when several survivors remove the
// same member, the later removals find it gone and change nothing. Every survivor that sees the refusal also
// rejoins at once: the coordinator tells the others of a rebalance only in their next heartbeat's answer, and
// the rebalance completes only once every member joined. The probes run at the same wall-clock instants on
// every member (multiples of the interval), so the survivors see a death in the same probe and rejoin together.
// Anything short of a refusal (timeouts, unreachable hosts, a listener that accepts) changes nothing, so a
// live but slow or partitioned worker is never removed this way: its session timeout decides as before. A
// connectd worker's REST listener accepts before it joins the group and until after it left (cmd/connectd), so
// a live connectd member is never refused. A JVM worker closes its REST listener first when it stops, so a
// stopping JVM worker can be removed up to a probe interval before its own LeaveGroup: the leader then sees its
// work lost, as it would after that LeaveGroup, and its sink tasks' partitions still move through their
// consumer groups, one owner at a time. Its herder may rejoin meanwhile (it stops only once the REST server
// has): a member that joins from the address of a member removed is alive, so members at that address are not
// removed again until the address accepts a connection or has not been seen for removedMemory. Without that,
// every probe would remove the rejoined member and start another rebalance until the JVM worker exits.

// probeRefusals is how many refused probes in a row remove a member.
const probeRefusals = 2

// removedMemory is how long a prober remembers the address of a member it removed after last seeing a member
// there.
const removedMemory = 10 * time.Minute

// peerProber tracks refused probes per member, and the addresses of the members it removed.
type peerProber struct {
	timeout  time.Duration
	refusals map[string]int
	removed  map[string]removal // by REST address
}

// removal is a member removed for its address's refusals.
type removal struct {
	member string
	seen   time.Time // when a member was last at the address
	alive  bool      // another member joined from the address since: its process is not gone
}

// probeTargets returns member id -> host:port of the other members' REST listeners.
func probeTargets(states map[string]*WorkerState, self string) map[string]string {
	out := map[string]string{}
	for id, ws := range states {
		if id == self || ws == nil {
			continue
		}
		u, err := url.Parse(ws.URL)
		if err != nil || u.Host == "" {
			continue
		}
		host := u.Host
		if u.Port() == "" {
			port := "80"
			if u.Scheme == "https" {
				port = "443"
			}
			host = net.JoinHostPort(u.Hostname(), port)
		}
		out[id] = host
	}
	return out
}

// untilProbe is the time from now to the next multiple of every since the Unix epoch: members whose clocks
// agree probe at the same instants.
func untilProbe(now time.Time, every time.Duration) time.Duration {
	return every - time.Duration(now.UnixNano()%int64(every))
}

// memberTargets returns member id -> host:port of the REST listeners of the group's members other than self,
// from a DescribeGroups answer for a stable group (whose members' metadata is the chosen protocol's, as in the
// JoinGroup); nil when the answer carries no usable metadata (the group is rebalancing again).
func memberTargets(d *kmsg.DescribeGroupsResponseGroup, self string) map[string]string {
	states := map[string]*WorkerState{}
	for _, mem := range d.Members {
		if len(mem.ProtocolMetadata) == 0 {
			return nil
		}
		ws, err := DecodeMetadata(mem.ProtocolMetadata)
		if err != nil {
			return nil
		}
		states[mem.MemberID] = ws
	}
	if _, in := states[self]; !in {
		return nil
	}
	return probeTargets(states, self)
}

// followerTargets is what a member other than the leader probes: every other member of the generation it
// just synced, as the coordinator describes the group, or the leader alone when the coordinator does not
// answer within a heartbeat interval or the group moved on.
func (m *Member) followerTargets(ctx context.Context, gen int32, leaderID, leaderURL, self string) map[string]string {
	if m.cfg.PeerProbeInterval <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.HeartbeatInterval)
	defer cancel()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{m.cfg.GroupID}
	resp, err := req.RequestWith(ctx, m.client)
	if err == nil && len(resp.Groups) == 1 && kerr.ErrorForCode(resp.Groups[0].ErrorCode) == nil && m.IsCurrent(gen) {
		if t := memberTargets(&resp.Groups[0], self); t != nil {
			return t
		}
	}
	m.log.Debug("probing the leader alone: the group's members could not be described", "err", err)
	return leaderTarget(leaderID, leaderURL, self)
}

// leaderTarget is what a member other than the leader probes: the leader's member id -> host:port of its
// REST listener, or nothing when this member leads or the leader's URL is unknown.
func leaderTarget(leaderID, leaderURL, self string) map[string]string {
	if leaderID == "" || leaderID == self {
		return nil
	}
	return probeTargets(map[string]*WorkerState{leaderID: {URL: leaderURL}}, self)
}

// refused says whether err is an active refusal of the connection.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// probe dials every target at once and returns the members refused probeRefusals times in a row, other than
// those at the address of a removed member whose process joined again.
func (p *peerProber) probe(targets map[string]string) []string {
	if p.refusals == nil {
		p.refusals = map[string]int{}
	}
	if p.removed == nil {
		p.removed = map[string]removal{}
	}
	now := time.Now()
	for id, addr := range targets {
		if r, ok := p.removed[addr]; ok {
			r.seen, r.alive = now, r.alive || r.member != id
			p.removed[addr] = r
		}
	}
	for addr, r := range p.removed {
		if now.Sub(r.seen) > removedMemory {
			delete(p.removed, addr)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	result := map[string]bool{}
	for id, addr := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, p.timeout)
			if err == nil {
				c.Close()
			}
			mu.Lock()
			result[id] = refused(err)
			mu.Unlock()
		}()
	}
	wg.Wait()
	var dead []string
	for id := range p.refusals {
		if _, still := targets[id]; !still {
			delete(p.refusals, id)
		}
	}
	for id, ref := range result {
		addr := targets[id]
		if !ref {
			p.refusals[id] = 0
			delete(p.removed, addr)
			continue
		}
		if p.removed[addr].alive {
			p.refusals[id] = 0
			continue
		}
		if p.refusals[id]++; p.refusals[id] >= probeRefusals {
			dead = append(dead, id)
			p.removed[addr] = removal{member: id, seen: now}
		}
	}
	return dead
}

// suspects returns the members refused but not often enough yet to be removed.
func (p *peerProber) suspects() []string {
	var ids []string
	for id, n := range p.refusals {
		if n > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// probeDuringRebalance keeps probing the members this one probed (the leader, or every other member when this
// one led) while its JoinGroup and SyncGroup wait, and removes those that refuse. A member that dies while the
// others rejoin, or just before, holds the rebalance until its session times out: the coordinator waits for
// every member it knows. The probe runs on copies of the peers and of the refusal counts, and the removal on a
// coordinator connection of its own, since the coordinator answers a connection's requests one at a time and
// this member's connection waits for the join. stop ends the probe and waits for it.
func (m *Member) probeDuringRebalance(ctx context.Context) (stop func()) {
	if m.cfg.PeerProbeInterval <= 0 || len(m.peers) == 0 {
		return func() {}
	}
	peers := maps.Clone(m.peers)
	prober := peerProber{timeout: min(m.cfg.PeerProbeInterval/2, time.Second), refusals: maps.Clone(m.prober.refusals),
		removed: maps.Clone(m.prober.removed)}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var removed []string
	go func() {
		defer close(done)
		t := time.NewTimer(untilProbe(time.Now(), m.cfg.PeerProbeInterval))
		defer t.Stop()
		for len(peers) > 0 {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			dead := prober.probe(peers)
			if len(dead) > 0 {
				m.log.Warn("removing members whose REST listener refuses connections while the group rebalances (their process is gone)", "members", dead)
				if err := m.removeMembersAside(ctx, dead); err != nil && ctx.Err() == nil {
					m.log.Info("removing members failed", "err", err)
				}
				for _, id := range dead {
					delete(peers, id)
				}
				removed = append(removed, dead...)
			}
			next := m.cfg.PeerProbeInterval
			if ids := prober.suspects(); len(ids) > 0 {
				m.log.Debug("REST listener refused a probe", "members", ids)
				next = max(next/4, 50*time.Millisecond)
			}
			t.Reset(untilProbe(time.Now(), next))
		}
	}()
	return func() {
		cancel()
		<-done
		// a rebalance that fails (another one started) must not probe and remove them again
		for _, id := range removed {
			delete(m.peers, id)
			delete(m.prober.refusals, id)
		}
		m.prober.removed = prober.removed
	}
}

// removeMembersAside is removeMembers on connections to the coordinator of their own: a client made with
// this member's client's options.
func (m *Member) removeMembersAside(ctx context.Context, ids []string) error {
	cl, err := kgo.NewClient(m.client.Opts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return m.leaveOnBehalf(ctx, cl, ids)
}

// removeMembers has the coordinator drop members on their behalf; it returns the error of the first failure.
func (m *Member) removeMembers(ctx context.Context, ids []string) error {
	return m.leaveOnBehalf(ctx, m.client, ids)
}

// leaveOnBehalf sends one LeaveGroup for ids (KIP-345's batch form, as the admin client's
// removeMembersFromConsumerGroup) through cl, waiting for the coordinator at most a session timeout.
func (m *Member) leaveOnBehalf(ctx context.Context, cl *kgo.Client, ids []string) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.cfg.GroupID
	reason := "removed by a member of the group: the worker's REST listener refuses connections"
	for _, id := range ids {
		mem := kmsg.NewLeaveGroupRequestMember()
		mem.MemberID, mem.Reason = id, &reason
		req.Members = append(req.Members, mem)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	for _, mr := range resp.Members {
		// UNKNOWN_MEMBER_ID: another survivor removed it first
		if err := kerr.ErrorForCode(mr.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
			return err
		}
	}
	return nil
}
