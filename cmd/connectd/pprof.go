package main

import (
	"net/http"
	"net/http/pprof"
)

// pprofHandler serves Go's runtime profiles under /debug/pprof/ (worker key connectd.debug.pprof.enable):
// the index, named profiles (heap, allocs, goroutine, ...), cmdline, profile (CPU), symbol and trace.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof", pprof.Index) // the REST server trims a trailing slash
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
