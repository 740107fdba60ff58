package api

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/testcerts"
)

// startFromProps starts a server on loopback from worker properties, as the worker does.
func startFromProps(t *testing.T, h herder.Herder, props map[string]string, kafkaOpts string) *Server {
	t.Helper()
	opts, err := SecurityOptions(props, kafkaOpts)
	require.NoError(t, err)
	opts = append(opts, WithRegistry(testRegistry), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		WithListeners(splitTrim(props["listeners"])...), WithAdvertised("127.0.0.1", 0, props["rest.advertised.listener"]))
	s := NewServer(h, opts...)
	require.NoError(t, s.Start())
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

func httpsClient(ca *testcerts.CA, cert *testcerts.Leaf) *http.Client {
	tc := &tls.Config{RootCAs: ca.Pool()}
	if cert != nil {
		c := cert.TLSCertificate()
		// sent whatever CAs the server names, to see the server verify it
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
}

func get(c *http.Client, url, auth string) (int, string, error) {
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), nil
}

// An https listener reads its key store in each format the JVM accepts, from listeners.https.* or, when no
// such key is set, the worker's ssl.*; it advertises https.
func TestHTTPSListenerKeyStores(t *testing.T) {
	ca := testcerts.NewCA(t, "rest-ca")
	server := ca.Issue(t, "worker")
	cases := map[string]map[string]string{
		"PEM": {"listeners.https.ssl.keystore.location": server.KeyStorePEM(t, ca, "server"), "listeners.https.ssl.keystore.type": "PEM"},
		"PKCS12": {"listeners.https.ssl.keystore.location": server.KeyStorePKCS12(t, ca, "server", "p12pass"),
			"listeners.https.ssl.keystore.type": "PKCS12", "listeners.https.ssl.keystore.password": "p12pass"},
		"JKS": {"listeners.https.ssl.keystore.location": server.KeyStoreJKS(t, ca, "server", "storepass", "keypass"),
			"listeners.https.ssl.keystore.password": "storepass", "listeners.https.ssl.key.password": "keypass"},
		"worker ssl.* fallback": {"ssl.keystore.location": server.KeyStoreJKS(t, ca, "server2", "storepass", "storepass"), "ssl.keystore.password": "storepass"},
	}
	for name, props := range cases {
		t.Run(name, func(t *testing.T) {
			props["listeners"] = "https://127.0.0.1:0"
			s := startFromProps(t, newFakeHerder(), props, "")
			url := strings.TrimSuffix(s.AdvertisedURL(), "/")
			require.True(t, strings.HasPrefix(url, "https://127.0.0.1:"), url)
			status, body, err := get(httpsClient(ca, nil), url+"/connectors", "")
			require.NoError(t, err)
			assert.Equal(t, 200, status, body)
			_, _, err = get(httpsClient(testcerts.NewCA(t, "other"), nil), url+"/connectors", "")
			assert.ErrorContains(t, err, "certificate signed by unknown authority")
		})
	}
}

// ssl.client.auth=required|requested|none, with and without client certificates (and with one from an
// unknown CA).
func TestHTTPSClientAuth(t *testing.T) {
	ca := testcerts.NewCA(t, "rest-ca")
	server, client := ca.Issue(t, "worker"), ca.Issue(t, "operator")
	stranger := testcerts.NewCA(t, "elsewhere").Issue(t, "stranger")
	base := map[string]string{
		"listeners":                               "https://127.0.0.1:0",
		"listeners.https.ssl.keystore.location":   server.KeyStorePKCS12(t, ca, "server", "pw"),
		"listeners.https.ssl.keystore.password":   "pw",
		"listeners.https.ssl.truststore.location": ca.TrustStoreJKS(t, "trustpw"),
		"listeners.https.ssl.truststore.password": "trustpw",
	}
	for _, mode := range []string{"required", "requested", "none"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{"listeners.https.ssl.client.auth": mode}
			for k, v := range base {
				props[k] = v
			}
			url := strings.TrimSuffix(startFromProps(t, newFakeHerder(), props, "").AdvertisedURL(), "/") + "/connectors"
			status, _, err := get(httpsClient(ca, client), url, "")
			require.NoError(t, err)
			assert.Equal(t, 200, status)

			status, _, err = get(httpsClient(ca, nil), url, "")
			if mode == "required" {
				assert.Error(t, err, "no client certificate")
			} else {
				require.NoError(t, err)
				assert.Equal(t, 200, status)
			}
			_, _, err = get(httpsClient(ca, stranger), url, "")
			if mode == "none" {
				assert.NoError(t, err, "client certificates are not asked for")
			} else {
				assert.Error(t, err, "a client certificate from an unknown CA")
			}
		})
	}
	props := map[string]string{"ssl.client.auth": "sometimes"}
	for k, v := range base {
		props[k] = v
	}
	props["listeners.https.ssl.client.auth"] = "sometimes"
	_, err := SecurityOptions(props, "")
	assert.ErrorContains(t, err, "Invalid value sometimes for configuration ssl.client.auth")
}

// admin.listeners serve /admin alone, over https with admin.listeners.https.* (authenticated too);
// the main listener no longer serves /admin.
func TestAdminListenerHTTPS(t *testing.T) {
	ca := testcerts.NewCA(t, "rest-ca")
	server := ca.Issue(t, "worker")
	props := map[string]string{
		"listeners":             "https://127.0.0.1:0",
		"admin.listeners":       "https://127.0.0.1:0",
		"ssl.keystore.location": server.KeyStorePEM(t, ca, "main"),
		"admin.listeners.https.ssl.keystore.location": server.KeyStorePKCS12(t, ca, "admin", "adminpw"),
		"admin.listeners.https.ssl.keystore.password": "adminpw",
		"rest.extension.classes":                      BasicAuthExtensionClass,
	}
	s := startFromProps(t, newFakeHerder(), props, "-Djava.security.auth.login.config="+writeJAAS(t, "admin=adminpw\n"))
	var adminURL string
	for _, b := range s.bound {
		if b.admin {
			adminURL = "https://" + b.addr.String()
		}
	}
	require.NotEmpty(t, adminURL)
	c := httpsClient(ca, nil)
	status, _, err := get(c, adminURL+"/admin/loggers", basic("admin", "adminpw"))
	require.NoError(t, err)
	assert.Equal(t, 200, status)
	status, _, _ = get(c, adminURL+"/admin/loggers", "")
	assert.Equal(t, 401, status)
	status, _, _ = get(c, adminURL+"/connectors", basic("admin", "adminpw"))
	assert.Equal(t, 404, status)
	main := strings.TrimSuffix(s.AdvertisedURL(), "/")
	status, _, _ = get(c, main+"/admin/loggers", basic("admin", "adminpw"))
	assert.Equal(t, 404, status)
	status, _, _ = get(c, main+"/connectors", basic("admin", "adminpw"))
	assert.Equal(t, 200, status)

	props["admin.listeners"] = ""
	s = startFromProps(t, newFakeHerder(), props, "-Djava.security.auth.login.config="+writeJAAS(t, "admin=adminpw\n"))
	status, _, _ = get(c, strings.TrimSuffix(s.AdvertisedURL(), "/")+"/admin/loggers", basic("admin", "adminpw"))
	assert.Equal(t, 404, status, "admin.listeners set empty disables /admin")
}

// A follower forwards a leader-only write to an https leader that requires client certificates and basic
// authentication: its client presents listeners.https.ssl.keystore and copies the Authorization header.
func TestForwardingOverHTTPSWithAuth(t *testing.T) {
	ca := testcerts.NewCA(t, "cluster-ca")
	leaderCert, followerCert := ca.Issue(t, "leader"), ca.Issue(t, "follower")
	jaas := writeJAAS(t, "alice=secret\n")
	props := func(cert *testcerts.Leaf, name string) map[string]string {
		return map[string]string{
			"listeners":                               "https://127.0.0.1:0",
			"listeners.https.ssl.keystore.location":   cert.KeyStoreJKS(t, ca, name, "storepw", "storepw"),
			"listeners.https.ssl.keystore.password":   "storepw",
			"listeners.https.ssl.truststore.location": ca.TrustStorePEM(t),
			"listeners.https.ssl.truststore.type":     "PEM",
			"listeners.https.ssl.client.auth":         "required",
			"rest.extension.classes":                  BasicAuthExtensionClass,
			JAASConfigProperty:                        jaas,
		}
	}
	leaderH := newFakeHerder()
	leader := startFromProps(t, leaderH, props(leaderCert, "leader"), "")
	followerH := newFakeHerder()
	followerH.notLeader = &herder.NotLeaderError{LeaderURL: leader.AdvertisedURL()}
	follower := startFromProps(t, followerH, props(followerCert, "follower"), "")
	operator := httpsClient(ca, ca.Issue(t, "operator"))

	post := func(auth string) (int, string) {
		req, _ := http.NewRequest("POST", strings.TrimSuffix(follower.AdvertisedURL(), "/")+"/connectors", strings.NewReader(createBody))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := operator.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	status, body := post("")
	assert.Equal(t, 401, status, body)
	status, body = post(basic("alice", "secret"))
	require.Equal(t, 201, status, body)
	assert.Contains(t, leaderH.configs, "sink-a")
	assert.NotContains(t, followerH.configs, "sink-a")
}

// rest.advertised.listener picks which of an http and an https listener other workers are told about;
// rest.advertised.host.name and rest.advertised.port override the listener's.
func TestAdvertisedHTTPSListener(t *testing.T) {
	ca := testcerts.NewCA(t, "rest-ca")
	ks := ca.Issue(t, "worker").KeyStorePEM(t, ca, "worker")
	both := map[string]string{"listeners": "http://127.0.0.1:0,https://127.0.0.1:0", "ssl.keystore.location": ks}
	port := func(s *Server, protocol string) string {
		for _, b := range s.bound {
			if b.protocol == protocol {
				a := b.addr.String()
				return a[strings.LastIndexByte(a, ':')+1:]
			}
		}
		return ""
	}
	s := startFromProps(t, newFakeHerder(), both, "")
	assert.Equal(t, "http://127.0.0.1:"+port(s, "http")+"/", s.AdvertisedURL())
	both["rest.advertised.listener"] = "https"
	s = startFromProps(t, newFakeHerder(), both, "")
	assert.Equal(t, "https://127.0.0.1:"+port(s, "https")+"/", s.AdvertisedURL())
	status, _, err := get(httpsClient(ca, nil), s.AdvertisedURL()+"connectors", "")
	require.NoError(t, err)
	assert.Equal(t, 200, status)

	opts, err := SecurityOptions(both, "")
	require.NoError(t, err)
	s = NewServer(newFakeHerder(), append(opts, WithListeners("https://127.0.0.1:0"), WithAdvertised("worker-1.example", 9443, "https"))...)
	require.NoError(t, s.Start())
	defer s.Shutdown(context.Background())
	assert.Equal(t, "https://worker-1.example:9443/", s.AdvertisedURL())
}

// ssl.enabled.protocols and ssl.cipher.suites are applied, or refused when this worker cannot honour them.
func TestHTTPSProtocolsAndSuites(t *testing.T) {
	ca := testcerts.NewCA(t, "rest-ca")
	ks := ca.Issue(t, "worker").KeyStorePEM(t, ca, "worker")
	props := map[string]string{"listeners": "https://127.0.0.1:0", "ssl.keystore.location": ks, "ssl.enabled.protocols": "TLSv1.3"}
	s := startFromProps(t, newFakeHerder(), props, "")
	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS12}}}
	_, _, err := get(old, s.AdvertisedURL()+"connectors", "")
	assert.Error(t, err, "TLS 1.2 is not enabled")
	status, _, err := get(httpsClient(ca, nil), s.AdvertisedURL()+"connectors", "")
	require.NoError(t, err)
	assert.Equal(t, 200, status)

	for key, value := range map[string]string{"ssl.enabled.protocols": "TLSv1.1", "ssl.cipher.suites": "TLS_FOO", "ssl.provider": "BCJSSE"} {
		bad := map[string]string{"listeners": "https://127.0.0.1:0", "ssl.keystore.location": ks, key: value}
		_, err := SecurityOptions(bad, "")
		assert.ErrorContains(t, err, value)
	}
}
