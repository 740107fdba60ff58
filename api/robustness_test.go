package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect/jvm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const nestingMsg = "Document nesting depth (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)"

func deepOffsets(depth int) string {
	return `{"offsets":[{"partition":{"a":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}]}`
}

// Deep bodies on every JSON-reading endpoint get an error, and the worker keeps serving: 10M nested arrays
// exceed the body limit (413), 1M stop at the first array that cannot bind (500, Jackson's message).
func TestDeepJSONOverHTTP(t *testing.T) {
	e := newEnv(t, true)
	client := &http.Client{}
	send := func(method, path string, body []byte) (int, string) {
		req, err := http.NewRequest(method, e.ts.URL+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	tenM := bytes.Repeat([]byte("["), 10_000_000)
	oneM := bytes.Repeat([]byte("["), 1_000_000)
	endpoints := []struct{ method, path string }{
		{"POST", "/connectors"},
		{"PUT", "/connectors/a/config"},
		{"PATCH", "/connectors/a/config"},
		{"PUT", "/connector-plugins/FileStreamSink/config/validate"},
		{"PATCH", "/connectors/a/offsets"},
		{"POST", "/connectors/a/tasks"},
		{"PUT", "/admin/loggers/root"},
	}
	for _, ep := range endpoints {
		status, body := send(ep.method, ep.path, tenM)
		assert.Equal(t, 413, status, "%s %s", ep.method, ep.path)
		assert.Equal(t, `{"error_code":413,"message":"HTTP 413 Request Entity Too Large"}`, body)
		// Jackson binds while it reads: none of these bodies may hold an array where the first two '[' stand,
		// so the answer is the mismatch there (as config_put_array_500), not the nesting limit further in.
		status, body = send(ep.method, ep.path, oneM)
		assert.Equal(t, 500, status, "%s %s", ep.method, ep.path)
		assert.Contains(t, body, "from Array value (token `JsonToken.START_ARRAY`)\\n at "+jvm.RedactedSource+"line: 1, column: ")
		status, _ = send("GET", "/connectors", nil)
		require.Equal(t, 200, status, "still serving after %s %s", ep.method, ep.path)
	}
	// The JVM's answer, with the reference chain its bean deserializers add (Connect 4.3.1).
	status, body := send("PATCH", "/connectors/nope/offsets", []byte(deepOffsets(997)))
	assert.Equal(t, 500, status)
	assert.Equal(t, `{"error_code":500,"message":"`+nestingMsg+` (through reference chain: org.apache.kafka.connect.runtime.rest.entities.ConnectorOffsets[\"offsets\"]->java.util.ArrayList[0]->org.apache.kafka.connect.runtime.rest.entities.ConnectorOffset[\"partition\"])"}`, body)
	status, _ = send("PATCH", "/connectors/nope/offsets", []byte(deepOffsets(996)))
	assert.Equal(t, 404, status, "996 nested arrays in a partition are 1000 containers deep")
}

type panickyHerder struct{ *fakeHerder }

func (panickyHerder) Connectors(context.Context) ([]string, error) {
	var m map[string][]string
	//lint:ignore SA5000 the panic is what this fake is for
	m["x"] = nil // a nil-map write: a runtime panic, as a nil pointer in a herder snapshot would be
	return nil, nil
}

type logSink struct{ bytes.Buffer }

// A handler panic answers the JVM's 500 body and a log line; the worker keeps serving.
func TestPanicRecovered(t *testing.T) {
	var logs logSink
	s := NewServer(panickyHerder{newFakeHerder()}, WithRegistry(testRegistry), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	for i := 0; i < 2; i++ {
		resp, err := http.Get(ts.URL + "/connectors")
		require.NoError(t, err)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 500, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Equal(t, `{"error_code":500,"message":"assignment to entry in nil map"}`, string(data))
	}
	resp, err := http.Get(ts.URL + "/connector-plugins")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, logs.String(), "Uncaught exception in REST call to /connectors")
	assert.Contains(t, logs.String(), "panickyHerder.Connectors", "the stack is logged")
}

// After part of an answer is out, a panic aborts the connection instead of appending an error body.
func TestPanicAfterWriteAborts(t *testing.T) {
	h := recoverPanics(slog.New(slog.NewTextHandler(io.Discard, nil)), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(200)
		_, _ = w.Write([]byte("[partial"))
		panic(errors.New("boom"))
	}))
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = slog.NewLogLogger(slog.NewTextHandler(io.Discard, nil), slog.LevelDebug)
	ts.Start()
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	assert.Error(t, err, "the client sees a broken answer, not a well-formed one")
}
