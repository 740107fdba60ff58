package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// recoverPanics turns a panic in a handler into the JVM's 500 error body (as ConnectExceptionMapper answers any
// unexpected exception) and an error log line with the stack, so that one bad request never kills the worker
// or leaves the client with an empty reply.
func recoverPanics(log *slog.Logger, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { //nolint:errorlint // a sentinel passed to panic, compared as net/http does
				panic(v)
			}
			msg := fmt.Sprint(v)
			log.Error("Uncaught exception in REST call to "+r.URL.Path, "method", r.Method, "error", msg, "stack", string(debug.Stack()))
			if tw.wroteHeader {
				// Part of the answer is out: abort the connection rather than append an error to it.
				panic(http.ErrAbortHandler)
			}
			writeError(tw, newRestError(http.StatusInternalServerError, msg))
		}()
		h.ServeHTTP(tw, r)
	})
}

// trackingWriter remembers whether the status line has been written.
type trackingWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wroteHeader = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wroteHeader = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
