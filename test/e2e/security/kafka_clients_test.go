package security

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/securekafka"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// saslSSLProps are the client settings of the broker's SASL_SSL listener: SCRAM-SHA-512 and a PKCS12 trust store.
func saslSSLProps(s securekafka.Stores, password string) map[string]string {
	return map[string]string{
		"security.protocol":       "SASL_SSL",
		"sasl.mechanism":          "SCRAM-SHA-512",
		"sasl.jaas.config":        fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, securekafka.ScramUser, password),
		"ssl.truststore.location": s.TrustP12,
		"ssl.truststore.password": securekafka.TrustPass,
		"ssl.truststore.type":     "PKCS12",
	}
}

// secureWorkerProps writes a distributed worker's file as a JVM user writes it for a secured cluster: the
// security settings for the worker's own clients, and copies prefixed producer., consumer. and admin. for the
// clients of the tasks and of the offsets admin.
func secureWorkerProps(t *testing.T, dir, name, bootstrap, group string, port int, sec map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(workerproc.DistributedProps(bootstrap, group))
	fmt.Fprintf(&b, `listeners=http://127.0.0.1:%d
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.flush.interval.ms=300
`, port)
	keys := make([]string, 0, len(sec))
	for k := range sec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, prefix := range []string{"", "producer.", "consumer.", "admin."} {
		for _, k := range keys {
			fmt.Fprintf(&b, "%s%s=%s\n", prefix, k, sec[k])
		}
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
	return p
}

// A `connectd distributed` worker whose only way to the cluster is a SASL_SSL listener (SCRAM-SHA-512, PKCS12
// trust store) uses those settings for every client it opens: it joins its group and keeps its configs,
// offsets and statuses in their topics (stores, group), a file sink consumes records produced over SASL_SSL
// (consumer), a bad record goes to a dead letter topic the worker creates (admin, producer), the offsets REST
// API reads and alters a sink's offsets (admin), and an Iceberg sink commits a snapshot through its control
// topic (transactional producer, read_committed consumer). With a wrong password the worker stops at start
// with the broker's answer.
func TestDistributedWorkerSASLSSLEveryClient(t *testing.T) {
	workerproc.Binary(t)
	s := securekafka.MakeStores(t)
	b := securekafka.StartBroker(t, s)
	sec := saslSSLProps(s, securekafka.ScramPass)
	dir := t.TempDir()
	group := kafkatest.UniqueName(t, "secw")

	w := startSecureWorker(t, dir, group, b.Plain, b.SASLSSL, sec)
	w.checkSinkDLQOffsets()
	ctx, create, running, status, produce := w.ctx, w.create, w.running, w.status, w.produce

	// control topic: an Iceberg sink on the Apache control protocol commits a snapshot
	iceTopic, control := group+"-ice", group+"-control"
	kafkatest.CreateTopic(t, b.Plain, iceTopic, 1, nil)
	iceCfg := map[string]string{
		"connector.class":                    iceberg.ApacheClass,
		"tasks.max":                          "1",
		"topics":                             iceTopic,
		"value.converter":                    "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":     "false",
		"iceberg.tables":                     "shop.events",
		"iceberg.tables.auto-create-enabled": "true",
		"iceberg.catalog.type":               "sql",
		"iceberg.catalog.uri":                "jdbc:sqlite:" + filepath.Join(dir, "catalog.db"),
		"iceberg.catalog.warehouse":          filepath.Join(dir, "warehouse"),
		"iceberg.control.topic":              control,
		"iceberg.control.protocol":           "apache",
		"iceberg.control.commit.interval-ms": "1000",
		"iceberg.control.commit.timeout-ms":  "10000",
	}
	create("ice", iceCfg)
	running("ice")
	for i := range 5 {
		produce(iceTopic, fmt.Sprintf(`{"id":%d,"name":"n%d"}`, i, i))
	}
	scfg, err := iceberg.ParseConfig(iceCfg)
	require.NoError(t, err)
	var summary map[string]string
	require.Eventually(t, func() bool {
		status("ice") // fails the test on a FAILED task
		cat, err := catalogx.Open(ctx, scfg.CatalogName, scfg.CatalogProps)
		if err != nil {
			return false
		}
		defer func() {
			if c, ok := cat.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		}()
		tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier("shop.events"))
		if err != nil || tbl.CurrentSnapshot() == nil || tbl.CurrentSnapshot().Summary == nil {
			return false
		}
		summary = tbl.CurrentSnapshot().Summary.Properties
		n, _ := strconv.Atoi(summary["total-records"])
		return n == 5
	}, 120*time.Second, 500*time.Millisecond, "a snapshot with the 5 records")
	t.Logf("iceberg snapshot summary: %v", summary)
	controlRecs := kafkatest.ReadToEnd(t, b.Plain, control, 10*time.Second)
	require.NotEmpty(t, controlRecs, "the commit went through the control topic")

	// a wrong password: the worker stops at start with the broker's answer
	badPort, badStart := workerproc.FreePort(t), time.Now()
	_, badLog, badDone := startWorkerEnv(t, nil, "distributed",
		secureWorkerProps(t, dir, "bad.properties", b.SASLSSL, group+"-bad", badPort, saslSSLProps(s, "wrong")))
	select {
	case <-badDone:
	case <-time.After(90 * time.Second):
		t.Fatalf("a worker with a wrong password neither started nor failed in 90 s:\n%s", workerproc.Tail(badLog.String(), 4000))
	}
	t.Logf("worker with a wrong password stopped after %v:\n%s", time.Since(badStart).Round(time.Millisecond), workerproc.Tail(badLog.String(), 2000))
	require.Contains(t, strings.ToLower(badLog.String()), "authentication failed")
	require.Contains(t, badLog.String(), "SCRAM-SHA-512")
}

// A `connectd distributed` worker on a listener that takes OAUTHBEARER only, with the JVM's settings for an
// OAuth server (client credentials grant): its stores and group, a sink task's consumer, the DLQ's admin and
// producer and the offsets admin all authenticate with tokens from the OAuth server.
func TestDistributedWorkerOAuthBearer(t *testing.T) {
	workerproc.Binary(t)
	o := securekafka.StartOAuthServer(t)
	b := securekafka.StartOAuthBroker(t, o)
	sec := map[string]string{
		"security.protocol":                   "SASL_PLAINTEXT",
		"sasl.mechanism":                      "OAUTHBEARER",
		"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
		"sasl.oauthbearer.token.endpoint.url": o.TokenURL,
		"sasl.jaas.config":                    securekafka.OAuthJAAS,
	}
	w := startSecureWorker(t, t.TempDir(), kafkatest.UniqueName(t, "oauthw"), b.Plain, b.SASLPlain, sec)
	w.checkSinkDLQOffsets()
	require.Greater(t, o.Issued.Load(), int32(1), "the test's producer and the worker fetched tokens")
}

func httpGet(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// secureWorker is a `connectd distributed` worker on a secured listener, and a producer with its settings.
type secureWorker struct {
	t                      *testing.T
	ctx                    context.Context
	dir, group, plain, url string
	create                 func(name string, cfg map[string]string)
	status                 func(name string) (string, []string)
	running                func(name string)
	produce                func(topic string, values ...string)
}

// startSecureWorker starts a worker whose clients reach the cluster at bootstrap with the settings sec
// (secureWorkerProps); plain is the broker's PLAINTEXT listener, for the test's own topics and reads.
func startSecureWorker(t *testing.T, dir, group, plain, bootstrap string, sec map[string]string) *secureWorker {
	// records are produced with the same settings
	clientProps := map[string]string{"bootstrap.servers": bootstrap}
	for k, v := range sec {
		clientProps[k] = v
	}
	popts, err := kafka.ProducerOpts(clientProps)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	producer, err := kafka.Open(ctx, clientProps, popts...)
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	produce := func(topic string, values ...string) {
		t.Helper()
		for _, v := range values {
			require.NoError(t, producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)}).FirstErr())
		}
	}

	port := workerproc.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	_, log, done := startWorkerEnv(t, nil, "distributed", secureWorkerProps(t, dir, "worker.properties", bootstrap, group, port, sec))
	require.Eventually(t, func() bool {
		select {
		case <-done:
			t.Fatalf("worker exited:\n%s", workerproc.Tail(log.String(), 4000))
		default:
		}
		code, _ := httpGet(url + "/health")
		return code == 200
	}, 90*time.Second, 200*time.Millisecond)

	create := func(name string, cfg map[string]string) {
		t.Helper()
		require.Eventually(t, func() bool { // 409 while the worker joins its group
			code, _ := workerproc.DoJSON(t, "PUT", url+"/connectors/"+name+"/config", cfg)
			return code == 201 || code == 200
		}, 60*time.Second, 250*time.Millisecond)
	}
	status := func(name string) (string, []string) {
		code, body := workerproc.DoJSON(t, "GET", url+"/connectors/"+name+"/status", nil)
		var st struct {
			Connector struct{ State string }
			Tasks     []struct{ State, Trace string }
		}
		if code != 200 || json.Unmarshal(body, &st) != nil {
			return "", nil
		}
		var tasks []string
		for _, tk := range st.Tasks {
			require.NotEqual(t, "FAILED", tk.State, "task of %s failed: %s", name, tk.Trace)
			tasks = append(tasks, tk.State)
		}
		return st.Connector.State, tasks
	}
	running := func(name string) {
		t.Helper()
		require.Eventually(t, func() bool {
			c, tasks := status(name)
			return c == "RUNNING" && len(tasks) == 1 && tasks[0] == "RUNNING"
		}, 60*time.Second, 200*time.Millisecond, "%s running", name)
	}

	return &secureWorker{t: t, ctx: ctx, dir: dir, group: group, plain: plain, url: url,
		create: create, status: status, running: running, produce: produce}
}

// checkSinkDLQOffsets shows the task clients and the offsets admin at work: a file sink consumes records
// (consumer), a record the converter refuses goes to a dead letter topic the worker creates (admin,
// producer), and the offsets REST API reads and alters the file sink's offsets (admin).
func (w *secureWorker) checkSinkDLQOffsets() {
	t, dir, group, url := w.t, w.dir, w.group, w.url
	create, status, running, produce := w.create, w.status, w.running, w.produce
	// consumer: a file sink
	fileTopic := group + "-file"
	kafkatest.CreateTopic(t, w.plain, fileTopic, 1, nil)
	out := filepath.Join(dir, "sink.txt")
	create("file", map[string]string{"connector.class": "FileStreamSink", "tasks.max": "1", "topics": fileTopic, "file": out})
	running("file")
	produce(fileTopic, "r0", "r1", "r2")
	require.Eventually(t, func() bool { return len(workerproc.ReadLines(t, out)) == 3 }, 60*time.Second, 100*time.Millisecond)
	require.Equal(t, []string{"r0", "r1", "r2"}, workerproc.ReadLines(t, out))

	// admin + producer: a dead letter topic the worker creates, and a record the converter refuses in it
	badTopic, dlqTopic := group+"-bad", group+"-dlq"
	kafkatest.CreateTopic(t, w.plain, badTopic, 1, nil)
	create("dlq", map[string]string{"connector.class": "FileStreamSink", "tasks.max": "1", "topics": badTopic,
		"file":                              filepath.Join(dir, "dlq-sink.txt"),
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":    "false",
		"errors.tolerance":                  "all",
		"errors.deadletterqueue.topic.name": dlqTopic,
		"errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable":   "true",
	})
	running("dlq")
	produce(badTopic, "not json")
	dead := kafkatest.ConsumeAll(t, w.plain, dlqTopic, 1, 60*time.Second)
	require.Len(t, dead, 1)
	require.Equal(t, "not json", string(dead[0].Value))
	headers := map[string]string{}
	for _, h := range dead[0].Headers {
		headers[h.Key] = string(h.Value)
	}
	require.Equal(t, badTopic, headers["__connect.errors.topic"], "headers: %v", headers)
	require.Equal(t, "0", headers["__connect.errors.offset"], "headers: %v", headers)
	require.NotEmpty(t, headers["__connect.errors.exception.class.name"], "headers: %v", headers)

	// admin: the offsets REST API reads the file sink's offsets, and alters them once it is stopped
	offsets := func() string {
		code, body := workerproc.DoJSON(t, "GET", url+"/connectors/file/offsets", nil)
		require.Equal(t, 200, code, string(body))
		return string(body)
	}
	wantOffsets := func(off int) string {
		return fmt.Sprintf(`{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":%q},"offset":{"kafka_offset":%d}}]}`, fileTopic, off)
	}
	require.Eventually(t, func() bool { return offsets() == wantOffsets(3) }, 30*time.Second, 200*time.Millisecond,
		"GET offsets after 3 records")
	code, body := workerproc.DoJSON(t, "PUT", url+"/connectors/file/stop", nil)
	require.Equal(t, 204, code, string(body))
	require.Eventually(t, func() bool { c, _ := status("file"); return c == "STOPPED" }, 30*time.Second, 200*time.Millisecond)
	code, body = workerproc.DoJSON(t, "PATCH", url+"/connectors/file/offsets", map[string]any{"offsets": []any{map[string]any{
		"partition": map[string]any{"kafka_topic": fileTopic, "kafka_partition": 0},
		"offset":    map[string]any{"kafka_offset": 1},
	}}})
	require.Equal(t, 200, code, string(body))
	require.Equal(t, wantOffsets(1), offsets())

}
