package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"sort"
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
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
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
	v, err := jvm.ParseJSON(body)
	if err != nil {
		return nil, body, err
	}
	p := &jparser{b: body}
	m, err := p.bindStringMap(v, "")
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
	v, err := jvm.ParseJSON(body)
	if err != nil {
		writeError(w, withChain(err, classCreateRequest))
		return
	}
	p := &jparser{b: body}
	req, err := p.bindCreate(v)
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

// ---- offsets ----

func (s *Server) getOffsets(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	offs, err := read(s, r, func(ctx context.Context) (*herder.ConnectorOffsets, error) { return s.h.ConnectorOffsets(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	if offs == nil {
		offs = &herder.ConnectorOffsets{}
	}
	if offs.Offsets == nil {
		offs.Offsets = []herder.ConnectorOffset{}
	}
	writeJSON(w, 200, offs)
}

type messageBody struct {
	Message string `json:"message"`
}

func (s *Server) alterOffsets(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v, err := jvm.ParseJSON(body)
	if err != nil {
		writeError(w, withOffsetsChain(withChain(err, classOffsets)))
		return
	}
	if v == nil || v.Kind == jvm.Null {
		writeError(w, newRestError(500, npeOffsets))
		return
	}
	p := &jparser{b: body}
	entries, _, err := p.bindOffsets(v)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(entries) == 0 {
		writeError(w, newRestError(400, "Partitions / offsets need to be provided for an alter offsets request"))
		return
	}
	offs := herder.ConnectorOffsets{}
	for _, e := range entries {
		offs.Offsets = append(offs.Offsets, herder.ConnectorOffset{Partition: e.Partition, Offset: e.Offset})
	}
	var msg string
	err = s.call(r, true, func(ctx context.Context) error {
		var e error
		msg, e = s.h.AlterConnectorOffsets(ctx, name, offs)
		return e
	})
	s.finish(w, r, err, body, nil, 200, messageBody{msg})
}

func (s *Server) resetOffsets(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	var msg string
	err := s.call(r, true, func(ctx context.Context) error {
		var e error
		msg, e = s.h.ResetConnectorOffsets(ctx, name)
		return e
	})
	s.finish(w, r, err, nil, nil, 200, messageBody{msg})
}

// ---- internal ----

const (
	signatureHeader          = "X-Connect-Authorization"
	signatureAlgorithmHeader = "X-Connect-Request-Signature-Algorithm"
)

func macFor(alg string) (func() hash.Hash, bool) {
	switch alg {
	case "HmacSHA1":
		return sha1.New, true
	case "HmacSHA224":
		return sha256.New224, true
	case "HmacSHA256":
		return sha256.New, true
	case "HmacSHA384":
		return sha512.New384, true
	case "HmacSHA512":
		return sha512.New, true
	}
	return nil, false
}

// Sign computes the X-Connect-Authorization value for body (for the distributed herder's client).
func Sign(key, body []byte, algorithm string) (string, error) {
	newHash, ok := macFor(algorithm)
	if !ok {
		return "", fmt.Errorf("Algorithm %s not available", algorithm)
	}
	m := hmac.New(newHash, key)
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// SignRequest adds the signature headers to an internal request.
func SignRequest(req *http.Request, key, body []byte, algorithm string) error {
	sig, err := Sign(key, body, algorithm)
	if err != nil {
		return err
	}
	req.Header.Set(signatureHeader, sig)
	req.Header.Set(signatureAlgorithmHeader, algorithm)
	return nil
}

func (s *Server) putTaskConfigs(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v, err := jvm.ParseJSON(body)
	if err != nil {
		writeError(w, err)
		return
	}
	p := &jparser{b: body}
	configs, err := p.bindTaskConfigs(v)
	if err != nil {
		writeError(w, err)
		return
	}
	// InternalRequestSignature.fromHeaders
	alg, encoded := r.Header.Get(signatureAlgorithmHeader), r.Header.Get(signatureHeader)
	var signature []byte
	signed := alg != "" && encoded != ""
	if signed {
		if _, ok := macFor(alg); !ok {
			writeError(w, newRestError(400, fmt.Sprintf("Algorithm %s not available", alg)))
			return
		}
		if signature, err = javaBase64Decode(encoded); err != nil {
			writeError(w, newRestError(400, err.Error()))
			return
		}
	}
	putter, ok := s.h.(herder.TaskConfigPutter)
	if !ok {
		writeError(w, newRestError(500, msgStandaloneTask))
		return
	}
	if ks, ok := s.h.(herder.SessionKeySource); ok {
		key, algorithms, required := ks.SessionKey()
		if required {
			switch {
			case !signed:
				writeError(w, newRestError(400, "Internal request missing required signature"))
				return
			case !containsExact(algorithms, alg):
				writeError(w, newRestError(400, fmt.Sprintf("This worker does not support the '%s' key signing algorithm used by other workers. "+
					"This worker is currently configured to use: [%s]. "+
					"Check that all workers' configuration files permit the same set of signature algorithms, "+
					"and correct any misconfigured worker and restart it.", alg, strings.Join(algorithms, ", "))))
				return
			case key == nil:
				writeError(w, newRestError(503, "This worker is still starting up and has not been able to read a session key from the config topic yet"))
				return
			}
			expected, _ := Sign(key, body, alg)
			want, _ := base64.StdEncoding.DecodeString(expected)
			if !hmac.Equal(want, signature) {
				writeError(w, newRestError(403, "Internal request contained invalid signature."))
				return
			}
		}
	}
	err = s.call(r, true, func(ctx context.Context) error { return putter.PutTaskConfigs(ctx, name, configs) })
	if s.maybeForward(w, r, err, body, nil, "", signatureHeader, signatureAlgorithmHeader) {
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(204)
}

func containsExact(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ---- loggers ----

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
