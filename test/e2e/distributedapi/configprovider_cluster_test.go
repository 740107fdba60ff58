package distributedapi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// A distributed worker resolves references when it starts connectors and tasks, and writes task configs
// to the config topic with the connector's references, never with what they resolve to.
func TestDistributedConfigProvidersStoreReferences(t *testing.T) {
	t.Parallel()
	secrets := t.TempDir()
	out := filepath.Join(t.TempDir(), "out.txt")
	propsFile := filepath.Join(secrets, "sink.properties")
	require.NoError(t, os.WriteFile(propsFile, []byte("path="+out+"\npassword=ClusterSecret-7\n"), 0o600))
	c := newCluster(t, "config.providers=file\nconfig.providers.file.class=FileConfigProvider\n"+
		"config.providers.file.param.allowed.paths="+secrets)
	w := c.Start("a", 0)
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 1)
	name := c.Group + "-refs"
	fileRef, pwRef := "${file:"+propsFile+":path}", "${file:"+propsFile+":password}"
	cfg := fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"1","topics":%q,"file":%q,"password":%q}`, topic, fileRef, pwRef)
	code, body := httpDo("PUT", w.URL+"/connectors/"+name+"/config", cfg)
	require.Equal(t, 201, code, body)
	kafkatest.ProduceN(t, c.Kafka, topic, 0, 10)
	require.Eventually(t, func() bool { return len(fileValues(t, out)) == 10 }, 60*time.Second, 100*time.Millisecond)

	code, body = httpDo("GET", w.URL+"/connectors/"+name+"/tasks", "")
	require.Equal(t, 200, code)
	assert.Contains(t, body, fileRef)
	assert.NotContains(t, body, out)

	var taskRecord string
	for _, m := range kafkatest.ConsumeAll(t, c.Kafka, c.Group+"-configs", 1000, 10*time.Second) {
		if string(m.Key) == "task-"+name+"-0" {
			taskRecord = string(m.Value)
		}
	}
	require.NotEmpty(t, taskRecord, "the task config record")
	assert.Contains(t, taskRecord, fileRef)
	assert.NotContains(t, taskRecord, "ClusterSecret-7")
	assert.NotContains(t, taskRecord, `"`+out+`"`)
	assert.NotContains(t, w.Log.String(), "ClusterSecret-7")
}

// A worker whose config names a config provider class it does not implement refuses to start, naming it.
func TestWorkerRefusesUnknownConfigProvider(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "worker.properties")
	require.NoError(t, os.WriteFile(f, []byte(fmt.Sprintf(`bootstrap.servers=%s
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
listeners=http://127.0.0.1:%d
config.providers=vault
config.providers.vault.class=io.confluent.csid.config.provider.vault.VaultConfigProvider
`, kafkaBootstrap(t), freePort(t))), 0o644))
	cmd := exec.Command(workerproc.Binary(t), "standalone", f)
	outb, err := cmd.CombinedOutput()
	require.Error(t, err, "the worker must not start:\n%s", outb)
	assert.Contains(t, string(outb), "config.providers.vault.class")
	assert.Contains(t, string(outb), "io.confluent.csid.config.provider.vault.VaultConfigProvider")
}
