package group

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawMember speaks the connect protocol by hand on connections of its own: it joins and syncs when the
// test says so and is otherwise silent, as a worker whose process is gone.
type rawMember struct {
	b     *kgo.Client
	group string
	id    string
	gen   int32
}

func newRawMember(t *testing.T, addr string, group string) *rawMember {
	t.Helper()
	return &rawMember{b: newClient(t, addr), group: group}
}

func (r *rawMember) join(url string, session time.Duration) (*kmsg.JoinGroupResponse, error) {
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = r.group, r.id, ProtocolType
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = int32(session/time.Millisecond), int32(time.Minute/time.Millisecond)
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = ProtocolName(V2), EncodeMetadata(WorkerState{Version: V2, URL: url, Offset: 3})
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(context.Background(), r.b)
		if err != nil {
			return nil, err
		}
		r.id = resp.MemberID
		err = kerr.ErrorForCode(resp.ErrorCode)
		if errors.Is(err, kerr.MemberIDRequired) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.gen = resp.Generation
		return resp, nil
	}
}

// lead syncs as the leader, naming itself (at url) the leader in every member's assignment.
func (r *rawMember) lead(t *testing.T, url string, members []string) {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID = r.group, r.gen, r.id
	protocolType, protocol := ProtocolType, ProtocolName(V2)
	req.ProtocolType, req.Protocol = &protocolType, &protocol
	for _, id := range members {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = id
		a.MemberAssignment = EncodeAssignment(&Assignment{Version: V2, Error: NoError, Leader: r.id, LeaderURL: url, Offset: 3})
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	resp, err := req.RequestWith(context.Background(), r.b)
	require.NoError(t, err)
	require.NoError(t, kerr.ErrorForCode(resp.ErrorCode))
}

// refusingURL is the URL of a loopback port nothing listens on.
func refusingURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/"
}

// listeningURL is the URL of a loopback listener that accepts and closes connections until the test ends.
func listeningURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return "http://" + l.Addr().String() + "/"
}

// A leader that dies while the group rebalances holds the others' JoinGroup until its session times out,
// unless they keep probing it while they wait: the member finds the leader's REST address refusing and
// removes it, and the rebalance completes in about two probe intervals instead of the dead leader's session.
func TestDeadLeaderRemovedDuringRebalance(t *testing.T) {
	addr := bootstrap(t)
	group := fmt.Sprintf("connect-probe-rebalance-%d", time.Now().UnixNano())
	deadURL, liveURL := refusingURL(t), listeningURL(t)
	const leaderSession = 45 * time.Second

	// The leader: a member alone in the group, then leading its second generation with a worker.
	leader := newRawMember(t, addr, group)
	_, err := leader.join(deadURL, leaderSession)
	require.NoError(t, err)
	leader.lead(t, deadURL, []string{leader.id})

	h := &fakeHandler{url: liveURL, snap: ConfigSnapshot{Offset: 3}}
	m, err := NewMember(newClient(t, addr), Config{GroupID: group, SessionTimeout: 10 * time.Second,
		HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 20 * time.Second, MaxDelay: time.Second,
		Protocol: "sessioned", PeerProbeInterval: 1500 * time.Millisecond}, h)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	// the leader rejoins once the worker's join has started the rebalance, so that both are in the next generation
	require.Eventually(t, func() bool {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = []string{group}
		d, err := req.RequestWith(context.Background(), leader.b)
		return err == nil && len(d.Groups) == 1 && d.Groups[0].State == "PreparingRebalance"
	}, 30*time.Second, 20*time.Millisecond, "the worker's join starts a rebalance")
	rejoined := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		resp, err := leader.join(deadURL, leaderSession)
		if err != nil {
			t.Error(err)
		}
		rejoined <- resp
	}()
	resp := <-rejoined
	require.NotNil(t, resp)
	require.Equal(t, leader.id, resp.LeaderID, "the member that led keeps leading")
	var ids []string
	for _, mem := range resp.Members {
		ids = append(ids, mem.MemberID)
	}
	leader.lead(t, deadURL, ids)
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.gens > 0
	}, 30*time.Second, 20*time.Millisecond, "the worker got the leader's assignment")

	// The leader now says nothing more; a third member's join starts a rebalance that waits for it.
	start := time.Now()
	newcomer := newRawMember(t, addr, group)
	_, err = newcomer.join(liveURL, 10*time.Second)
	require.NoError(t, err)
	took := time.Since(start)
	t.Logf("the rebalance after the leader's death completed in %v (its session: %v)", took, leaderSession)
	require.Less(t, took, leaderSession/3, "the dead leader was removed while the group rebalanced")
}

// follow syncs as a member other than the leader.
func (r *rawMember) follow(t *testing.T) {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID = r.group, r.gen, r.id
	protocolType, protocol := ProtocolType, ProtocolName(V2)
	req.ProtocolType, req.Protocol = &protocolType, &protocol
	resp, err := req.RequestWith(context.Background(), r.b)
	require.NoError(t, err)
	require.NoError(t, kerr.ErrorForCode(resp.ErrorCode))
}

// describeGroup returns the group's state and its number of members.
func describeGroup(t *testing.T, cl *kgo.Client, group string) (string, int) {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	d, err := req.RequestWith(context.Background(), cl)
	if err != nil || len(d.Groups) != 1 {
		return "", 0
	}
	return d.Groups[0].State, len(d.Groups[0].Members)
}

// A member other than the leader dies: every survivor finds its REST address refusing and rejoins at once, so
// the rebalance without it completes within a few probe intervals. The coordinator would tell the survivors
// other than the one that removed it only in their next heartbeat's answer (here 20 s away), and it waits for
// every member's JoinGroup.
func TestSurvivorsRejoinOnDeathWithoutHeartbeat(t *testing.T) {
	addr := bootstrap(t)
	group := fmt.Sprintf("connect-probe-survivors-%d", time.Now().UnixNano())
	const heartbeat = 20 * time.Second
	type live struct {
		m *Member
		h *fakeHandler
	}
	start := func() live {
		h := &fakeHandler{url: listeningURL(t), snap: ConfigSnapshot{Offset: 3}}
		m, err := NewMember(newClient(t, addr), Config{GroupID: group, SessionTimeout: time.Minute,
			HeartbeatInterval: heartbeat, RebalanceTimeout: 30 * time.Second, MaxDelay: time.Second,
			Protocol: "sessioned", PeerProbeInterval: 200 * time.Millisecond}, h)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = m.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		return live{m, h}
	}
	gens := func(l live) int {
		l.h.mu.Lock()
		defer l.h.mu.Unlock()
		return l.h.gens
	}
	cl := newClient(t, addr)
	rebalancing := func() bool { st, _ := describeGroup(t, cl, group); return st == "PreparingRebalance" }

	a := start()
	require.Eventually(t, func() bool { return gens(a) > 0 }, 30*time.Second, 20*time.Millisecond, "the first member leads")
	// each newcomer's join starts a rebalance; the members already in are asked to rejoin rather than left to
	// hear of it in a heartbeat
	b := start()
	require.Eventually(t, rebalancing, 30*time.Second, 20*time.Millisecond)
	a.m.RequestRejoin()
	require.Eventually(t, func() bool { return gens(b) > 0 }, 30*time.Second, 20*time.Millisecond, "the second member joins")

	// the member that dies: joined by hand, so that it falls silent when the test says so
	deadL, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() {
		for {
			c, err := deadL.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	x := newRawMember(t, addr, group)
	joined := make(chan error, 1)
	go func() { _, err := x.join("http://"+deadL.Addr().String()+"/", time.Minute); joined <- err }()
	require.Eventually(t, rebalancing, 30*time.Second, 20*time.Millisecond)
	ga, gb := gens(a), gens(b)
	a.m.RequestRejoin()
	b.m.RequestRejoin()
	require.NoError(t, <-joined)
	x.follow(t)
	require.Eventually(t, func() bool {
		st, n := describeGroup(t, cl, group)
		return gens(a) > ga && gens(b) > gb && st == "Stable" && n == 3
	}, 30*time.Second, 20*time.Millisecond, "three members in a stable group")
	time.Sleep(time.Second) // the survivors have described the group they synced

	// the process is gone: its address refuses connections, and it sends nothing more
	ga, gb = gens(a), gens(b)
	start0 := time.Now()
	require.NoError(t, deadL.Close())
	require.Eventually(t, func() bool {
		st, n := describeGroup(t, cl, group)
		return gens(a) > ga && gens(b) > gb && st == "Stable" && n == 2
	}, 2*heartbeat, 20*time.Millisecond, "the survivors form a group without the dead member")
	took := time.Since(start0)
	t.Logf("the group without the dead member was formed %v after its death (heartbeat interval %v)", took, heartbeat)
	require.Less(t, took, heartbeat/4, "the survivors rejoined without waiting for a heartbeat")
}

// leadWithDelay syncs as the leader of members, none of whom gets work, scheduling the next rebalance delay
// from now (the incremental protocol's delay, as when lost work is held for its owner).
func (r *rawMember) leadWithDelay(t *testing.T, url string, members []string, delay time.Duration) {
	t.Helper()
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID = r.group, r.gen, r.id
	protocolType, protocol := ProtocolType, ProtocolName(V2)
	req.ProtocolType, req.Protocol = &protocolType, &protocol
	for _, id := range members {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = id
		a.MemberAssignment = EncodeAssignment(&Assignment{Version: V2, Error: NoError, Leader: r.id, LeaderURL: url,
			Offset: 3, Delay: int32(delay / time.Millisecond)})
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	resp, err := req.RequestWith(context.Background(), r.b)
	require.NoError(t, err)
	require.NoError(t, kerr.ErrorForCode(resp.ErrorCode))
}

// The scheduled delay passes on a member before it passes on the leader, whose JoinGroup starts the rebalance:
// the member joins that rebalance as soon as it starts, not one heartbeat interval or one more delay later.
func TestFollowerJoinsTheLeadersScheduledRebalance(t *testing.T) {
	addr := bootstrap(t)
	group := fmt.Sprintf("connect-delay-follower-%d", time.Now().UnixNano())
	const delay, heartbeat = 3 * time.Second, 10 * time.Second
	leaderURL := listeningURL(t)
	leader := newRawMember(t, addr, group)
	_, err := leader.join(leaderURL, time.Minute)
	require.NoError(t, err)
	leader.lead(t, leaderURL, []string{leader.id})

	h := &fakeHandler{url: listeningURL(t), snap: ConfigSnapshot{Offset: 3}}
	m, err := NewMember(newClient(t, addr), Config{GroupID: group, SessionTimeout: time.Minute,
		HeartbeatInterval: heartbeat, RebalanceTimeout: 30 * time.Second, Protocol: "sessioned"}, h)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	cl := newClient(t, addr)
	require.Eventually(t, func() bool { st, _ := describeGroup(t, cl, group); return st == "PreparingRebalance" },
		30*time.Second, 20*time.Millisecond, "the member's join starts a rebalance")
	resp, err := leader.join(leaderURL, time.Minute)
	require.NoError(t, err)
	var ids []string
	for _, mem := range resp.Members {
		ids = append(ids, mem.MemberID)
	}
	require.Len(t, ids, 2)
	leader.leadWithDelay(t, leaderURL, ids, delay)
	require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return h.gens > 0 },
		30*time.Second, 10*time.Millisecond, "the member got its assignment")
	synced := time.Now()

	// the leader's own delay passes half a second after the member's
	time.Sleep(time.Until(synced.Add(delay + 500*time.Millisecond)))
	start := time.Now()
	resp, err = leader.join(leaderURL, time.Minute)
	require.NoError(t, err)
	took := time.Since(start)
	require.Len(t, resp.Members, 2, "the member joined the leader's rebalance")
	t.Logf("the member joined the leader's rebalance %v after it started (delay %v, heartbeat interval %v)", took, delay, heartbeat)
	require.Less(t, took, time.Second, "the member joined the rebalance as it started")
}

// A JVM worker that stops closes its REST listener before its herder stops, and the herder rejoins when it is
// removed. The leader removes it once, and not again after it rejoined from the same address: else every probe
// would start another rebalance until the JVM worker exits.
func TestRejoinedMemberWithClosedListenerIsNotRemovedAgain(t *testing.T) {
	addr := bootstrap(t)
	group := fmt.Sprintf("connect-probe-rejoin-%d", time.Now().UnixNano())
	h := &fakeHandler{url: listeningURL(t), snap: ConfigSnapshot{Offset: 3}}
	m, err := NewMember(newClient(t, addr), Config{GroupID: group, SessionTimeout: time.Minute,
		HeartbeatInterval: 200 * time.Millisecond, RebalanceTimeout: 30 * time.Second, MaxDelay: time.Second,
		Protocol: "sessioned", PeerProbeInterval: 200 * time.Millisecond}, h)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	gens := func() int { h.mu.Lock(); defer h.mu.Unlock(); return h.gens }
	require.Eventually(t, func() bool { return gens() > 0 }, 30*time.Second, 20*time.Millisecond, "the member leads")

	cl := newClient(t, addr)
	members := func() (string, int) { return describeGroup(t, cl, group) }
	stopping := newRawMember(t, addr, group)
	url := refusingURL(t)
	joinAndSync := func() {
		t.Helper()
		stopping.id = ""
		_, err := stopping.join(url, time.Minute)
		require.NoError(t, err)
		stopping.follow(t)
	}
	joinAndSync()
	first := stopping.id
	require.Eventually(t, func() bool { st, n := members(); return st == "Stable" && n == 1 }, 30*time.Second,
		20*time.Millisecond, "the member whose listener refuses is removed")
	joinAndSync() // its herder rejoins
	require.NotEqual(t, first, stopping.id)
	require.Eventually(t, func() bool { st, n := members(); return st == "Stable" && n == 2 }, 30*time.Second, 20*time.Millisecond)
	// the leader's handler hears of the generation it rejoined in a moment after the group is stable; a
	// removal in that moment still shows in the member count at the end (the hand-driven member does not rejoin)
	time.Sleep(500 * time.Millisecond)
	g := gens()
	time.Sleep(3 * time.Second) // 15 probe intervals
	st, n := members()
	require.Equal(t, "Stable", st)
	require.Equal(t, 2, n, "the rejoined member was removed again")
	require.Equal(t, g, gens(), "no rebalance since it rejoined")
}
