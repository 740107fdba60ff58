package api

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/connectd/connectd/internal/herder"
)

// /admin/loggers: log levels by logger name over internal/logging, as the JVM's LoggingResource.
func (s *Server) listLoggers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, s.loggers.AllLevels())
}

func (s *Server) getLogger(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "logger")
	lv, ok := s.loggers.Level(name)
	if !ok {
		writeError(w, newRestError(404, "Logger "+name+" not found."))
		return
	}
	writeJSON(w, 200, lv)
}

func (s *Server) setLogger(w http.ResponseWriter, r *http.Request) {
	namespace := pathVar(r, "logger")
	m, _, err := readStringMap(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if m == nil {
		writeError(w, newRestError(500, npeLevelMap))
		return
	}
	level := m.vals["level"]
	if level == nil {
		writeError(w, newRestError(400, "Desired 'level' parameter was not specified in request."))
		return
	}
	if _, ok := parseLevelName(*level); !ok {
		writeError(w, newRestError(404, "invalid log level '"+*level+"'."))
		return
	}
	scope := "worker"
	if vals, ok := r.URL.Query()["scope"]; ok && len(vals) > 0 {
		scope = vals[0]
	}
	if strings.ToLower(scope) == "cluster" {
		if cs, ok := s.h.(herder.ClusterLoggerSetter); ok {
			if err := s.call(r, false, func(ctx context.Context) error { return cs.SetClusterLoggerLevel(ctx, namespace, *level) }); err != nil {
				writeError(w, err)
				return
			}
		} else if _, err := s.loggers.SetLevel(namespace, *level); err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(204)
		return
	}
	if strings.ToLower(scope) != "worker" {
		s.log.Warn(fmt.Sprintf("Received invalid scope '%s' in request to adjust logging level; will default to worker", scope))
	}
	affected, err := s.loggers.SetLevel(namespace, *level)
	if err != nil {
		writeError(w, err)
		return
	}
	sort.Strings(affected)
	writeJSON(w, 200, affected)
}

// finish ends a herder-backed handler: forward to the leader when the herder says so, else the error body,
