package api

import (
	"container/list"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// DefaultIdleTimeout is Jetty's: a connection with no request for this long is closed, as is one whose
// request stalls this long.
const DefaultIdleTimeout = 30 * time.Second

// WithIdleTimeout sets connectd.rest.idle.timeout.ms.
func WithIdleTimeout(d time.Duration) Option { return func(s *Server) { s.idleTimeout = d } }

// WithMaxConnections sets connectd.rest.max.connections; n < 0 takes half the process's file-handle limit.
func WithMaxConnections(n int) Option { return func(s *Server) { s.maxConns = n } }

// defaultMaxConnections leaves half the process's file handles to its Kafka clients.
func defaultMaxConnections() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == 0 || lim.Cur > 1<<20 {
		return 10000
	}
	return max(int(lim.Cur/2), 16)
}

// connLimit caps a listener's open connections. Past the cap, a new connection closes the one that has
// waited longest for a request (connections serving a request are never closed for it); when none waits,
// the new connection is closed. So a client holding many idle connections cannot keep others out, nor take
// the file handles the worker's Kafka clients need.
type connLimit struct {
	max int

	mu      sync.Mutex
	open    int
	waiting *list.List                 // connections waiting for a request, longest waiting first
	at      map[net.Conn]*list.Element // their place in waiting
}

func newConnLimit(max int) *connLimit {
	return &connLimit{max: max, waiting: list.New(), at: map[net.Conn]*list.Element{}}
}

// track is the http.Server's ConnState hook.
func (l *connLimit) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	var evict net.Conn
	switch st {
	case http.StateNew:
		l.open++
		if l.open > l.max {
			if front := l.waiting.Front(); front != nil {
				evict = front.Value.(net.Conn)
				l.stopWaiting(evict)
			} else {
				evict = c
			}
		}
		if evict != c {
			l.at[c] = l.waiting.PushBack(c)
		}
	case http.StateIdle:
		l.stopWaiting(c)
		l.at[c] = l.waiting.PushBack(c)
	case http.StateActive:
		l.stopWaiting(c)
	case http.StateHijacked, http.StateClosed:
		l.stopWaiting(c)
		l.open--
	}
	l.mu.Unlock()
	if evict != nil {
		_ = evict.Close()
	}
}

func (l *connLimit) stopWaiting(c net.Conn) {
	if e, ok := l.at[c]; ok {
		l.waiting.Remove(e)
		delete(l.at, c)
	}
}

// Open is the number of open connections.
func (l *connLimit) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}
