package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
)

// call runs one herder request with the request timeout (90 s) and, when configured, retries while the
// herder reports a pending rebalance. forwardable tells whether the JVM would use completeOrForwardRequest
// (pending rebalance → 409) or completeRequest (→ 500).
func (s *Server) call(r *http.Request, forwardable bool, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(r.Context(), s.requestTimeout)
	defer cancel()
	retryUntil := time.Now().Add(s.rebalanceWait)
	backoff := 50 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if errors.Is(err, herder.ErrRebalancing) && s.rebalanceWait > 0 && time.Now().Add(backoff).Before(retryUntil) {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
			case <-t.C:
				if backoff *= 2; backoff > time.Second {
					backoff = time.Second
				}
				continue
			}
		}
		return s.translate(ctx, err, forwardable)
	}
}

func (s *Server) translate(ctx context.Context, err error, forwardable bool) error {
	var pnf *connect.PluginNotFoundError
	if errors.As(err, &pnf) && pnf.Kind == "Connector" {
		return s.connectorClassError(pnf)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return newRestError(500, s.timeoutMessage())
	}
	if errors.Is(err, herder.ErrRebalancing) {
		var re *herder.RestError
		if errors.As(err, &re) && re.Status != 0 && re.Message != "" {
			return err
		}
		if forwardable {
			return newRestError(409, msgStaleConfig)
		}
		return newRestError(500, msgRebalanceGET)
	}
	return err
}

func (s *Server) timeoutMessage() string {
	if sr, ok := s.h.(herder.StageReporter); ok {
		if summary := stageSummary(sr); summary != "" {
			return msgTimedOut + ". " + summary
		}
	}
	return msgTimedOut
}

func stageSummary(sr herder.StageReporter) string {
	desc, started, completed, ok := sr.CurrentStage()
	if !ok {
		return ""
	}
	if !completed.IsZero() {
		return fmt.Sprintf("The last operation the worker completed was %s, which began at %s and completed at %s.", desc, javaInstant(started), javaInstant(completed))
	}
	return fmt.Sprintf("The worker is currently %s, which began at %s.", desc, javaInstant(started))
}

// javaInstant formats like java.time.Instant.toString for a millisecond instant.
func javaInstant(t time.Time) string {
	t = t.UTC().Truncate(time.Millisecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// forwardParam reads the hidden `forward` query parameter: nil when absent, else Boolean.valueOf.
func forwardParam(r *http.Request) *bool {
	vals, ok := r.URL.Query()["forward"]
	if !ok || len(vals) == 0 {
		return nil
	}
	b := strings.EqualFold(vals[0], "true")
	return &b
}

type forwarded struct {
	status int
	header http.Header
	body   []byte
}

// maybeForward handles a *herder.NotLeaderError the way HerderRequestHandler.completeOrForwardRequest does.
// It reports false when err is something else. location, if set, is sent with a 201 from the leader.
func (s *Server) maybeForward(w http.ResponseWriter, r *http.Request, err error, body []byte, extra url.Values, location string, extraHeaders ...string) bool {
	var nl *herder.NotLeaderError
	if !errors.As(err, &nl) {
		return false
	}
	fwd := forwardParam(r)
	if fwd != nil && !*fwd {
		s.log.Error(fmt.Sprintf("Request '%s %s' failed because it couldn't find the target Connect worker within two hops (between workers).", r.Method, r.URL.Path))
		writeError(w, newRestError(409, msgConflict))
		return true
	}
	if nl.LeaderURL == "" {
		writeError(w, newRestError(409, msgNoLeader))
		return true
	}
	q := url.Values{}
	q.Set("forward", fmt.Sprint(fwd == nil))
	for k, vs := range extra {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	res, ferr := s.forwardToLeader(r, nl.LeaderURL, r.URL.EscapedPath()+"?"+q.Encode(), body, extraHeaders)
	if ferr != nil {
		writeError(w, ferr)
		return true
	}
	if res.status == http.StatusCreated && location != "" {
		w.Header().Set("Location", location)
	}
	if res.status == http.StatusNoContent || len(res.body) == 0 {
		w.WriteHeader(res.status)
		return true
	}
	writeRaw(w, res.status, res.body)
	return true
}

// leaderGoneWait bounds how long a request waits for the successor of a leader whose REST listener refuses
// connections: the members remove such a leader within about two probe intervals and the next rebalance
// names its successor, a few seconds in all.
const leaderGoneWait = 10 * time.Second

// errLeaderGone marks a forward that the leader's address refused: nothing listens there any more.
var errLeaderGone = errors.New("leader refuses connections")

// forwardToLeader forwards the request to the leader at leaderURL. When the leader's address refuses the
// connection and the herder is in a group, it waits (up to leaderGoneWait) for the next leader and forwards
// there, or answers 409 so that the client retries once the group settled: a refused connection never
// delivered the request, so sending it again is safe. A leader that died while serving the request may have
// applied it: that request is answered 409 at once, for the client to retry. Without a group both are the
// JVM's 500.
func (s *Server) forwardToLeader(r *http.Request, leaderURL, pathAndQuery string, body []byte, extraHeaders []string) (*forwarded, error) {
	la, inGroup := s.h.(herder.LeaderAwaiter)
	deadline := time.Now().Add(leaderGoneWait)
	for {
		res, err := s.forward(r, strings.TrimRight(leaderURL, "/")+pathAndQuery, body, extraHeaders)
		if inGroup && errors.Is(err, errLeaderDied) {
			s.log.Info("The leader died while serving a forwarded request; the client retries", "leader", leaderURL, "method", r.Method, "path", r.URL.Path)
			return nil, newRestError(http.StatusConflict, msgStaleConfig)
		}
		if err == nil || !inGroup || !errors.Is(err, errLeaderGone) {
			return res, err
		}
		s.log.Info("The leader refuses connections; waiting for the next leader", "leader", leaderURL, "method", r.Method, "path", r.URL.Path)
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		_, next := la.AwaitLeaderChange(ctx, leaderURL)
		cancel()
		if next == "" {
			return nil, newRestError(http.StatusConflict, msgStaleConfig)
		}
		leaderURL = next
	}
}

// forward sends the request to the leader, copying only Authorization (plus the named headers), and returns
// a 2xx answer; error answers come back as the leader's status, code and message (RestClient.httpRequest).
func (s *Server) forward(r *http.Request, target string, body []byte, extraHeaders []string) (*forwarded, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.requestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target, rd)
	if err != nil {
		return nil, newRestError(500, "Error trying to forward REST request: "+err.Error())
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "kafka-connect")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range append([]string{"Authorization"}, extraHeaders...) {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	s.log.Debug("Forwarding request", "url", target, "method", r.Method)
	resp, err := s.client.Do(req)
	if err != nil {
		msg := "IO Error trying to forward REST request: " + err.Error()
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, &markedError{restError: newRestError(500, msg), mark: errLeaderGone}
		}
		if droppedConnection(err) && refusesConnections(ctx, req.URL) {
			return nil, &markedError{restError: newRestError(500, msg), mark: errLeaderDied}
		}
		return nil, newRestError(500, msg)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, newRestError(500, "IO Error trying to forward REST request: "+err.Error())
	}
	switch {
	case resp.StatusCode == http.StatusNoContent:
		return &forwarded{status: resp.StatusCode, header: resp.Header}, nil
	case resp.StatusCode >= 400:
		var eb struct {
			ErrorCode int    `json:"error_code"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal(data, &eb); err != nil {
			return nil, newRestError(500, "IO Error trying to forward REST request: "+err.Error())
		}
		return nil, &restError{status: resp.StatusCode, code: eb.ErrorCode, msg: eb.Message}
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if len(bytes.TrimSpace(data)) > 0 && !json.Valid(data) {
			return nil, newRestError(500, "IO Error trying to forward REST request: invalid JSON in response")
		}
		return &forwarded{status: resp.StatusCode, header: resp.Header, body: data}, nil
	}
	return nil, newRestError(500, fmt.Sprintf("Unexpected status code when handling forwarded request: %d", resp.StatusCode))
}

// errLeaderDied marks a forward whose connection the leader dropped unanswered, its address refusing
// connections afterwards: the leader died while serving it and may have applied it, so it is not sent again.
var errLeaderDied = errors.New("leader died while serving the request")

// droppedConnection tells whether err is the connection ending before the answer came.
func droppedConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// refusesConnections tells whether nothing listens at u's address any more. A process that dies closes
// its connections and its listener one after the other, so a connection that ended may be seen before the
// refusal: the address is probed a few times, briefly apart.
func refusesConnections(ctx context.Context, u *url.URL) bool {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	for i := range deathProbes {
		if i > 0 {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(deathProbeGap):
			}
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := (&net.Dialer{}).DialContext(pctx, "tcp", addr)
		cancel()
		if err != nil {
			return errors.Is(err, syscall.ECONNREFUSED)
		}
		c.Close()
	}
	return false
}

// deathProbes and deathProbeGap bound the probes of refusesConnections: a live leader that dropped a
// connection costs the request 100 ms more.
const (
	deathProbes   = 3
	deathProbeGap = 50 * time.Millisecond
)

// markedError is the JVM's 500 for a failed forward, recognisable by its mark (errLeaderGone, errLeaderDied)
// so that forwardToLeader can answer otherwise within a group.
type markedError struct {
	*restError
	mark error
}

func (e *markedError) Is(target error) bool { return target == e.mark }
func (e *markedError) Unwrap() error        { return e.restError }
