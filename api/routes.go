package api

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"
)

// The REST routes: the JVM's paths and methods on the main and the admin listeners, each wrapped in the
// middleware of middleware.go.

type route struct {
	path     string
	methods  []string
	consumes bool // @Consumes(application/json)
	internal bool // a request between workers, exempt from REST extension authentication
	handler  func(w http.ResponseWriter, r *http.Request)
}

func (s *Server) routes(main, admin bool) []route {
	var rs []route
	if main {
		rs = append(rs,
			route{"/", []string{"GET"}, false, false, s.serverInfo},
			route{"/health", []string{"GET"}, false, false, s.health},
			route{"/connectors", []string{"GET"}, true, false, s.listConnectors},
			route{"/connectors", []string{"POST"}, true, false, s.createConnector},
			route{"/connectors/{connector}", []string{"GET"}, true, false, s.getConnector},
			route{"/connectors/{connector}", []string{"DELETE"}, true, false, s.deleteConnector},
			route{"/connectors/{connector}/config", []string{"GET"}, true, false, s.getConnectorConfig},
			route{"/connectors/{connector}/config", []string{"PUT"}, true, false, s.putConnectorConfig},
			route{"/connectors/{connector}/config", []string{"PATCH"}, true, false, s.patchConnectorConfig},
			route{"/connectors/{connector}/status", []string{"GET"}, true, false, s.connectorStatus},
			route{"/connectors/{connector}/topics", []string{"GET"}, true, false, s.activeTopics},
			route{"/connectors/{connector}/topics/reset", []string{"PUT"}, true, false, s.resetActiveTopics},
			route{"/connectors/{connector}/restart", []string{"POST"}, true, false, s.restartConnector},
			route{"/connectors/{connector}/stop", []string{"PUT"}, true, false, s.stopConnector},
			route{"/connectors/{connector}/pause", []string{"PUT"}, true, false, s.pauseConnector},
			route{"/connectors/{connector}/resume", []string{"PUT"}, true, false, s.resumeConnector},
			route{"/connectors/{connector}/tasks", []string{"GET"}, true, false, s.taskConfigs},
			route{"/connectors/{connector}/tasks", []string{"POST"}, false, true, s.putTaskConfigs},
			route{"/connectors/{connector}/tasks/{task}/status", []string{"GET"}, true, false, s.taskStatus},
			route{"/connectors/{connector}/tasks/{task}/restart", []string{"POST"}, true, false, s.restartTask},
			route{"/connectors/{connector}/offsets", []string{"GET"}, true, false, s.getOffsets},
			route{"/connectors/{connector}/offsets", []string{"PATCH"}, true, false, s.alterOffsets},
			route{"/connectors/{connector}/offsets", []string{"DELETE"}, true, false, s.resetOffsets},
			route{"/connector-plugins", []string{"GET"}, true, false, s.listPlugins},
			route{"/connector-plugins/{plugin}/config", []string{"GET"}, true, false, s.pluginConfig},
			route{"/connector-plugins/{plugin}/config/validate", []string{"PUT"}, true, false, s.validateConfig},
		)
	}
	if admin {
		rs = append(rs,
			route{"/admin/loggers", []string{"GET"}, true, false, s.listLoggers},
			route{"/admin/loggers/{logger}", []string{"GET"}, true, false, s.getLogger},
			route{"/admin/loggers/{logger}", []string{"PUT"}, true, false, s.setLogger},
		)
		if s.reconciler != nil {
			rs = append(rs,
				route{"/connectd/reconcile", []string{"GET"}, true, false, s.reconcileStatus},
				route{"/connectd/reconcile", []string{"POST"}, true, false, s.reconcileNow},
			)
		}
		if s.scd != nil {
			rs = append(rs, route{"/connectd/connectors/{connector}/scd", []string{"POST"}, true, false, s.materializeSCD})
		}
	}
	return rs
}

func (s *Server) router(main, admin bool) *mux.Router {
	r := mux.NewRouter()
	r.UseEncodedPath()
	for _, rt := range s.routes(main, admin) {
		rt := rt
		methods := rt.methods
		if len(methods) == 1 && methods[0] == "GET" {
			methods = []string{"GET", "HEAD"}
		}
		r.Handle(rt.path, s.endpoint(rt)).Methods(methods...)
	}
	if main {
		for path, h := range s.extra {
			if strings.HasSuffix(path, "/") { // a subtree (e.g. /debug/pprof/); wrap trims the trailing slash
				r.PathPrefix(strings.TrimSuffix(path, "/")).Handler(s.authenticated(h)).Methods("GET", "HEAD")
				continue
			}
			r.Handle(path, s.authenticated(h)).Methods("GET", "HEAD")
		}
	}
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeUntypedError(w, 404, msgNotFound)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodOptions {
			if !s.authorize(w, req) {
				return
			}
			w.Header().Set("Allow", strings.Join(allowedMethods(r, req), ","))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeUntypedError(w, 405, msgNotAllowed)
	})
	return r
}

func allowedMethods(r *mux.Router, req *http.Request) []string {
	var out []string
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
		probe := req.Clone(req.Context())
		probe.Method = m
		var match mux.RouteMatch
		if r.Match(probe, &match) && match.MatchErr == nil {
			out = append(out, m)
		}
	}
	return append(out, "OPTIONS")
}

// endpoint applies Jersey's media-type checks before the resource method runs.
func (s *Server) endpoint(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.consumes {
			if ct := r.Header.Get("Content-Type"); ct != "" && !isJSONMediaType(ct) {
				writeUntypedError(w, 415, msgUnsupported)
				return
			}
		}
		if !acceptsJSON(r.Header.Values("Accept")) {
			writeUntypedError(w, 406, msgNotAcceptable)
			return
		}
		// JaasBasicAuthFilter runs once Jersey has matched the resource (so 404, 405, 406 and 415 come first)
		// and lets the internal task-config request through: the herder checks its session key signature.
		if !(rt.internal && !strings.Contains(pathVar(r, "connector"), "/")) && !s.authorize(w, r) {
			return
		}
		defer s.gateBody(w, r)()
		rt.handler(w, r)
	})
}
