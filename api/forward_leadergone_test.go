package api

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
)

// groupHerder is a fakeHerder in a group: AwaitLeaderChange answers with the next leader's URL once one is
// sent on next, or "" when the context ends first.
type groupHerder struct {
	*fakeHerder
	next  chan string
	waits chan string // the URL each wait was for
}

func (g *groupHerder) AwaitLeaderChange(ctx context.Context, gone string) (bool, string) {
	g.waits <- gone
	select {
	case url := <-g.next:
		return false, url
	case <-ctx.Done():
		return false, ""
	}
}

// refusedURL is the URL of an address where nothing listens (connections are refused).
func refusedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/"
}

// TestForwardWaitsForNextLeader: a write forwarded to a leader whose address refuses connections is sent to
// the next leader once the group names it, and answered as that leader answers.
func TestForwardWaitsForNextLeader(t *testing.T) {
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	nextH := newFakeHerder()
	nextTS := httptest.NewServer(NewServer(nextH, WithRegistry(testRegistry), quiet).Handler())
	defer nextTS.Close()

	dead := refusedURL(t)
	g := &groupHerder{fakeHerder: newFakeHerder(), next: make(chan string, 1), waits: make(chan string, 4)}
	g.notLeader = &herder.NotLeaderError{LeaderURL: dead}
	ts := httptest.NewServer(NewServer(g, WithRegistry(testRegistry), quiet).Handler())
	defer ts.Close()

	go func() {
		<-g.waits // the first forward was refused
		g.next <- nextTS.URL + "/"
	}()
	resp, err := http.Post(ts.URL+"/connectors", "application/json", strings.NewReader(createBody))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 201, resp.StatusCode, string(data))
	assert.Equal(t, ts.URL+"/connectors/sink-a", resp.Header.Get("Location"))
	assert.Contains(t, nextH.configs, "sink-a")
	assert.NotContains(t, g.configs, "sink-a")
}

// TestForwardLeaderGoneAnswers409: while no next leader is named, a write the leader's address refuses gets
// the JVM's 409 for a request that cannot be completed during a rebalance (never a 500), once the wait ends.
func TestForwardLeaderGoneAnswers409(t *testing.T) {
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := &groupHerder{fakeHerder: newFakeHerder(), next: make(chan string), waits: make(chan string, 4)}
	g.notLeader = &herder.NotLeaderError{LeaderURL: refusedURL(t)}
	srv := NewServer(g, WithRegistry(testRegistry), quiet)

	// the request's context ends before leaderGoneWait: the wait ends with it
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req := httptest.NewRequest("POST", "/connectors", strings.NewReader(createBody)).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	assert.Equal(t, 409, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"error_code":409,"message":"Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}`, rec.Body.String())
	assert.Equal(t, g.notLeader.LeaderURL, <-g.waits)
}

// dyingLeader accepts a connection, reads the request's head and then closes the connection without
// answering and, listenerLag later, its listener, as a leader SIGKILLed while serving a forwarded request
// does (a negative listenerLag: it keeps listening). It returns the leader's URL and the number of requests
// that reached it.
func dyingLeader(t *testing.T, listenerLag time.Duration) (string, *atomic.Int32) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	got := new(atomic.Int32)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			if n, _ := c.Read(buf); n > 0 && strings.HasPrefix(string(buf[:n]), "POST ") {
				got.Add(1)
			}
			c.Close()
			if listenerLag >= 0 {
				time.Sleep(listenerLag)
				l.Close()
			}
		}
	}()
	return "http://" + l.Addr().String() + "/", got
}

// createThroughFollower sends a connector create to a follower in a group whose leader is at leader and
// returns the follower's answer and the group, whose waits tell whether the follower waited for a next one.
func createThroughFollower(leader string) (*httptest.ResponseRecorder, *groupHerder) {
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := &groupHerder{fakeHerder: newFakeHerder(), next: make(chan string, 1), waits: make(chan string, 4)}
	g.notLeader = &herder.NotLeaderError{LeaderURL: leader}
	srv := NewServer(g, WithRegistry(testRegistry), quiet)
	req := httptest.NewRequest("POST", "/connectors", strings.NewReader(createBody))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	return rec, g
}

// TestForwardLeaderDiesMidRequestAnswers409: a forward whose connection the leader drops unanswered, the
// leader's address refusing connections afterwards, gets the 409 that makes the client retry (never a 500),
// and is not sent again: the dead leader may have applied it.
func TestForwardLeaderDiesMidRequestAnswers409(t *testing.T) {
	// the listener closed with the connection, and a little after it
	for _, lag := range []time.Duration{0, 30 * time.Millisecond} {
		t.Run(lag.String(), func(t *testing.T) {
			leader, got := dyingLeader(t, lag)
			rec, g := createThroughFollower(leader)
			assert.Equal(t, 409, rec.Code, rec.Body.String())
			assert.JSONEq(t, `{"error_code":409,"message":"Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}`, rec.Body.String())
			assert.EqualValues(t, 1, got.Load(), "the request reached the leader once")
			assert.Empty(t, g.waits, "a request that may have been applied is not sent on")
		})
	}
}

// TestForwardDroppedByLiveLeaderAnswers500: a leader that drops the connection but still listens is alive;
// the drop is the JVM's 500.
func TestForwardDroppedByLiveLeaderAnswers500(t *testing.T) {
	leader, _ := dyingLeader(t, -1)
	rec, _ := createThroughFollower(leader)
	assert.Equal(t, 500, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "IO Error trying to forward REST request")
}
