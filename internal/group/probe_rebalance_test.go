package group

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
)

// rawMember speaks the connect protocol by hand on a connection of its own: it joins and syncs when the
// test says so and is otherwise silent, as a worker whose process is gone.
type rawMember struct {
	b     *sarama.Broker
	group string
	id    string
	gen   int32
}

func newRawMember(t *testing.T, cl sarama.Client, group string) *rawMember {
	t.Helper()
	coord, err := cl.Coordinator(group)
	require.NoError(t, err)
	b := sarama.NewBroker(coord.Addr())
	require.NoError(t, b.Open(cl.Config()))
	t.Cleanup(func() { _ = b.Close() })
	return &rawMember{b: b, group: group}
}

func (r *rawMember) join(url string, session time.Duration) (*sarama.JoinGroupResponse, error) {
	for {
		req := &sarama.JoinGroupRequest{Version: 5, GroupId: r.group, SessionTimeout: int32(session / time.Millisecond),
			RebalanceTimeout: int32(time.Minute / time.Millisecond), MemberId: r.id, ProtocolType: ProtocolType}
		req.OrderedGroupProtocols = append(req.OrderedGroupProtocols, &sarama.GroupProtocol{Name: ProtocolName(V2),
			Metadata: EncodeMetadata(WorkerState{Version: V2, URL: url, Offset: 3})})
		resp, err := r.b.JoinGroup(req)
		if err != nil {
			return nil, err
		}
		r.id = resp.MemberId
		if resp.Err == sarama.ErrMemberIdRequired {
			continue
		}
		if resp.Err != sarama.ErrNoError {
			return nil, resp.Err
		}
		r.gen = resp.GenerationId
		return resp, nil
	}
}

// lead syncs as the leader, naming itself (at url) the leader in every member's assignment.
func (r *rawMember) lead(t *testing.T, url string, members []string) {
	t.Helper()
	req := &sarama.SyncGroupRequest{Version: 3, GroupId: r.group, GenerationId: r.gen, MemberId: r.id}
	for _, id := range members {
		a := EncodeAssignment(&Assignment{Version: V2, Error: NoError, Leader: r.id, LeaderURL: url, Offset: 3})
		req.GroupAssignments = append(req.GroupAssignments, sarama.SyncGroupRequestAssignment{MemberId: id, Assignment: a})
	}
	resp, err := r.b.SyncGroup(req)
	require.NoError(t, err)
	require.Equal(t, sarama.ErrNoError, resp.Err)
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
	cl := newClient(t, addr)
	deadURL, liveURL := refusingURL(t), listeningURL(t)
	const leaderSession = 45 * time.Second

	// The leader: a member alone in the group, then leading its second generation with a worker.
	leader := newRawMember(t, cl, group)
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
		d, err := leader.b.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{group}})
		return err == nil && len(d.Groups) == 1 && d.Groups[0].State == "PreparingRebalance"
	}, 30*time.Second, 20*time.Millisecond, "the worker's join starts a rebalance")
	rejoined := make(chan *sarama.JoinGroupResponse, 1)
	go func() {
		resp, err := leader.join(deadURL, leaderSession)
		if err != nil {
			t.Error(err)
		}
		rejoined <- resp
	}()
	resp := <-rejoined
	require.NotNil(t, resp)
	require.Equal(t, leader.id, resp.LeaderId, "the member that led keeps leading")
	var ids []string
	for _, mem := range resp.Members {
		ids = append(ids, mem.MemberId)
	}
	leader.lead(t, deadURL, ids)
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.gens > 0
	}, 30*time.Second, 20*time.Millisecond, "the worker got the leader's assignment")

	// The leader now says nothing more; a third member's join starts a rebalance that waits for it.
	start := time.Now()
	newcomer := newRawMember(t, cl, group)
	_, err = newcomer.join(liveURL, 10*time.Second)
	require.NoError(t, err)
	took := time.Since(start)
	t.Logf("the rebalance after the leader's death completed in %v (its session: %v)", took, leaderSession)
	require.Less(t, took, leaderSession/3, "the dead leader was removed while the group rebalanced")
}
