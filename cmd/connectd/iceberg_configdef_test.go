package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/api"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/plugins"
)

// TestIcebergConfigDefMatchesApacheSink: GET /connector-plugins/org.apache.iceberg.connect.IcebergSinkConnector/config
// lists every key the Apache Iceberg sink 1.10.1 lists on a JVM Connect 4.3.1 worker (the golden captured by
// testdata/iceberg/configdef/capture.sh), each with the same type, default, importance, documentation, group,
// order, width, display name and dependents, and in the same order; connectd's own keys (the extensions and
// Tabular's) come after the Apache sink's own. connector.plugin.version defaults to the plugin's version, which
// is the Apache sink's; iceberg.control.commit.threads defaults to the cores x 2 of the machine, as on the JVM.
func TestIcebergConfigDefMatchesApacheSink(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/iceberg/configdef/apache-sink-1.10.1.json")
	require.NoError(t, err)
	var golden []map[string]any
	require.NoError(t, json.Unmarshal(raw, &golden))

	srv := httptest.NewServer(api.NewServer(nil, api.WithRegistry(plugins.Builtin()), api.WithSinkConnectorConfigDef(herder.ConnectorConfigDef())).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/connector-plugins/org.apache.iceberg.connect.IcebergSinkConnector/config")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, string(body))
	var ours []map[string]any
	require.NoError(t, json.Unmarshal(body, &ours))

	byName := map[string]map[string]any{}
	pos := map[string]int{}
	for i, k := range ours {
		byName[k["name"].(string)] = k
		pos[k["name"].(string)] = i
	}
	last := -1
	for _, want := range golden {
		name := want["name"].(string)
		got, ok := byName[name]
		if !assert.True(t, ok, "%s missing", name) {
			continue
		}
		switch name {
		case "iceberg.control.commit.threads": // cores x 2: the capturing machine had 2
			assert.Equal(t, "4", want["default_value"])
			assert.Equal(t, strconv.Itoa(2*runtime.GOMAXPROCS(0)), got["default_value"])
			want["default_value"] = got["default_value"]
		}
		assert.Equal(t, want, got, name)
		assert.Greater(t, pos[name], last, "%s out of the Apache sink's order", name)
		last = pos[name]
	}
	var extensions []string
	for _, k := range ours {
		name := k["name"].(string)
		found := false
		for _, g := range golden {
			found = found || g["name"] == name
		}
		if !found {
			extensions = append(extensions, name)
		}
	}
	t.Logf("connectd's own keys: %s", strings.Join(extensions, ", "))
}
