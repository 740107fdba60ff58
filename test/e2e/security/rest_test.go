package security

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/testcerts"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// startWorkerEnv runs connectd with extra environment variables until the test ends.
func startWorkerEnv(t *testing.T, env []string, args ...string) (*exec.Cmd, *workerproc.Buffer, <-chan struct{}) {
	t.Helper()
	p := workerproc.StartEnv(t, env, args...)
	p.Name = filepath.Base(args[len(args)-1])
	return p.Cmd, p.Out, p.Exited()
}

type secureClient struct {
	c    *http.Client
	auth string
}

func (s secureClient) do(t *testing.T, method, url string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	resp, err := s.c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// Two `connectd distributed` workers on a real broker, each with an https listener requiring client
// certificates and BasicAuthSecurityRestExtension (one given its JAAS file through KAFKA_OPTS as the JVM images
// do, the other through the worker property): writes sent to either are forwarded to the leader over mutual TLS
// with the caller's credentials, the follower's task configs reach the leader, tasks run on both workers, and
// hostile bodies leave both serving.
func TestDistributedHTTPSWithBasicAuth(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	group := kafkatest.UniqueName(t, "sec")
	topic := group + "-in"
	kafkatest.CreateTopic(t, addr, topic, 2, nil)
	dir := t.TempDir()
	ca := testcerts.NewCA(t, "connect-cluster-ca")
	creds := filepath.Join(dir, "credentials.properties")
	require.NoError(t, os.WriteFile(creds, []byte("admin=admin-secret\n"), 0o600))
	jaas := filepath.Join(dir, "connect_jaas.conf")
	require.NoError(t, os.WriteFile(jaas, []byte(`KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="`+creds+`";
};
`), 0o600))

	type worker struct {
		url  string
		log  *workerproc.Buffer
		done <-chan struct{}
	}
	var workers []worker
	for i, name := range []string{"a", "b"} {
		port := workerproc.FreePort(t)
		cert := ca.Issue(t, "worker-"+name)
		props := workerproc.DistributedProps(addr, group) + fmt.Sprintf(`key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.flush.interval.ms=500
listeners=https://127.0.0.1:%d
listeners.https.ssl.keystore.location=%s
listeners.https.ssl.keystore.password=store-pw
listeners.https.ssl.truststore.location=%s
listeners.https.ssl.truststore.type=PEM
listeners.https.ssl.client.auth=required
rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
`, port, cert.KeyStorePKCS12(t, ca, "worker-"+name, "store-pw"), ca.TrustStorePEM(t))
		var env []string
		if i == 0 {
			env = []string{"KAFKA_OPTS=-Xmx1g -Djava.security.auth.login.config=" + jaas}
		} else {
			props += "java.security.auth.login.config=" + jaas + "\n"
		}
		f := filepath.Join(dir, name+".properties")
		require.NoError(t, os.WriteFile(f, []byte(props), 0o600))
		_, log, done := startWorkerEnv(t, env, "distributed", f)
		workers = append(workers, worker{url: fmt.Sprintf("https://127.0.0.1:%d", port), log: log, done: done})
	}

	operatorCert := ca.Issue(t, "operator").TLSCertificate()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{operatorCert}}}
	admin := secureClient{c: &http.Client{Timeout: 30 * time.Second, Transport: tr}, auth: "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:admin-secret"))}
	anonymous := secureClient{c: admin.c}
	noCert := secureClient{c: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}, auth: admin.auth}
	for _, w := range workers {
		require.Eventually(t, func() bool {
			select {
			case <-w.done:
				t.Fatalf("worker exited:\n%s", w.log.String())
			default:
			}
			code, _ := admin.do(t, "GET", w.url+"/health", nil)
			return code == 200
		}, 90*time.Second, 200*time.Millisecond)
		code, body := anonymous.do(t, "GET", w.url+"/connectors", nil)
		assert.Equal(t, 401, code)
		assert.Equal(t, "User cannot access the resource.", body)
		code, _ = noCert.do(t, "GET", w.url+"/connectors", nil)
		assert.Equal(t, 0, code, "no client certificate: the handshake fails")
		code, _ = anonymous.do(t, "GET", strings.Replace(w.url, "https:", "http:", 1)+"/connectors", nil)
		assert.NotEqual(t, 200, code, "plain http is not served")
	}

	out := filepath.Join(dir, "sink.txt")
	for i, w := range workers {
		name := fmt.Sprintf("%s-s%d", group, i)
		cfg := fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"2","topics":%q,"file":%q}`, topic, out)
		// retried while the cluster forms (409 during a rebalance, as on the JVM)
		require.Eventually(t, func() bool {
			code, _ := admin.do(t, "PUT", w.url+"/connectors/"+name+"/config", []byte(cfg))
			return code == 201 || code == 200
		}, 60*time.Second, 500*time.Millisecond)
		code, body := anonymous.do(t, "PUT", w.url+"/connectors/"+name+"/pause", nil)
		assert.Equal(t, 401, code, body)
		for _, other := range workers {
			require.Eventually(t, func() bool {
				code, body := admin.do(t, "GET", other.url+"/connectors/"+name+"/status", nil)
				var st struct {
					Connector struct{ State string }
					Tasks     []struct{ State string }
				}
				if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Connector.State != "RUNNING" || len(st.Tasks) != 2 {
					return false
				}
				for _, ts := range st.Tasks {
					if ts.State != "RUNNING" {
						return false
					}
				}
				return true
			}, 60*time.Second, 200*time.Millisecond, "connector %s running with 2 tasks, seen from %s", name, other.url)
		}
	}
	// Every worker ran something: the follower's connector task configs reached the leader (internal request).
	code, body := admin.do(t, "GET", workers[0].url+"/connectors?expand=status", nil)
	require.Equal(t, 200, code, body)
	for _, w := range workers {
		assert.Contains(t, body, strings.TrimPrefix(w.url, "https://"), "tasks on every worker")
	}

	// Hostile bodies: an error each, and both workers keep serving.
	deep := bytes.Repeat([]byte("["), 10_000_000)
	code, body = admin.do(t, "POST", workers[1].url+"/connectors", deep)
	assert.Equal(t, 413, code, body)
	// Jackson binds as it reads: ConnectorOffsets cannot come from an array, so the answer is the mismatch at
	// the first '[' (as the JVM's config_put_array_500), before any nesting limit further in.
	code, body = admin.do(t, "PATCH", workers[0].url+"/connectors/x/offsets", bytes.Repeat([]byte("["), 1_000_000))
	assert.Equal(t, 500, code)
	assert.Contains(t, body, "Cannot deserialize value of type `org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets` from Array value (token `JsonToken.START_ARRAY`)")
	for _, w := range workers {
		code, _ := admin.do(t, "GET", w.url+"/connectors", nil)
		assert.Equal(t, 200, code)
	}
}

// A REST extension this worker does not implement stops the start, naming it.
func TestUnknownRestExtensionRefused(t *testing.T) {
	dir := t.TempDir()
	f := workerproc.WriteWorkerProps(t, dir, "127.0.0.1:1", workerproc.FreePort(t), "rest.extension.classes=com.example.AuditRestExtension\n")
	cmd, log, done := startWorkerEnv(t, nil, "standalone", f)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("worker did not refuse to start")
	}
	assert.NotEqual(t, 0, cmd.ProcessState.ExitCode())
	assert.Contains(t, log.String(), "com.example.AuditRestExtension")
}

// From the moment a distributed worker's REST port accepts connections, every request gets an HTTP answer
// (possibly an error body), never an empty reply, while the herder is still joining the group.
func TestDistributedStartAnswersEveryRequest(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	group := kafkatest.UniqueName(t, "start")
	dir := t.TempDir()
	port := workerproc.FreePort(t)
	props := workerproc.DistributedProps(addr, group) + fmt.Sprintf(`key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
listeners=http://127.0.0.1:%d
`, port)
	f := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(f, []byte(props), 0o600))
	_, log, done := startWorkerEnv(t, nil, "distributed", f)
	url := fmt.Sprintf("http://127.0.0.1:%d/connectors", port)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(90 * time.Second)
	answered, statuses, messages := 0, map[int]int{}, map[string]bool{}
	for answered < 300 && time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatalf("worker exited:\n%s", log.String())
		default:
		}
		resp, err := client.Get(url)
		if err != nil {
			require.Contains(t, err.Error(), "connection refused", "after %d answers", answered)
			require.Zero(t, answered, "the listener went away")
			time.Sleep(2 * time.Millisecond)
			continue
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		statuses[resp.StatusCode]++
		if resp.StatusCode != 200 {
			var eb struct {
				ErrorCode int    `json:"error_code"`
				Message   string `json:"message"`
			}
			require.NoError(t, json.Unmarshal(data, &eb), "status %d body %q", resp.StatusCode, data)
			require.Equal(t, resp.StatusCode, eb.ErrorCode)
			messages[eb.Message] = true
		}
		answered++
	}
	require.Equal(t, 300, answered)
	t.Logf("statuses during start: %v, error messages: %v", statuses, messages)
}
