package avrotest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// The Schema Registry's REST API over the registry's subjects: the paths, bodies, error codes and
// authentication that the Avro converter's client meets in Confluent's server.

type errBody struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// unauthorized and forbidden answer as Karapace: a message without an error_code.
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Basic realm="Karapace Schema Registry"`)
	writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Unauthorized"})
}

func forbidden(w http.ResponseWriter) {
	writeJSON(w, http.StatusForbidden, map[string]string{"message": "Forbidden"})
}

func failWith(w http.ResponseWriter, err error) {
	var re *registryError
	if errors.As(err, &re) {
		fail(w, re.status, re.code, re.message)
		return
	}
	fail(w, 500, 50001, err.Error())
}

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
	case parts[0] == "compatibility" && len(parts) == 5 && parts[1] == "subjects" && parts[3] == "versions" && req.Method == http.MethodPost:
		r.serveCompatibility(w, req, parts[2], parts[4])
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
		// Karapace answers a denied subject write as if the subject did not exist.
		if p := strings.Split(strings.Trim(req.URL.Path, "/"), "/"); len(p) >= 2 && (p[0] == "subjects" || p[0] == "config") {
			fail(w, 404, 40401, "Subject '"+p[1]+"' not found.")
		} else {
			forbidden(w)
		}
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
		fail(w, 404, 40403, "Schema not found")
		return
	}
	if len(rest) == 1 {
		body := map[string]any{"schema": s.Schema}
		if s.SchemaType != "AVRO" {
			body["schemaType"] = s.SchemaType
		}
		if len(s.References) > 0 {
			body["references"] = s.References
		}
		writeJSON(w, 200, body)
		return
	}
	type sv struct {
		Subject string `json:"subject"`
		Version int    `json:"version"`
	}
	pairs := []sv{}
	subjects := []string{}
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

func decodeStored(req *http.Request) (stored, *registryError) {
	var body struct {
		Schema     string      `json:"schema"`
		SchemaType string      `json:"schemaType"`
		References []Reference `json:"references"`
	}
	raw := new(bytes.Buffer)
	_, _ = raw.ReadFrom(req.Body)
	if err := json.Unmarshal(raw.Bytes(), &body); err != nil || body.Schema == "" {
		return stored{}, &registryError{422, 42201, "Invalid schema"}
	}
	return stored{Schema: body.Schema, SchemaType: body.SchemaType, References: body.References}, nil
}

// versionOf resolves "latest", "-1" or a number among a subject's versions.
func versionOf(v string, versions []int) (int, *registryError) {
	if v == "latest" || v == "-1" {
		return len(versions), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > len(versions) {
		return 0, &registryError{404, 40402, "Version " + v + " not found."}
	}
	return n, nil
}

func (r *Registry) serveSubject(w http.ResponseWriter, req *http.Request, subject string, rest []string) {
	versions, exists := r.subjects[subject]
	if r.deleted[subject] {
		exists = false
	}
	notFound := func() { fail(w, 404, 40401, "Subject '"+subject+"' not found.") }
	switch {
	case len(rest) == 0 && req.Method == http.MethodPost: // lookup
		s, rerr := decodeStored(req)
		if rerr != nil {
			failWith(w, rerr)
			return
		}
		if !exists {
			notFound()
			return
		}
		if _, verr := r.validate(&s); verr != nil {
			failWith(w, verr)
			return
		}
		if id, ok := r.ids[identity(s)]; ok {
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
			notFound()
			return
		}
		for i := range versions {
			if len(r.referencedBy(subject, i+1)) > 0 {
				fail(w, 422, 42206, fmt.Sprintf("One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=%s,version=%d}.", subject, i+1))
				return
			}
		}
		r.deleted[subject] = true
		out := make([]int, len(versions))
		for i := range versions {
			out[i] = i + 1
		}
		writeJSON(w, 200, out)
	case len(rest) == 1 && rest[0] == "versions" && req.Method == http.MethodPost:
		s, rerr := decodeStored(req)
		if rerr != nil {
			failWith(w, rerr)
			return
		}
		id, err := r.register(subject, s)
		if err != nil {
			failWith(w, err)
			return
		}
		writeJSON(w, 200, map[string]int{"id": id})
	case len(rest) == 1 && rest[0] == "versions":
		if !exists {
			notFound()
			return
		}
		out := make([]int, len(versions))
		for i := range versions {
			out[i] = i + 1
		}
		writeJSON(w, 200, out)
	case len(rest) >= 2 && rest[0] == "versions":
		if !exists {
			notFound()
			return
		}
		v, verr := versionOf(rest[1], versions)
		if verr != nil {
			failWith(w, verr)
			return
		}
		id := versions[v-1]
		s := r.schemas[id]
		switch {
		case len(rest) == 3 && rest[2] == "schema":
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			_, _ = w.Write([]byte(s.Schema))
			return
		case len(rest) == 3 && rest[2] == "referencedby":
			writeJSON(w, 200, r.referencedBy(subject, v))
			return
		}
		body := map[string]any{"subject": subject, "version": v, "id": id, "schema": s.Schema}
		if s.SchemaType != "AVRO" {
			body["schemaType"] = s.SchemaType
		}
		if len(s.References) > 0 {
			body["references"] = s.References
		}
		writeJSON(w, 200, body)
	default:
		fail(w, 404, 404, "HTTP 404 Not Found")
	}
}

// referencedBy lists the ids of the live schemas referencing subject's version.
func (r *Registry) referencedBy(subject string, version int) []int {
	out := []int{}
	seen := map[int]bool{}
	for _, subj := range r.subjectList() {
		for _, id := range r.subjects[subj] {
			for _, ref := range r.schemas[id].References {
				if ref.Subject == subject && ref.Version == version && !seen[id] {
					seen[id] = true
					out = append(out, id)
				}
			}
		}
	}
	sort.Ints(out)
	return out
}

// serveCompatibility is POST /compatibility/subjects/{s}/versions/{v}.
func (r *Registry) serveCompatibility(w http.ResponseWriter, req *http.Request, subject, version string) {
	versions := r.subjects[subject]
	if len(versions) == 0 || r.deleted[subject] {
		if version == "latest" { // Karapace resolves latest to -1 before it finds no subject
			version = "-1"
		}
		fail(w, 404, 40402, "Version "+version+" not found.")
		return
	}
	s, rerr := decodeStored(req)
	if rerr != nil {
		failWith(w, rerr)
		return
	}
	t, verr := r.validate(&s)
	if verr != nil {
		fail(w, 422, 42201, "Invalid SchemaType.AVRO schema") // Karapace's compatibility check gives no detail
		return
	}
	v, verr := versionOf(version, versions)
	if verr != nil {
		failWith(w, verr)
		return
	}
	old, err := r.parsed(r.schemas[versions[v-1]])
	if err != nil {
		failWith(w, err)
		return
	}
	var msgs []string
	switch strings.TrimSuffix(r.compatibilityOf(subject), "_TRANSITIVE") {
	case "BACKWARD":
		msgs = incompatibilities(t, old)
	case "FORWARD":
		msgs = incompatibilities(old, t)
	case "FULL":
		msgs = mergeSorted(incompatibilities(t, old), incompatibilities(old, t))
	}
	if len(msgs) > 0 {
		writeJSON(w, 200, map[string]any{"is_compatible": false, "messages": msgs})
		return
	}
	writeJSON(w, 200, map[string]any{"is_compatible": true})
}
