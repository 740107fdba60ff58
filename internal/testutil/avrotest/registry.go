// Package avrotest is an in-memory Schema Registry speaking the subset of Confluent's REST API that
// serializers and converters use, as a test fixture. Its answers (status, error_code, message, schema texts) are
// Karapace 6.2.0's for everything the registry goldens cover (testdata/avro/registry-goldens, captured by
// scripts/karapace.sh and replayed by TestRegistryGoldens in converters/avro); see converters/avro/README.md.
//
// Endpoints: GET /schemas/ids/{id}, GET /schemas/ids/{id}/versions, GET /schemas/ids/{id}/subjects,
// GET /subjects, GET /subjects/{s}/versions, GET /subjects/{s}/versions/{v|latest},
// GET /subjects/{s}/versions/{v}/schema, GET /subjects/{s}/versions/{v}/referencedby,
// POST /subjects/{s}/versions (register), POST /subjects/{s} (lookup), DELETE /subjects/{s},
// POST /compatibility/subjects/{s}/versions/{v}, GET /config, GET/PUT /config/{s}, GET /schemas/types, GET /.
// Schemas are validated and stored in Karapace's canonical form (keys sorted, no spaces), identified by that
// form and their references, the same id being reused across subjects. Registration checks compatibility
// (BACKWARD by default; FORWARD, FULL, NONE and the transitive levels) with Python avro's reader/writer rules
// and messages. Optional basic auth (one user, or users with read or read/write access) and TLS (httptest).
package avrotest

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http/httptest"
	"sort"
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
	References []Reference
}

// Reference is a schema reference: the named type Name is defined by Subject's Version.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// registryError is an error answer: HTTP status, error_code, message.
type registryError struct {
	status, code int
	message      string
}

func (e *registryError) Error() string { return e.message }

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
	prev, had := r.config[subject]
	r.config[subject] = "NONE" // direct setup registers whatever the test needs
	id, _ := r.register(subject, stored{Schema: schema, SchemaType: "AVRO"})
	if had {
		r.config[subject] = prev
	} else {
		delete(r.config, subject)
	}
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

// identity is what makes two registrations the same schema: its canonical text and its references.
func identity(s stored) string {
	var refs []byte
	if len(s.References) > 0 {
		refs, _ = json.Marshal(s.References)
	}
	return s.SchemaType + "|" + canonical(s.Schema) + "|" + string(refs)
}

// resolve returns the texts of the schemas s references, dependencies first, or the error Karapace
// answers for a reference to a missing subject or version.
func (r *Registry) resolve(s stored, seen map[Reference]bool, out *[]string) error {
	for _, ref := range s.References {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		versions := r.subjects[ref.Subject]
		if r.deleted[ref.Subject] || ref.Version < 1 || ref.Version > len(versions) {
			return fmt.Errorf("missing reference")
		}
		dep := r.schemas[versions[ref.Version-1]]
		if err := r.resolve(dep, seen, out); err != nil {
			return err
		}
		*out = append(*out, dep.Schema)
	}
	return nil
}

// parsed parses a stored Avro schema with its references.
func (r *Registry) parsed(s stored) (*avroType, error) {
	var deps []string
	if err := r.resolve(s, map[Reference]bool{}, &deps); err != nil {
		return nil, err
	}
	return parseAvro(s.Schema, deps)
}

func (r *Registry) compatibilityOf(subject string) string {
	if c, ok := r.config[subject]; ok {
		return c
	}
	return r.config[""]
}

// incompatibilities checks s against the subject's live versions as Karapace does: the latest one, or
// all of them for the transitive levels; the messages of the first incompatible version.
func (r *Registry) incompatibilities(subject string, s *avroType) []string {
	level := r.compatibilityOf(subject)
	versions := r.subjects[subject]
	if level == "NONE" || len(versions) == 0 || r.deleted[subject] {
		return nil
	}
	olds := versions[len(versions)-1:]
	if strings.HasSuffix(level, "_TRANSITIVE") {
		olds = versions
	}
	for _, id := range olds {
		old, err := r.parsed(r.schemas[id])
		if err != nil {
			continue
		}
		var msgs []string
		switch strings.TrimSuffix(level, "_TRANSITIVE") {
		case "BACKWARD":
			msgs = incompatibilities(s, old)
		case "FORWARD":
			msgs = incompatibilities(old, s)
		case "FULL":
			msgs = mergeSorted(incompatibilities(s, old), incompatibilities(old, s))
		}
		if len(msgs) > 0 {
			return msgs
		}
	}
	return nil
}

func mergeSorted(a, b []string) []string {
	set := map[string]bool{}
	for _, m := range append(a, b...) {
		set[m] = true
	}
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// validate parses a schema to register or look up; the error is Karapace's 42201 answer.
func (r *Registry) validate(s *stored) (*avroType, *registryError) {
	if s.SchemaType == "" {
		s.SchemaType = "AVRO"
	}
	if s.SchemaType != "AVRO" {
		return nil, &registryError{422, 42201, "Invalid schema type " + s.SchemaType}
	}
	var deps []string
	if err := r.resolve(*s, map[Reference]bool{}, &deps); err != nil {
		refs := make([]string, len(s.References))
		for i, ref := range s.References {
			refs[i] = fmt.Sprintf("{name='%s', subject='%s', version=%d}", ref.Name, ref.Subject, ref.Version)
		}
		return nil, &registryError{422, 42201, fmt.Sprintf("Invalid AVRO schema. Error: Invalid schema %s with refs [%s] of type SchemaType.AVRO",
			s.Schema, strings.Join(refs, ", "))}
	}
	t, err := parseAvro(s.Schema, deps)
	if err != nil {
		return nil, &registryError{422, 42201, "Invalid AVRO schema. Error: " + err.Error()}
	}
	s.Schema = canonical(s.Schema)
	return t, nil
}

func (r *Registry) register(subject string, s stored) (int, error) {
	t, verr := r.validate(&s)
	if verr != nil {
		return 0, verr
	}
	key := identity(s)
	if id, ok := r.ids[key]; ok && !r.deleted[subject] {
		for _, x := range r.subjects[subject] {
			if x == id {
				return id, nil
			}
		}
	}
	if msgs := r.incompatibilities(subject, t); len(msgs) > 0 {
		list := strings.Join(msgs, ", ")
		if len(list) > 300 { // Karapace cuts the list at 300 characters
			list = list[:300]
		}
		return 0, &registryError{409, 409, fmt.Sprintf("Incompatible schema, compatibility_mode=%s. Incompatibilities: %s", r.compatibilityOf(subject), list)}
	}
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
	r.subjects[subject] = append(r.subjects[subject], id)
	return id, nil
}

// CertPEM returns the PEM of a TLS registry's self-signed certificate (for a PEM trust store).
func CertPEM(r *Registry) string {
	c := r.srv.Certificate()
	if c == nil {
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}
