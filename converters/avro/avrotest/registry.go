// Package avrotest is an in-memory Schema Registry speaking the subset of Confluent's REST API that
// serializers and converters use, for tests. It exists because Confluent's own server is not published
// to any package registry reachable here and Karapace is not on PyPI; see converters/avro/README.md.
//
// Endpoints: GET /schemas/ids/{id}, GET /schemas/ids/{id}/versions, GET /schemas/ids/{id}/subjects,
// GET /subjects, GET /subjects/{s}/versions, GET /subjects/{s}/versions/{v|latest},
// GET /subjects/{s}/versions/{v}/schema, POST /subjects/{s}/versions (register), POST /subjects/{s}
// (lookup), DELETE /subjects/{s}, GET /config, GET/PUT /config/{s}, GET /schemas/types, GET /.
// Schemas are identified by their JSON after re-encoding (whitespace and key order ignored), the same id
// being reused across subjects as Confluent's registry does. Optional basic auth and TLS (httptest).
package avrotest

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry is the in-memory registry. Use New or NewTLS; Close stops it.
type Registry struct {
	srv  *httptest.Server
	addr string // of a stopped registry

	mu       sync.Mutex
	nextID   int
	ids      map[string]int    // normalized schema → id
	schemas  map[int]stored    // id → schema
	subjects map[string][]int  // subject → ids by version (index+1 = version)
	deleted  map[string]bool   // soft-deleted subjects
	config   map[string]string // subject ("" = global) → compatibility

	// User and Password, when set, require HTTP basic auth on every request.
	User, Password string
	users          map[string]user // AddUser
	// Requests counts requests served (for cache tests).
	Requests atomic.Int64
	// unloaded is the number of GET /schemas/ids/{id} requests still to answer 40403, as a registry that
	// has not read its schemas topic yet (Karapace just after a restart) does.
	unloaded atomic.Int64
}

type user struct {
	password string
	write    bool
}

// AddUser requires HTTP basic auth on every request and adds a user; a user without write access is
// refused registrations, deletions and config changes (403), as with Karapace's ACLs.
func (r *Registry) AddUser(name, password string, write bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == nil {
		r.users = map[string]user{}
	}
	r.users[name] = user{password, write}
}

// AnswerNotFound makes the next n GET /schemas/ids/{id} requests answer 40403 as if the registry had not
// loaded its schemas yet.
func (r *Registry) AnswerNotFound(n int) { r.unloaded.Store(int64(n)) }

type stored struct {
	Schema     string
	SchemaType string
	References json.RawMessage
}

// New starts a plain-HTTP registry on a loopback port.
func New() *Registry {
	r := newRegistry()
	r.srv = httptest.NewServer(r)
	return r
}

// NewTLS starts an HTTPS registry; Certificate gives its self-signed certificate (PEM via CertPEM).
func NewTLS() *Registry {
	r := newRegistry()
	r.srv = httptest.NewTLSServer(r)
	return r
}

func newRegistry() *Registry {
	return &Registry{nextID: 1, ids: map[string]int{}, schemas: map[int]stored{}, subjects: map[string][]int{},
		deleted: map[string]bool{}, config: map[string]string{"": "BACKWARD"}}
}

// URL is the base URL ("http://127.0.0.1:port").
func (r *Registry) URL() string { return r.srv.URL }

// Server is the underlying test server (its Certificate() and Client() for TLS tests).
func (r *Registry) Server() *httptest.Server { return r.srv }

// Close stops the server.
func (r *Registry) Close() { r.srv.Close() }

// Stop takes the registry down (connections refused) keeping its schemas; Start brings it back on the
// same address. A plain-HTTP registry only.
func (r *Registry) Stop() {
	r.addr = r.srv.Listener.Addr().String()
	r.srv.Close()
}

// Start restarts a stopped registry on its former address.
func (r *Registry) Start() error {
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		return err
	}
	r.srv = httptest.NewUnstartedServer(r)
	r.srv.Listener.Close()
	r.srv.Listener = l
	r.srv.Start()
	return nil
}

// Register adds a schema under subject directly and returns its id (test setup without HTTP).
func (r *Registry) Register(subject, schema string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, _ := r.register(subject, stored{Schema: schema, SchemaType: "AVRO"})
	return id
}

// SchemaByID returns the schema text stored for id.
func (r *Registry) SchemaByID(id int) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.schemas[id]
	return s.Schema, ok
}

// Subjects lists the live subjects.
func (r *Registry) Subjects() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.subjectList()
}

func (r *Registry) subjectList() []string {
	out := []string{}
	for s := range r.subjects {
		if !r.deleted[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func normalize(schema string) string {
	var v any
	d := json.NewDecoder(strings.NewReader(schema))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return schema
	}
	b, err := json.Marshal(v) // map keys sorted: a canonical form for identity
	if err != nil {
		return schema
	}
	return string(b)
}

func (r *Registry) register(subject string, s stored) (int, error) {
	if s.SchemaType == "" {
		s.SchemaType = "AVRO"
	}
	if s.SchemaType == "AVRO" {
		var v any
		if err := json.Unmarshal([]byte(s.Schema), &v); err != nil {
			return 0, fmt.Errorf("invalid schema: %v", err)
		}
	}
	key := s.SchemaType + "|" + normalize(s.Schema)
	id, ok := r.ids[key]
	if !ok {
		id = r.nextID
		r.nextID++
		r.ids[key] = id
		r.schemas[id] = s
	}
	if r.deleted[subject] {
		delete(r.deleted, subject)
		r.subjects[subject] = nil
	}
	for _, x := range r.subjects[subject] {
		if x == id {
			return id, nil
		}
	}
	r.subjects[subject] = append(r.subjects[subject], id)
	return id, nil
}

type errBody struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="Karapace Schema Registry"`)
	fail(w, http.StatusUnauthorized, 401, "Unauthorized")
}

func forbidden(w http.ResponseWriter) { fail(w, http.StatusForbidden, 403, "Forbidden") }

func fail(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, errBody{Code: code, Message: msg})
}

// ServeHTTP implements the REST API.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	if !r.authorized(w, req) {
		return
	}
	parts := strings.Split(strings.Trim(req.URL.EscapedPath(), "/"), "/")
	for i := range parts {
		if s, err := unescape(parts[i]); err == nil {
			parts[i] = s
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case len(parts) == 1 && parts[0] == "":
		writeJSON(w, 200, map[string]any{})
	case parts[0] == "schemas" && len(parts) == 2 && parts[1] == "types":
		writeJSON(w, 200, []string{"AVRO"})
	case parts[0] == "schemas" && len(parts) >= 3 && parts[1] == "ids":
		r.serveSchemaID(w, req, parts[2:])
	case parts[0] == "subjects" && len(parts) == 1:
		writeJSON(w, 200, r.subjectList())
	case parts[0] == "subjects" && len(parts) >= 2:
		r.serveSubject(w, req, parts[1], parts[2:])
	case parts[0] == "config":
		subject := ""
		if len(parts) > 1 {
			subject = parts[1]
		}
		if req.Method == http.MethodPut {
			var body struct{ Compatibility string }
			_ = json.NewDecoder(req.Body).Decode(&body)
			r.config[subject] = body.Compatibility
			writeJSON(w, 200, map[string]string{"compatibility": body.Compatibility})
			return
		}
		c, ok := r.config[subject]
		if !ok {
			fail(w, 404, 40408, "Subject '"+subject+"' does not have subject-level compatibility configured")
			return
		}
		writeJSON(w, 200, map[string]string{"compatibilityLevel": c})
	default:
		fail(w, 404, 404, "HTTP 404 Not Found")
	}
}

// authorized checks basic auth: User/Password, or the users of AddUser (a read-only user may only read).
func (r *Registry) authorized(w http.ResponseWriter, req *http.Request) bool {
	r.mu.Lock()
	users := r.users
	r.mu.Unlock()
	if r.User == "" && r.Password == "" && users == nil {
		return true
	}
	name, pass, ok := req.BasicAuth()
	if r.User != "" || r.Password != "" {
		if ok && name == r.User && pass == r.Password {
			return true
		}
	}
	u, known := users[name]
	if !ok || !known || u.password != pass {
		unauthorized(w)
		return false
	}
	if !u.write && req.Method != http.MethodGet && !isReadPost(req) {
		forbidden(w)
		return false
	}
	return true
}

// isReadPost: a lookup (POST /subjects/{s}) or a compatibility check only reads.
func isReadPost(req *http.Request) bool {
	if req.Method != http.MethodPost {
		return false
	}
	p := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return (len(p) == 2 && p[0] == "subjects") || p[0] == "compatibility"
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

func (r *Registry) serveSchemaID(w http.ResponseWriter, req *http.Request, rest []string) {
	id, err := strconv.Atoi(rest[0])
	s, ok := r.schemas[id]
	if ok && r.unloaded.Add(-1) >= 0 {
		ok = false
	}
	if err != nil || !ok {
		fail(w, 404, 40403, "Schema "+rest[0]+" not found")
		return
	}
	if len(rest) == 1 {
		body := map[string]any{"schema": s.Schema}
		if s.SchemaType != "AVRO" {
			body["schemaType"] = s.SchemaType
		}
		writeJSON(w, 200, body)
		return
	}
	type sv struct {
		Subject string `json:"subject"`
		Version int    `json:"version"`
	}
	var pairs []sv
	var subjects []string
	for _, subj := range r.subjectList() {
		for i, x := range r.subjects[subj] {
			if x == id {
				pairs = append(pairs, sv{subj, i + 1})
				subjects = append(subjects, subj)
			}
		}
	}
	switch rest[1] {
	case "versions":
		writeJSON(w, 200, pairs)
	case "subjects":
		writeJSON(w, 200, subjects)
	case "schema":
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		_, _ = w.Write([]byte(s.Schema))
	default:
		fail(w, 404, 404, "HTTP 404 Not Found")
	}
}

func (r *Registry) serveSubject(w http.ResponseWriter, req *http.Request, subject string, rest []string) {
	versions, exists := r.subjects[subject]
	if r.deleted[subject] {
		exists = false
	}
	decodeBody := func() (stored, bool) {
		var body struct {
			Schema     string          `json:"schema"`
			SchemaType string          `json:"schemaType"`
			References json.RawMessage `json:"references"`
		}
		raw := new(bytes.Buffer)
		_, _ = raw.ReadFrom(req.Body)
		if err := json.Unmarshal(raw.Bytes(), &body); err != nil || body.Schema == "" {
			fail(w, 422, 42201, "Invalid schema")
			return stored{}, false
		}
		return stored{Schema: body.Schema, SchemaType: body.SchemaType, References: body.References}, true
	}
	switch {
	case len(rest) == 0 && req.Method == http.MethodPost: // lookup
		s, ok := decodeBody()
		if !ok {
			return
		}
		if !exists {
			fail(w, 404, 40401, "Subject '"+subject+"' not found.")
			return
		}
		if s.SchemaType == "" {
			s.SchemaType = "AVRO"
		}
		id, ok := r.ids[s.SchemaType+"|"+normalize(s.Schema)]
		if ok {
			for i, x := range versions {
				if x == id {
					writeJSON(w, 200, map[string]any{"subject": subject, "version": i + 1, "id": id, "schema": r.schemas[id].Schema})
					return
				}
			}
		}
		fail(w, 404, 40403, "Schema not found")
	case len(rest) == 0 && req.Method == http.MethodDelete:
		if !exists {
			fail(w, 404, 40401, "Subject '"+subject+"' not found.")
			return
		}
		r.deleted[subject] = true
		out := make([]int, len(versions))
		for i := range versions {
			out[i] = i + 1
		}
		writeJSON(w, 200, out)
	case len(rest) == 1 && rest[0] == "versions" && req.Method == http.MethodPost:
		s, ok := decodeBody()
		if !ok {
			return
		}
		id, err := r.register(subject, s)
		if err != nil {
			fail(w, 422, 42201, err.Error())
			return
		}
		writeJSON(w, 200, map[string]int{"id": id})
	case len(rest) == 1 && rest[0] == "versions":
		if !exists {
			fail(w, 404, 40401, "Subject '"+subject+"' not found.")
			return
		}
		out := make([]int, len(versions))
		for i := range versions {
			out[i] = i + 1
		}
		writeJSON(w, 200, out)
	case len(rest) >= 2 && rest[0] == "versions":
		if !exists {
			fail(w, 404, 40401, "Subject '"+subject+"' not found.")
			return
		}
		v := len(versions)
		if rest[1] != "latest" && rest[1] != "-1" {
			n, err := strconv.Atoi(rest[1])
			if err != nil || n < 1 || n > len(versions) {
				fail(w, 404, 40402, "Version "+rest[1]+" not found.")
				return
			}
			v = n
		}
		id := versions[v-1]
		s := r.schemas[id]
		if len(rest) == 3 && rest[2] == "schema" {
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			_, _ = w.Write([]byte(s.Schema))
			return
		}
		body := map[string]any{"subject": subject, "version": v, "id": id, "schema": s.Schema}
		if s.SchemaType != "AVRO" {
			body["schemaType"] = s.SchemaType
		}
		writeJSON(w, 200, body)
	default:
		fail(w, 404, 404, "HTTP 404 Not Found")
	}
}

// CertPEM returns the PEM of a TLS registry's self-signed certificate (for a PEM trust store).
func CertPEM(r *Registry) string {
	c := r.srv.Certificate()
	if c == nil {
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}
