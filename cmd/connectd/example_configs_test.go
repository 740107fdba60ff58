package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/plugins"
)

// TestUpstreamExampleConfigsValidate walks the upstream example configurations of the Iceberg (Apache and
// Tabular), ClickHouse and Kafka file connectors in testdata: each, posted unchanged, passes the runtime's
// validation (PUT /connector-plugins/{p}/config/validate: the worker-level keys, the connector's definition
// and its own checks) with no error, and its connector starts and splits it into task configs.
func TestUpstreamExampleConfigsValidate(t *testing.T) {
	var files []string
	for _, pattern := range []string{"iceberg/configs/*.json", "clickhouse/*.json", "file/*.properties"} {
		m, err := filepath.Glob(filepath.Join("../../testdata", pattern))
		require.NoError(t, err)
		require.NotEmpty(t, m, pattern)
		files = append(files, m...)
	}
	require.GreaterOrEqual(t, len(files), 12)
	reg := plugins.Builtin()
	v := &herder.Validator{Registry: reg}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			props := readExampleConfig(t, f)
			infos, err := v.Validate(props)
			require.NoError(t, err)
			for _, c := range infos.Configs {
				assert.Empty(t, c.Value.Errors, c.Definition.Name)
			}
			assert.Zero(t, infos.ErrorCount)
			conn, _, err := reg.NewSinkConnector(props["connector.class"])
			require.NoError(t, err)
			conn.Initialize(nopConnectorContext{})
			require.NoError(t, conn.Start(props))
			tcs, err := conn.TaskConfigs(2)
			require.NoError(t, err)
			require.NotEmpty(t, tcs)
			require.NoError(t, conn.Stop())
		})
	}
}

// readExampleConfig reads a {"name", "config"} JSON body or a standalone .properties file.
func readExampleConfig(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	props := map[string]string{}
	if strings.HasSuffix(path, ".properties") {
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, val, ok := strings.Cut(line, "=")
			require.True(t, ok, line)
			props[strings.TrimSpace(k)] = strings.TrimSpace(val)
		}
		return props
	}
	var doc struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	props["name"] = doc.Name
	for k, val := range doc.Config {
		props[k] = val
	}
	return props
}

type nopConnectorContext struct{}

func (nopConnectorContext) RequestTaskReconfiguration() {}
func (nopConnectorContext) RaiseError(error)            {}
