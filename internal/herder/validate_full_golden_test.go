package herder_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
)

// captureWorkerProps are the converter settings of the JVM worker testdata/validate/capture.sh starts: its
// converters are the defaults a validate answer shows.
var captureWorkerProps = map[string]string{
	"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
	"value.converter": "org.apache.kafka.connect.storage.StringConverter",
}

// validateDifferences are the deliberate differences between a connectd and a JVM 4.3.1 validate answer. Anything
// else must be identical, field for field and in order.
var validateDifferences = []struct{ what, why string }{
	{"recommended_values of the class keys (key/value/header.converter, transforms.<alias>.type, predicates.<alias>.type) also list the plugins only connectd hosts",
		"they list the installed plugins; connectd hosts AvroConverter, its DLQ header converter, Debezium's and the Iceberg sink's SMTs, which the captured JVM worker does not"},
	{"the JVM's NullPointerException text for a missing required regex (RegexRouter's `regex`: \"Cannot invoke \\\"String.isEmpty()\\\" because \\\"this.pattern\\\" is null\") is not reproduced",
		"it is a JVM bug surfacing through the validator; the key already has its \"Missing required configuration\" error"},
	{"client override keys (consumer.override.*, producer.override.*, admin.override.*) are not listed under the All policy",
		"connectd carries no copy of the Java clients' ConfigDefs the JVM lists them with; the None and Principal policies' verdicts are listed"},
	{"JsonConverter's schema.content key is not listed",
		"connectd's JsonConverter does not implement a fixed schema; listing the key would suggest it is honoured"},
}

// jvmValidateRaw is a JVM worker's validate answer: status and body.
func jvmValidateRaw(t *testing.T, url string, config map[string]string) (int, json.RawMessage) {
	body, err := json.Marshal(config)
	require.NoError(t, err)
	plugin := config["connector.class"]
	plugin = plugin[strings.LastIndexByte(plugin, '.')+1:]
	req, err := http.NewRequest("PUT", url+"/connector-plugins/"+plugin+"/config/validate", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// TestValidateJVMFullAnswers compares whole validate answers (name, error_count, groups, and every config's
// definition and value, in order) with those of a JVM Connect 4.3.1 worker (testdata/validate/full-golden.json,
// captured by testdata/validate/capture.sh), but for validateDifferences.
func TestValidateJVMFullAnswers(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "validate")
	raw, err := os.ReadFile(filepath.Join(dir, "full-cases.json"))
	require.NoError(t, err)
	var cases struct{ Cases []validateCase }
	require.NoError(t, json.Unmarshal(raw, &cases))
	goldenPath := filepath.Join(dir, "full-golden.json")
	if *captureJVMValidate != "" {
		golden := map[string]json.RawMessage{}
		for _, c := range cases.Cases {
			code, body := jvmValidateRaw(t, *captureJVMValidate, c.Config)
			require.Equal(t, 200, code, "%s: %s", c.Name, body)
			golden[c.Name] = body
		}
		out, err := json.MarshalIndent(golden, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(goldenPath, append(out, '\n'), 0o644))
		return
	}
	raw, err = os.ReadFile(goldenPath)
	require.NoError(t, err)
	var golden map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &golden))
	v := &herder.Validator{Registry: testRegistry(), WorkerProps: captureWorkerProps}
	for _, c := range cases.Cases {
		t.Run(c.Name, func(t *testing.T) {
			want, ok := golden[c.Name]
			require.True(t, ok, "no golden for %s", c.Name)
			infos, err := v.Validate(c.Config)
			require.NoError(t, err)
			got, err := json.Marshal(infos)
			require.NoError(t, err)
			var jvm, ours configInfosJSON
			require.NoError(t, json.Unmarshal(want, &jvm))
			require.NoError(t, json.Unmarshal(got, &ours))
			withoutDeliberateDifferences(&jvm, &ours)
			assert.Equal(t, jvm.Name, ours.Name, "name")
			assert.Equal(t, jvm.ErrorCount, ours.ErrorCount, "error_count")
			assert.Equal(t, jvm.Groups, ours.Groups, "groups")
			assert.Equal(t, configNames(jvm), configNames(ours), "configs and their order")
			byName := map[string]configInfoJSON{}
			for _, ci := range ours.Configs {
				byName[ci.Value["name"].(string)] = ci
			}
			for _, want := range jvm.Configs {
				name := want.Value["name"].(string)
				got, ok := byName[name]
				if !assert.True(t, ok, "missing %s", name) {
					continue
				}
				assert.Equal(t, want.Definition, got.Definition, "definition of %s", name)
				assert.Equal(t, want.Value, got.Value, "value of %s", name)
			}
		})
	}
	if t.Failed() {
		// A failure may come from a difference that belongs on the list rather than from a bug.
		for _, d := range validateDifferences {
			t.Logf("not compared (deliberate): %s: %s", d.what, d.why)
		}
	}
}

type configInfoJSON struct {
	Definition map[string]any `json:"definition"`
	Value      map[string]any `json:"value"`
}

type configInfosJSON struct {
	Name       string           `json:"name"`
	ErrorCount int              `json:"error_count"`
	Groups     []string         `json:"groups"`
	Configs    []configInfoJSON `json:"configs"`
}

func configNames(infos configInfosJSON) []string {
	out := []string{}
	for _, c := range infos.Configs {
		out = append(out, c.Value["name"].(string))
	}
	return out
}

// withoutDeliberateDifferences applies validateDifferences: the JVM's schema.content and client override keys and
// its NullPointerException texts are dropped, and the recommended classes connectd lists are kept only where the JVM lists them too.
func withoutDeliberateDifferences(jvm, ours *configInfosJSON) {
	kept := jvm.Configs[:0]
	for _, c := range jvm.Configs {
		name := c.Value["name"].(string)
		if !strings.HasSuffix(name, "converter.schema.content") && !isClientOverride(name) {
			kept = append(kept, c)
		}
	}
	jvm.Configs = kept
	for _, c := range jvm.Configs {
		var errs []any
		for _, e := range c.Value["errors"].([]any) {
			if strings.Contains(e.(string), `Cannot invoke "String.isEmpty()" because "this.pattern" is null`) {
				jvm.ErrorCount--
				continue
			}
			errs = append(errs, e)
		}
		if errs == nil {
			errs = []any{}
		}
		c.Value["errors"] = errs
	}
	jvmRecommended := map[string]map[any]bool{}
	for _, c := range jvm.Configs {
		set := map[any]bool{}
		for _, r := range c.Value["recommended_values"].([]any) {
			set[r] = true
		}
		jvmRecommended[c.Value["name"].(string)] = set
	}
	for _, c := range ours.Configs {
		name := c.Value["name"].(string)
		if !isClassKey(name) {
			continue
		}
		var filtered []any
		for _, r := range c.Value["recommended_values"].([]any) {
			if jvmRecommended[name][r] {
				filtered = append(filtered, r)
			}
		}
		if filtered == nil {
			filtered = []any{}
		}
		c.Value["recommended_values"] = filtered
	}
}

func isClientOverride(name string) bool {
	return strings.HasPrefix(name, "consumer.override.") || strings.HasPrefix(name, "producer.override.") ||
		strings.HasPrefix(name, "admin.override.")
}

func isClassKey(name string) bool {
	switch name {
	case "key.converter", "value.converter", "header.converter":
		return true
	}
	return (strings.HasPrefix(name, "transforms.") || strings.HasPrefix(name, "predicates.")) &&
		strings.Count(name, ".") == 2 && strings.HasSuffix(name, ".type")
}
