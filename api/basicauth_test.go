package api

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeJAAS writes a credentials file and a JAAS configuration naming it, as a JVM deployment has them.
func writeJAAS(t *testing.T, credentials string) string {
	t.Helper()
	dir := t.TempDir()
	creds := filepath.Join(dir, "credentials.properties")
	require.NoError(t, os.WriteFile(creds, []byte(credentials), 0o600))
	jaas := filepath.Join(dir, "connect_jaas.conf")
	require.NoError(t, os.WriteFile(jaas, []byte(fmt.Sprintf(`// REST users
KafkaClient {
  org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";
};
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="%s";
};
`, creds)), 0o600))
	return jaas
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// concrete fills a route template with names the setup created.
func concrete(path string) string {
	r := strings.NewReplacer("{connector}", "sink-a", "{task}", "0", "{plugin}", "FileStreamSink", "{logger}", "root")
	return r.Replace(path)
}

// routeBody is a valid body for the routes that read one.
func routeBody(method, path string) string {
	switch {
	case method == "POST" && path == "/connectors":
		return `{"name":"sink-b","config":` + sinkCfg + `}`
	case method == "PUT" && strings.HasSuffix(path, "/config/validate"):
		return `{"connector.class":"FileStreamSink","topics":"t"}`
	case method == "PUT" && strings.HasSuffix(path, "/config"):
		return sinkCfg
	case method == "PATCH" && strings.HasSuffix(path, "/config"):
		return `{"tasks.max":"2"}`
	case method == "PATCH" && strings.HasSuffix(path, "/offsets"):
		return `{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":5}}]}`
	case method == "POST" && strings.HasSuffix(path, "/tasks"):
		return `[{"k":"v"}]`
	case method == "PUT" && strings.HasPrefix(path, "/admin/loggers/"):
		return `{"level":"INFO"}`
	}
	return ""
}

// Every route of the router (and /metrics) answers 401 without credentials or with wrong ones, except the
// internal task-config request the JVM exempts; with credentials every answer is the one a worker without
// authentication gives.
func TestBasicAuthEveryRoute(t *testing.T) {
	jaas := writeJAAS(t, "alice=secret\nbob: pw2\n")
	metrics := WithExtraHandler("/metrics", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "m 1\n") }))
	routes := newEnv(t, true, WithReconciler(&fakeReconciler{})).srv.routes(true, true)
	type call struct{ method, path string }
	var calls []call
	for _, rt := range routes {
		for _, m := range rt.methods {
			calls = append(calls, call{m, rt.path})
		}
	}
	calls = append(calls, call{"GET", "/metrics"})
	require.Len(t, calls, 32, "a route was added: check what the JVM exempts from authentication")
	create := req{method: "POST", path: "/connectors", body: createBody}
	for _, c := range calls {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			secured := newEnv(t, true, WithBasicAuth(jaas), metrics, WithReconciler(&fakeReconciler{}))
			open := newEnv(t, true, metrics, WithReconciler(&fakeReconciler{}))
			for _, e := range []*env{secured, open} {
				resp := e.do(t, req{method: create.method, path: create.path, body: create.body, headers: map[string]string{"Authorization": basic("alice", "secret")}})
				resp.Body.Close()
				require.Equal(t, 201, resp.StatusCode)
			}
			path := concrete(c.path)
			body := routeBody(c.method, c.path)
			internal := c.method == "POST" && c.path == "/connectors/{connector}/tasks"
			for _, hdr := range []string{"", basic("alice", "wrong"), basic("mallory", "secret"), "Bearer secret"} {
				resp := secured.do(t, req{method: c.method, path: path, body: body, headers: map[string]string{"Authorization": hdr}})
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if internal {
					assert.NotEqual(t, 401, resp.StatusCode, "the internal request is exempt")
					continue
				}
				assert.Equal(t, 401, resp.StatusCode, "Authorization %q", hdr)
				assert.Equal(t, msgUnauthorized, string(data))
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				assert.Equal(t, `Basic realm="connect", charset="UTF-8"`, resp.Header.Get("WWW-Authenticate"), "RFC 7235 challenge")
			}
			got := secured.do(t, req{method: c.method, path: path, body: body, headers: map[string]string{"Authorization": basic("bob", "pw2")}})
			want := open.do(t, req{method: c.method, path: path, body: body})
			gotBody, _ := io.ReadAll(got.Body)
			wantBody, _ := io.ReadAll(want.Body)
			got.Body.Close()
			want.Body.Close()
			assert.Equal(t, want.StatusCode, got.StatusCode, string(gotBody))
			assert.Equal(t, string(wantBody), string(gotBody))
			assert.NotEqual(t, 401, got.StatusCode)
		})
	}
}

// noContentType expects an answer without a Content-Type header.
const noContentType = "(none)"

// Requests Jersey rejects while matching the resource (unknown path, method, media types) are answered before
// the authentication filter, as on the JVM; an automatic OPTIONS answer is filtered (text/plain 401).
func TestBasicAuthOrderAndOptions(t *testing.T) {
	e := newEnv(t, false, WithBasicAuth(writeJAAS(t, "alice=secret\n")))
	cases := []struct {
		r      req
		status int
		ct     string
	}{
		// Jersey's own rejections carry no Content-Type (checked against a JVM 4.3.1 worker)
		{req{method: "GET", path: "/nope"}, 404, noContentType},
		{req{method: "DELETE", path: "/connectors"}, 405, noContentType},
		{req{method: "GET", path: "/connectors", headers: map[string]string{"Accept": "text/html"}}, 406, noContentType},
		{req{method: "POST", path: "/connectors", body: "x", headers: map[string]string{"Content-Type": "text/plain"}}, 415, noContentType},
		{req{method: "OPTIONS", path: "/connectors"}, 401, "text/plain"},
		{req{method: "OPTIONS", path: "/connectors", headers: map[string]string{"Authorization": basic("alice", "secret")}}, 204, ""},
		{req{method: "HEAD", path: "/connectors"}, 401, "application/json"},
		{req{method: "GET", path: "/"}, 401, "application/json"},
		{req{method: "GET", path: "/health"}, 401, "application/json"},
		{req{method: "GET", path: "/admin/loggers"}, 401, "application/json"},
		{req{method: "GET", path: "/connectd/reconcile"}, 404, noContentType}, // not configured: unknown
	}
	for _, c := range cases {
		resp := e.do(t, c.r)
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, "%s %s", c.r.method, c.r.path)
		switch c.ct {
		case "":
		case noContentType:
			assert.NotContains(t, resp.Header, "Content-Type", "%s %s", c.r.method, c.r.path)
		default:
			assert.Equal(t, c.ct, resp.Header.Get("Content-Type"), "%s %s", c.r.method, c.r.path)
		}
	}
}

// Authorization header parsing as JaasBasicAuthFilter.BasicAuthCredentials and java.util.Base64 (messages
// checked against JDK 17), and PropertyFileLoginModule's checks.
func TestBasicAuthCredentials(t *testing.T) {
	e := newEnv(t, false, WithBasicAuth(writeJAAS(t, "alice=secret\nbob: pw2\ncarol = with:colon\n")))
	cases := []struct {
		header string
		status int
		body   string
	}{
		{"", 401, msgUnauthorized},
		{"Basic", 401, msgUnauthorized},
		{"Bearer " + base64.StdEncoding.EncodeToString([]byte("alice:secret")), 401, msgUnauthorized},
		{"Basic %%%", 500, `{"error_code":500,"message":"Illegal base64 character 25"}`},
		{"Basic Y", 500, `{"error_code":500,"message":"Input byte[] should at least have 2 bytes for base64 bytes"}`},
		{"Basic YWxpY2U=", 401, msgUnauthorized}, // "alice", no colon
		{basic("", "secret"), 401, msgUnauthorized},
		{basic("alice", "wrong"), 401, msgUnauthorized},
		{basic("alice", ""), 401, msgUnauthorized},
		{basic("mallory", "secret"), 401, msgUnauthorized},
		{basic("alice", "secret"), 200, "[]"},
		{"basic " + base64.StdEncoding.EncodeToString([]byte("bob:pw2")), 200, "[]"},
		{basic("carol", "with:colon"), 200, "[]"},
		{"Basic " + base64.RawStdEncoding.EncodeToString([]byte("alice:secret")), 200, "[]"}, // Java accepts no padding
	}
	for _, c := range cases {
		resp := e.do(t, req{method: "GET", path: "/connectors", headers: map[string]string{"Authorization": c.header}})
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, "Authorization %q", c.header)
		assert.Equal(t, c.body, string(data), "Authorization %q", c.header)
	}
}

// An empty credentials file lets every request through, as PropertyFileLoginModule does (with a warning);
// with two modules, either file's users log in.
func TestBasicAuthModules(t *testing.T) {
	e := newEnv(t, false, WithBasicAuth(writeJAAS(t, "# nobody\n")))
	resp := e.do(t, req{method: "GET", path: "/connectors"})
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)

	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.properties"), filepath.Join(dir, "b.properties")
	require.NoError(t, os.WriteFile(a, []byte("alice=secret\n"), 0o600))
	require.NoError(t, os.WriteFile(b, []byte("bob=pw2\n"), 0o600))
	jaas := filepath.Join(dir, "jaas.conf")
	require.NoError(t, os.WriteFile(jaas, []byte(fmt.Sprintf(`KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule sufficient file="%s";
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file='%s';
};`, a, b)), 0o600))
	e = newEnv(t, false, WithBasicAuth(jaas))
	for hdr, want := range map[string]int{basic("alice", "secret"): 200, basic("bob", "pw2"): 200, basic("bob", "secret"): 401, "": 401} {
		resp := e.do(t, req{method: "GET", path: "/connectors", headers: map[string]string{"Authorization": hdr}})
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, hdr)
	}
}

func TestJavaBase64(t *testing.T) {
	for in, want := range map[string]string{
		"%%%": "ERR Illegal base64 character 25", "YWxpY2U": "OK alice", "YQ": "OK a",
		"Y": "ERR Input byte[] should at least have 2 bytes for base64 bytes", "YQ=": "ERR Input byte array has wrong 4-byte ending unit",
		"YWJj=": "ERR Input byte array has wrong 4-byte ending unit", "Y===": "ERR Last unit does not have enough valid bits",
		"YQ==x": "ERR Input byte array has incorrect ending byte at 4", "YWxpY2U6c2VjcmV0": "OK alice:secret",
		"\xc3abc": "ERR Illegal base64 character -3d", "YW Jj": "ERR Illegal base64 character 20",
		"YWJjZA=": "ERR Input byte array has wrong 4-byte ending unit", "YWJjZA": "OK abcd", "": "OK ",
	} {
		out, err := javaBase64Decode(in)
		got := "OK " + string(out)
		if err != nil {
			got = "ERR " + err.Error()
		}
		assert.Equal(t, want, got, "%q", in)
	}
}

func TestJAASFile(t *testing.T) {
	sections, err := parseJAASFile(`/* header */
KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required
   username="admin" password='a"b' user_admin=x; };
KafkaConnect {
  // the REST users
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule REQUIRED file="/etc/kafka/connect.password" debug=true;
};`)
	require.NoError(t, err)
	require.Len(t, sections["KafkaConnect"], 1)
	m := sections["KafkaConnect"][0]
	assert.Equal(t, PropertyFileLoginModule, m.class)
	assert.Equal(t, "required", m.flag)
	assert.Equal(t, map[string]string{"file": "/etc/kafka/connect.password", "debug": "true"}, m.options)
	assert.Equal(t, `a"b`, sections["KafkaServer"][0].options["password"])

	for _, bad := range []string{
		`KafkaConnect { x.Y required file="a" };`,               // entry not terminated
		`KafkaConnect { x.Y mandatory file="a"; };`,             // flag
		`KafkaConnect { x.Y required file="a; };`,               // quote
		`KafkaConnect { x.Y required file="a"; }`,               // missing ';'
		`KafkaConnect { x.Y required file="${user.home}/c"; };`, // property expansion
		`A { x.Y required; }; A { x.Y required; };`,             // duplicate section
	} {
		_, err := parseJAASFile(bad)
		assert.Error(t, err, bad)
	}
}

// Anything the worker cannot honour is a start-up error naming it.
func TestSecurityOptionsRefused(t *testing.T) {
	jaas := writeJAAS(t, "alice=secret\n")
	dir := t.TempDir()
	other := filepath.Join(dir, "other.conf")
	require.NoError(t, os.WriteFile(other, []byte(`KafkaConnect { com.example.LdapLoginModule required url="ldap://x"; };`), 0o600))
	noSection := filepath.Join(dir, "nosection.conf")
	require.NoError(t, os.WriteFile(noSection, []byte(`KafkaClient { a.B required; };`), 0o600))
	missingCreds := filepath.Join(dir, "missing.conf")
	require.NoError(t, os.WriteFile(missingCreds, []byte(`KafkaConnect { `+PropertyFileLoginModule+` required file="/nonexistent/creds"; };`), 0o600))
	ext := "rest.extension.classes"
	cases := []struct {
		props     map[string]string
		kafkaOpts string
		want      string
	}{
		{map[string]string{ext: "com.example.MyRestExtension"}, "", "com.example.MyRestExtension"},
		{map[string]string{ext: BasicAuthExtensionClass + ",com.example.Other"}, "-Djava.security.auth.login.config=" + jaas, "com.example.Other"},
		{map[string]string{ext: BasicAuthExtensionClass}, "", "Failed to retrieve JAAS configuration"},
		{map[string]string{ext: BasicAuthExtensionClass, JAASConfigProperty: other}, "", "com.example.LdapLoginModule"},
		{map[string]string{ext: BasicAuthExtensionClass, JAASConfigProperty: noSection}, "", "no KafkaConnect section"},
		{map[string]string{ext: BasicAuthExtensionClass, JAASConfigProperty: missingCreds}, "", "/nonexistent/creds"},
		{map[string]string{ext: BasicAuthExtensionClass, JAASConfigProperty: jaas}, "-Djava.security.auth.login.config=" + other, "disagree"},
		{map[string]string{"listeners": "https://127.0.0.1:0"}, "", "ssl.keystore.location"},
		{map[string]string{"listeners": "http://127.0.0.1:0", "admin.listeners": "https://127.0.0.1:0"}, "", "admin.listeners.https.ssl.keystore.location"},
		{map[string]string{"listeners": "https://127.0.0.1:0", "listeners.https.ssl.keystore.location": "/nonexistent.jks"}, "", "/nonexistent.jks"},
		{map[string]string{"listeners": "https://127.0.0.1:0", "listeners.https.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----"}, "", "ssl.keystore.key"},
	}
	for _, c := range cases {
		_, err := SecurityOptions(c.props, c.kafkaOpts)
		require.Error(t, err, "%v", c.props)
		assert.Contains(t, err.Error(), c.want)
	}
	for _, ok := range []struct {
		props     map[string]string
		kafkaOpts string
	}{
		{map[string]string{ext: BasicAuthExtensionClass}, "-Xmx1g -Djava.security.auth.login.config=" + jaas + " -Dx=y"},
		{map[string]string{ext: " " + BasicAuthExtensionClass + " ", JAASConfigProperty: jaas}, ""},
		{map[string]string{}, ""},
	} {
		opts, err := SecurityOptions(ok.props, ok.kafkaOpts)
		require.NoError(t, err)
		s := NewServer(newFakeHerder(), opts...)
		assert.Equal(t, ok.props[ext] != "", s.auth != nil)
	}
}

// An https listener started from worker properties, the handler chain included, refuses plain HTTP.
func TestAuthenticatedHandlerIsTheServed(t *testing.T) {
	s := NewServer(newFakeHerder(), WithRegistry(testRegistry), WithBasicAuth(writeJAAS(t, "alice=secret\n")))
	ts := httptest.NewServer(s.AdminHandler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/admin/loggers")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode, "admin listeners authenticate too (the JVM registers extensions on both)")
}

// A JAAS file that cannot be used stops Start, and the handler alone lets no one in (fail closed).
func TestBasicAuthBrokenConfigFailsClosed(t *testing.T) {
	s := NewServer(newFakeHerder(), WithRegistry(testRegistry), WithBasicAuth(filepath.Join(t.TempDir(), "missing.conf")), WithListeners("http://127.0.0.1:0"))
	assert.ErrorContains(t, s.Start(), "missing.conf")
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+"/connectors", nil)
	req.Header.Set("Authorization", basic("alice", "secret"))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)
}
