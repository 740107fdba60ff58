package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/connectd/connectd/connect/jvm"
	"github.com/connectd/connectd/internal/herder"
)

// Helpful NullPointerException texts the JVM answers (500) when a body is empty or JSON null.
const (
	npeCreateRequest = `Cannot invoke "org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest.name()" because "createRequest" is null`
	npeConfig        = `Cannot invoke "java.util.Map.get(Object)" because "connectorConfig" is null`
	npePatch         = `Cannot invoke "java.util.Map.forEach(java.util.function.BiConsumer)" because "patch" is null`
	npeOffsets       = `Cannot invoke "org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets.offsets()" because "offsets" is null`
	npeLevelMap      = `Cannot invoke "java.util.Map.get(Object)" because "levelMap" is null`
)

func pathVar(r *http.Request, name string) string {
	v := mux.Vars(r)[name]
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

func readBody(r *http.Request) ([]byte, error) {
	var b []byte
	var err error
	if g, ok := r.Body.(*gatedBody); ok {
		b, err = g.readAll()
	} else {
		b, err = io.ReadAll(r.Body)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var re *restError
		if errors.As(err, &re) {
			return nil, re
		}
		if errors.As(err, &mbe) {
			return nil, newRestError(413, "HTTP 413 Request Entity Too Large")
		}
		return nil, newRestError(500, err.Error())
	}
	return b, nil
}

// readStringMap reads a Map<String,String> body; nil map for an empty body or JSON null.
func readStringMap(r *http.Request) (*orderedMap, []byte, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, nil, err
	}
	v, stopped, err := parseFitting(body, fitsStringMap)
	if err != nil {
		return nil, body, err
	}
	p := &jparser{b: body}
	m, err := p.bindStringMap(v, "")
	err = boundStopped(stopped, err)
	if err == nil && v != nil {
		err = jvm.TrailingTokens(body, v.End, "java.util.Map")
	}
	return m, body, err
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func connectorLocation(r *http.Request, name string) string {
	return baseURL(r) + "/connectors/" + url.PathEscape(name)
}

// ---- root ----

func (s *Server) serverInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, struct {
		Version        string `json:"version"`
		Commit         string `json:"commit"`
		KafkaClusterID string `json:"kafka_cluster_id"`
	}{s.version, s.commit, s.h.KafkaClusterID()})
}

type workerStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.healthTimeout)
	defer cancel()
	err := s.h.Healthy(ctx)
	details := ""
	if sr, ok := s.h.(herder.StageReporter); ok {
		if d := stageSummary(sr); d != "" {
			details = " " + d
		}
	}
	switch {
	case err == nil:
		writeJSON(w, 200, workerStatus{"healthy", "Worker has completed startup and is ready to handle requests."})
	case errors.Is(err, herder.ErrNotReady):
		writeJSON(w, 503, workerStatus{"starting", "Worker is still starting up." + details})
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		writeJSON(w, 500, workerStatus{"unhealthy", "Worker was unable to handle this request and may be unable to handle other requests." + details})
	default:
		writeError(w, err)
	}
}

// ---- connectors ----

func (s *Server) listConnectors(w http.ResponseWriter, r *http.Request) {
	names, err := s.h.Connectors(r.Context())
	if err != nil {
		writeError(w, s.translate(r.Context(), err, false))
		return
	}
	if names == nil {
		names = []string{}
	}
	expand, ok := r.URL.Query()["expand"]
	if !ok {
		writeJSON(w, 200, names)
		return
	}
	out := map[string]map[string]any{}
outer:
	for _, n := range names {
		m := map[string]any{}
		for _, e := range expand {
			var v any
			var err error
			switch e {
			case "status":
				v, err = s.h.ConnectorStatus(r.Context(), n)
			case "info":
				v, err = s.h.ConnectorInfo(r.Context(), n)
			default:
				s.log.Info("Ignoring unknown expansion type " + e)
				continue
			}
			if errors.Is(err, herder.ErrNotFound) {
				continue outer // removed while we looked it up
			}
			if err != nil {
				writeError(w, s.translate(r.Context(), err, false))
				return
			}
			m[e] = v
		}
		out[n] = m
	}
	writeJSON(w, 200, out)
}

func (s *Server) createConnector(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v, stopped, err := parseFitting(body, fitsBean)
	if err != nil {
		writeError(w, withChain(err, classCreateRequest))
		return
	}
	p := &jparser{b: body}
	req, err := p.bindCreate(v)
	err = boundStopped(stopped, err)
	if err == nil && v != nil {
		err = jvm.TrailingTokens(body, v.End, classCreateRequest)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if req == nil {
		writeError(w, newRestError(500, npeCreateRequest))
		return
	}
	name := ""
	if req.name != nil {
		name = strings.TrimSpace(*req.name)
	}
	cfg, err := checkConfigName(name, req.config)
	if err != nil {
		writeError(w, err)
		return
	}
	initial := herder.TargetState("")
	switch req.initialState {
	case "RUNNING":
		initial = herder.TargetStarted
	case "PAUSED":
		initial = herder.TargetPaused
	case "STOPPED":
		initial = herder.TargetStopped
	}
	var info *herder.ConnectorInfo
	err = s.call(r, true, func(ctx context.Context) error {
		var e error
		info, _, e = s.h.PutConnectorConfig(ctx, name, cfg, initial, false)
		return e
	})
	if s.maybeForward(w, r, err, body, nil, connectorLocation(r, name)) {
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Location", connectorLocation(r, name))
	writeJSON(w, 201, info)
}

// checkConfigName is ConnectorsResource.checkAndPutConnectorConfigName.
func checkConfigName(name string, cfg *orderedMap) (map[string]string, error) {
	if cfg == nil {
		return nil, newRestError(500, npeConfig)
	}
	if included := cfg.vals["name"]; included != nil {
		if *included != name {
			return nil, newRestError(400, fmt.Sprintf("Connector name configuration (%s) doesn't match connector name in the URL (%s)", *included, name))
		}
	}
	out := cfg.plain()
	out["name"] = name
	return out, nil
}

func (s *Server) getConnector(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	info, err := read(s, r, func(ctx context.Context) (*herder.ConnectorInfo, error) { return s.h.ConnectorInfo(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, info)
}

func (s *Server) getConnectorConfig(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	cfg, err := read(s, r, func(ctx context.Context) (map[string]string, error) { return s.h.ConnectorConfig(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, cfg)
}

func (s *Server) putConnectorConfig(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	m, body, err := readStringMap(r)
	if err != nil {
		writeError(w, err)
		return
	}
	cfg, err := checkConfigName(name, m)
	if err != nil {
		writeError(w, err)
		return
	}
	var info *herder.ConnectorInfo
	var created bool
	err = s.call(r, true, func(ctx context.Context) error {
		var e error
		info, created, e = s.h.PutConnectorConfig(ctx, name, cfg, "", true)
		return e
	})
	if s.maybeForward(w, r, err, body, nil, connectorLocation(r, name)) {
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if created {
		w.Header().Set("Location", connectorLocation(r, name))
		writeJSON(w, 201, info)
		return
	}
	writeJSON(w, 200, info)
}

func (s *Server) patchConnectorConfig(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	m, body, err := readStringMap(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if m == nil {
		// The JVM looks the connector up, then fails patching with a null patch.
		err := s.call(r, true, func(ctx context.Context) error { _, e := s.h.ConnectorConfig(ctx, name); return e })
		if err == nil {
			err = newRestError(500, npePatch)
		}
		writeError(w, err)
		return
	}
	var info *herder.ConnectorInfo
	err = s.call(r, true, func(ctx context.Context) error {
		var e error
		info, e = s.h.PatchConnectorConfig(ctx, name, m.vals)
		return e
	})
	s.finish(w, r, err, body, nil, 200, info)
}

func (s *Server) deleteConnector(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	err := s.call(r, true, func(ctx context.Context) error { return s.h.DeleteConnector(ctx, name) })
	s.finish(w, r, err, nil, nil, 204, nil)
}

func (s *Server) connectorStatus(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	st, err := read(s, r, func(ctx context.Context) (*herder.ConnectorStateInfo, error) { return s.h.ConnectorStatus(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, st)
}

func (s *Server) activeTopics(w http.ResponseWriter, r *http.Request) {
	if !s.topicTracking {
		writeError(w, newRestError(403, "Topic tracking is disabled."))
		return
	}
	name := pathVar(r, "connector")
	topics, err := read(s, r, func(ctx context.Context) ([]string, error) { return s.h.ConnectorActiveTopics(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	if topics == nil {
		topics = []string{}
	}
	writeJSON(w, 200, map[string]any{name: map[string]any{"topics": topics}})
}

func (s *Server) resetActiveTopics(w http.ResponseWriter, r *http.Request) {
	if !s.topicTracking {
		writeError(w, newRestError(403, "Topic tracking is disabled."))
		return
	}
	if !s.topicReset {
		writeError(w, newRestError(403, "Topic tracking reset is disabled."))
		return
	}
	name := pathVar(r, "connector")
	if err := s.call(r, false, func(ctx context.Context) error { return s.h.ResetConnectorActiveTopics(ctx, name) }); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(202)
}

func queryBool(r *http.Request, key string) bool {
	vals := r.URL.Query()[key]
	return len(vals) > 0 && strings.EqualFold(vals[0], "true")
}

func (s *Server) restartConnector(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	includeTasks, onlyFailed := queryBool(r, "includeTasks"), queryBool(r, "onlyFailed")
	if !includeTasks && !onlyFailed {
		err := s.call(r, true, func(ctx context.Context) error { return s.h.RestartConnector(ctx, name) })
		if s.maybeForward(w, r, err, nil, nil, "") {
			return
		}
		if err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(204)
		return
	}
	var st *herder.ConnectorStateInfo
	err := s.call(r, true, func(ctx context.Context) error {
		var e error
		st, e = s.h.RestartConnectorAndTasks(ctx, herder.RestartRequest{Connector: name, IncludeTasks: includeTasks, OnlyFailed: onlyFailed})
		return e
	})
	extra := url.Values{"includeTasks": {strconv.FormatBool(includeTasks)}, "onlyFailed": {strconv.FormatBool(onlyFailed)}}
	s.finish(w, r, err, nil, extra, 202, st)
}

func (s *Server) stopConnector(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	err := s.call(r, true, func(ctx context.Context) error { return s.h.StopConnector(ctx, name) })
	s.finish(w, r, err, nil, nil, 204, nil)
}

func (s *Server) pauseConnector(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	if err := s.call(r, false, func(ctx context.Context) error { return s.h.PauseConnector(ctx, name) }); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(202)
}

func (s *Server) resumeConnector(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	if err := s.call(r, false, func(ctx context.Context) error { return s.h.ResumeConnector(ctx, name) }); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(202)
}

func (s *Server) taskConfigs(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	tasks, err := read(s, r, func(ctx context.Context) ([]herder.TaskInfo, error) { return s.h.TaskConfigs(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	if tasks == nil {
		tasks = []herder.TaskInfo{}
	}
	writeJSON(w, 200, tasks)
}

// taskID parses the {task} path parameter; Jersey answers 404 when it is not an Integer.
func taskID(r *http.Request) (int, bool) {
	n, err := strconv.ParseInt(pathVar(r, "task"), 10, 32)
	return int(n), err == nil
}

func (s *Server) taskStatus(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(r)
	if !ok {
		writeError(w, newRestError(404, msgNotFound))
		return
	}
	st, err := read(s, r, func(ctx context.Context) (*herder.TaskState, error) {
		return s.h.TaskStatus(ctx, herder.ConnectorTaskID{Connector: pathVar(r, "connector"), Task: id})
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, st)
}

func (s *Server) restartTask(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(r)
	if !ok {
		writeError(w, newRestError(404, msgNotFound))
		return
	}
	tid := herder.ConnectorTaskID{Connector: pathVar(r, "connector"), Task: id}
	err := s.call(r, true, func(ctx context.Context) error { return s.h.RestartTask(ctx, tid) })
	s.finish(w, r, err, nil, nil, 204, nil)
}

// else the success status with v as JSON (no body when v is nil).
func (s *Server) finish(w http.ResponseWriter, r *http.Request, err error, body []byte, extra url.Values, status int, v any) {
	if s.maybeForward(w, r, err, body, extra, "") {
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if v == nil {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, v)
}

// read runs a herder read (never forwarded: GETs are answered from the local snapshot).
func read[T any](s *Server, r *http.Request, fn func(ctx context.Context) (T, error)) (T, error) {
	var out T
	err := s.call(r, false, func(ctx context.Context) (e error) {
		out, e = fn(ctx)
		return e
	})
	return out, err
}
