package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
)

// Request bodies cost memory twice: their bytes while they are read, and the parsed tree, which for a body of
// small values is some 70 times the body's size. Both are bounded per worker, so that parallel bodies cannot
// grow the heap past a few hundred MiB whoever sends them: at most readBudget bytes of bodies are held at once
// (past it a request is answered 503 at once), and at most parseBudget bytes of them are parsed at once (a
// request waits its turn for up to parseWait, then is answered 503). See docs/SECURITY.md.
const (
	readBudget  = 32 * maxBodyBytes
	parseBudget = maxBodyBytes
	parseWait   = 10 * time.Second
)

type bodyBudget struct {
	read, parse *semaphore.Weighted
}

func newBodyBudget() *bodyBudget {
	return &bodyBudget{read: semaphore.NewWeighted(readBudget), parse: semaphore.NewWeighted(parseBudget)}
}

const msgBodiesBusy = "The worker is reading as many request bodies as it allows at once; retry later"

// gatedBody is a request body that is read, and then parsed, within the worker's body budget. The handler
// reads it through readBody; the endpoint releases what it held once the handler returns.
type gatedBody struct {
	io.ReadCloser // limited to maxBodyBytes
	budget        *bodyBudget
	ctx           context.Context
	contentLength int64
	read, parse   int64 // bytes held of each budget
}

// readAll reads the body once room for it is reserved, then waits for room to parse it.
func (g *gatedBody) readAll() ([]byte, error) {
	want := int64(maxBodyBytes) // a chunked body may take the whole limit
	if g.contentLength >= 0 && g.contentLength < want {
		want = g.contentLength
	}
	if !g.budget.read.TryAcquire(want) {
		return nil, newRestError(503, msgBodiesBusy)
	}
	g.read = want
	b, err := readAllSized(g.ReadCloser, g.contentLength)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(g.ctx, parseWait)
	defer cancel()
	n := max(int64(len(b)), 1)
	if err := g.budget.parse.Acquire(ctx, n); err != nil {
		if errors.Is(g.ctx.Err(), context.Canceled) {
			return nil, g.ctx.Err()
		}
		return nil, newRestError(503, msgBodiesBusy)
	}
	g.parse = n
	return b, nil
}

func (g *gatedBody) release() {
	if g.parse > 0 {
		g.budget.parse.Release(g.parse)
		g.parse = 0
	}
	if g.read > 0 {
		g.budget.read.Release(g.read)
		g.read = 0
	}
}

// gateBody limits r's body to maxBodyBytes and puts it under the worker's body budget; call release once the
// handler returns.
func (s *Server) gateBody(w http.ResponseWriter, r *http.Request) (release func()) {
	g := &gatedBody{ReadCloser: http.MaxBytesReader(w, r.Body, maxBodyBytes), budget: s.bodies, ctx: r.Context(),
		contentLength: r.ContentLength}
	r.Body = g
	return g.release
}

// readAllSized is io.ReadAll into one buffer of the announced size (no doubling copies of a large body).
func readAllSized(r io.Reader, contentLength int64) ([]byte, error) {
	if contentLength < 0 || contentLength > maxBodyBytes {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, contentLength+1) // +1: the read that finds the end needs room
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than announced: let append grow it
		}
	}
}
