package parity

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/api"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// A standalone worker answers as a JVM 4.3.1 worker where tools look: task configs name the JVM's task class,
// unknown and source connector classes get a 400, GET / the Connect version, /admin/loggers the runtime's logger.
func TestWorkerAnswersAsJVM(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "e2e-parity")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	dir := t.TempDir()
	port := workerproc.FreePort(t)
	workerproc.Start(t, "standalone", workerproc.WriteWorkerProps(t, dir, addr, port, ""))
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	workerproc.WaitHealthy(t, url, 60*time.Second)

	code, body := workerproc.DoJSON(t, "POST", url+"/connectors", map[string]any{"name": "file-sink",
		"config": map[string]string{"connector.class": "FileStreamSink", "tasks.max": "2", "topics": topic, "file": dir + "/out.txt"}})
	require.Equal(t, 201, code, string(body))
	require.Eventually(t, func() bool {
		code, body = workerproc.DoJSON(t, "GET", url+"/connectors/file-sink/tasks", nil)
		return code == 200 && string(body) != "[]"
	}, 30*time.Second, 100*time.Millisecond)
	var tasks []struct {
		Config map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal(body, &tasks), string(body))
	require.Len(t, tasks, 2)
	for _, tk := range tasks {
		assert.Equal(t, "org.apache.kafka.connect.file.FileStreamSinkTask", tk.Config["task.class"])
	}

	for class, prefix := range map[string]string{
		"com.example.Nope": "Failed to find any class that implements Connector and which name matches com.example.Nope, available connectors are: PluginDesc{klass=class ",
		"io.debezium.connector.postgresql.PostgresConnector": "io.debezium.connector.postgresql.PostgresConnector is a source connector; this runtime hosts sink connectors only, available connectors are: PluginDesc{",
	} {
		code, body = workerproc.DoJSON(t, "POST", url+"/connectors", map[string]any{"name": "x", "config": map[string]string{"connector.class": class, "topics": topic}})
		require.Equal(t, 400, code, string(body))
		var e struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		require.NoError(t, json.Unmarshal(body, &e))
		assert.Equal(t, 400, e.Code)
		assert.Contains(t, e.Message, prefix)
		assert.Contains(t, e.Message, "name='org.apache.kafka.connect.file.FileStreamSinkConnector'")
	}

	code, body = workerproc.DoJSON(t, "GET", url+"/", nil)
	require.Equal(t, 200, code)
	var info map[string]string
	require.NoError(t, json.Unmarshal(body, &info))
	assert.Equal(t, api.ConnectVersion, info["version"])
	assert.Regexp(t, `^([0-9a-f]{16}|unknown)$`, info["commit"])

	code, body = workerproc.DoJSON(t, "GET", url+"/admin/loggers", nil)
	require.Equal(t, 200, code)
	var loggers map[string]any
	require.NoError(t, json.Unmarshal(body, &loggers))
	assert.Contains(t, loggers, "root")
	assert.Contains(t, loggers, "org.apache.kafka.connect.runtime")
	assert.Contains(t, loggers, "org.apache.kafka.connect.runtime.rest.RestServer")
}
