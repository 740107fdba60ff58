package group

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProbeRemovesOnlyRefusingPeers: a member whose address refuses connections twice in a row is reported
// dead; one that listens, or refused only once before answering again, is not.
func TestProbeRemovesOnlyRefusingPeers(t *testing.T) {
	live, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer live.Close()
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	goneAddr := gone.Addr().String()
	require.NoError(t, gone.Close()) // nothing listens there any more: connections are refused
	flaky, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	flakyAddr := flaky.Addr().String()
	require.NoError(t, flaky.Close())

	p := &peerProber{timeout: 500 * time.Millisecond}
	targets := map[string]string{"live": live.Addr().String(), "gone": goneAddr, "flaky": flakyAddr}
	require.Empty(t, p.probe(targets), "one refusal is not enough")
	// the flaky member listens again (restarted on the same address) before the second probe
	back, err := net.Listen("tcp", flakyAddr)
	require.NoError(t, err)
	defer back.Close()
	require.Equal(t, []string{"gone"}, p.probe(targets))
}

// TestProbeSparesARejoinedMember: a member that joins from the address of a member removed for refusals is
// alive (a JVM worker that stops closes its REST listener before its herder stops rejoining), so it is not
// removed while the address refuses; once the address accepts again, refusals remove its members as before.
// The member removed itself, still probed (its removal failed), is removed again.
func TestProbeSparesARejoinedMember(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	p := &peerProber{timeout: 500 * time.Millisecond}
	require.Empty(t, p.probe(map[string]string{"a": addr}))
	require.Equal(t, []string{"a"}, p.probe(map[string]string{"a": addr}))
	require.Equal(t, []string{"a"}, p.probe(map[string]string{"a": addr}), "the same member, still there")
	for range 5 {
		require.Empty(t, p.probe(map[string]string{"b": addr}), "b joined from a's address: its process lives")
	}
	require.Empty(t, p.suspects())

	back, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	require.Empty(t, p.probe(map[string]string{"b": addr}))
	require.NoError(t, back.Close())
	require.Empty(t, p.probe(map[string]string{"c": addr}))
	require.Equal(t, []string{"c"}, p.probe(map[string]string{"c": addr}), "the address accepted since: refusals count again")
}

func TestProbeTargets(t *testing.T) {
	got := probeTargets(map[string]*WorkerState{
		"self": {URL: "http://10.0.0.1:8083/"},
		"a":    {URL: "http://10.0.0.2:8083/"},
		"b":    {URL: "https://connect-b/"},
		"c":    {URL: "::bad"},
	}, "self")
	require.Equal(t, map[string]string{"a": "10.0.0.2:8083", "b": "connect-b:443"}, got)
}

// TestLeaderTarget: a member other than the leader probes the leader's REST listener; the leader itself, or a
// member that does not know the leader, probes nobody this way.
func TestLeaderTarget(t *testing.T) {
	require.Equal(t, map[string]string{"lead": "10.0.0.1:8083"}, leaderTarget("lead", "http://10.0.0.1:8083/", "me"))
	require.Empty(t, leaderTarget("me", "http://10.0.0.1:8083/", "me"))
	require.Empty(t, leaderTarget("", "", "me"))
	require.Empty(t, leaderTarget("lead", "::bad", "me"))
}

// TestUntilProbe: probes fall on multiples of the interval since the epoch, so members whose clocks agree probe
// at the same instants whenever each of them started.
func TestUntilProbe(t *testing.T) {
	every := time.Second
	base := time.Unix(1_700_000_000, 0)
	require.Equal(t, time.Second, untilProbe(base, every))
	require.Equal(t, 700*time.Millisecond, untilProbe(base.Add(300*time.Millisecond), every))
	require.Equal(t, time.Millisecond, untilProbe(base.Add(999*time.Millisecond), every))
	for _, off := range []time.Duration{0, 1, 250 * time.Millisecond, 999 * time.Millisecond} {
		at := base.Add(off).Add(untilProbe(base.Add(off), 250*time.Millisecond))
		require.Zero(t, at.UnixNano()%int64(250*time.Millisecond), "offset %v", off)
	}
}

// TestMemberTargets: a member other than the leader probes every other member of a stable group, as the
// coordinator describes it; a description without the members' metadata (the group rebalances again) or
// without this member gives nothing.
func TestMemberTargets(t *testing.T) {
	mem := func(id, url string) kmsg.DescribeGroupsResponseGroupMember {
		m := kmsg.NewDescribeGroupsResponseGroupMember()
		m.MemberID = id
		if url != "" {
			m.ProtocolMetadata = EncodeMetadata(WorkerState{Version: V2, URL: url, Offset: 3})
		}
		return m
	}
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.State = "Stable"
	g.Members = []kmsg.DescribeGroupsResponseGroupMember{mem("me", "http://10.0.0.1:8083/"),
		mem("lead", "http://10.0.0.2:8083/"), mem("other", "http://10.0.0.3:8083/")}
	require.Equal(t, map[string]string{"lead": "10.0.0.2:8083", "other": "10.0.0.3:8083"}, memberTargets(&g, "me"))
	require.Nil(t, memberTargets(&g, "gone"))
	g.State = "PreparingRebalance"
	g.Members = append(g.Members, mem("new", ""))
	require.Nil(t, memberTargets(&g, "me"))
}

// TestRebalanceProbeForgetsRemovedMembers: a member removed while the group rebalanced is not probed (and
// removed) again when that rebalance fails and the next one starts; the others still are.
func TestRebalanceProbeForgetsRemovedMembers(t *testing.T) {
	live, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer live.Close()
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	goneAddr := gone.Addr().String()
	require.NoError(t, gone.Close())

	// no coordinator answers: the removal fails after the session timeout, as one that another member made first
	cl, err := kgo.NewClient(kgo.SeedBrokers(goneAddr))
	require.NoError(t, err)
	defer cl.Close()
	m, err := NewMember(cl, Config{GroupID: "g", SessionTimeout: 200 * time.Millisecond,
		PeerProbeInterval: 40 * time.Millisecond, Protocol: "sessioned"}, &fakeHandler{})
	require.NoError(t, err)
	m.peers = map[string]string{"gone": goneAddr, "live": live.Addr().String()}
	stop := m.probeDuringRebalance(context.Background())
	time.Sleep(time.Second)
	stop()
	require.Equal(t, map[string]string{"live": live.Addr().String()}, m.peers)
	require.NotContains(t, m.prober.refusals, "gone")
}
