package group

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
