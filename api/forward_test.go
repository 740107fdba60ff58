package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
)

// TestForwarding runs a leader and a follower as two httptest servers: leader-only writes sent to the follower
// are re-sent to the leader (same method, path, body; forward=true; only Authorization copied) and the
// leader's answer is passed through.
func TestForwarding(t *testing.T) {
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	leaderH := newFakeHerder()
	var mu sync.Mutex
	var seen []*http.Request
	leader := NewServer(leaderH, WithRegistry(testRegistry), quiet)
	leaderTS := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(r.Context()))
		mu.Unlock()
		leader.Handler().ServeHTTP(w, r)
	}))
	defer leaderTS.Close()

	followerH := newFakeHerder()
	followerH.notLeader = &herder.NotLeaderError{LeaderURL: leaderTS.URL + "/"}
	followerTS := httptest.NewServer(NewServer(followerH, WithRegistry(testRegistry), quiet).Handler())
	defer followerTS.Close()

	send := func(method, path, body string) (int, string, http.Header) {
		req, err := http.NewRequest(method, followerTS.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("X-Other", "not copied")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), resp.Header
	}

	status, body, hdr := send("POST", "/connectors", createBody)
	assert.Equal(t, 201, status, body)
	assert.Equal(t, followerTS.URL+"/connectors/sink-a", hdr.Get("Location"))
	assert.Contains(t, body, `"name":"sink-a"`)
	assert.Contains(t, leaderH.configs, "sink-a")
	assert.NotContains(t, followerH.configs, "sink-a")
	require.Len(t, seen, 1)
	assert.Equal(t, "/connectors", seen[0].URL.Path)
	assert.Equal(t, "forward=true", seen[0].URL.RawQuery)
	assert.Equal(t, "Bearer tok", seen[0].Header.Get("Authorization"))
	assert.Empty(t, seen[0].Header.Get("X-Other"))

	// The leader's error passes through unchanged.
	status, body, _ = send("POST", "/connectors", createBody)
	assert.Equal(t, 409, status)
	assert.JSONEq(t, `{"error_code":409,"message":"Connector sink-a already exists"}`, body)

	// Flagged restart carries its flags.
	status, _, _ = send("POST", "/connectors/sink-a/restart?includeTasks=true", "")
	assert.Equal(t, 202, status)
	assert.Equal(t, "forward=true&includeTasks=true&onlyFailed=false", seen[len(seen)-1].URL.RawQuery)

	status, _, _ = send("DELETE", "/connectors/sink-a", "")
	assert.Equal(t, 204, status)
	assert.NotContains(t, leaderH.configs, "sink-a")

	// A request that already was forwarded once (forward=true) is forwarded with forward=false; one marked
	// forward=false that still can't be served gets 409.
	status, _, _ = send("PUT", "/connectors/sink-z/config?forward=true", sinkCfg)
	assert.Equal(t, 201, status)
	assert.Equal(t, "forward=false", seen[len(seen)-1].URL.RawQuery)
	status, body, _ = send("PUT", "/connectors/sink-z/config?forward=false", sinkCfg)
	assert.Equal(t, 409, status)
	assert.JSONEq(t, `{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}`, body)

	// Two workers that each think the other leads: two hops, then 409 comes back through the first.
	leaderH.notLeader = &herder.NotLeaderError{LeaderURL: followerTS.URL}
	status, body, _ = send("DELETE", "/connectors/sink-z", "")
	assert.Equal(t, 409, status)
	assert.JSONEq(t, `{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}`, body)

	followerH.notLeader = &herder.NotLeaderError{}
	status, body, _ = send("DELETE", "/connectors/sink-z", "")
	assert.Equal(t, 409, status)
	assert.JSONEq(t, `{"error_code":409,"message":"Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."}`, body)

	// Leader unreachable.
	followerH.notLeader = &herder.NotLeaderError{LeaderURL: "http://127.0.0.1:1"}
	status, body, _ = send("DELETE", "/connectors/sink-z", "")
	assert.Equal(t, 500, status)
	assert.Contains(t, body, "IO Error trying to forward REST request: ")
}
