package herder_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
)

// captureJVMValidate names a running JVM Connect 4.x worker (testdata/validate/capture.sh starts one) whose
// validate answers replace the goldens.
var captureJVMValidate = flag.String("capture-jvm-validate", "", "URL of a JVM Connect worker: rewrite testdata/validate/smt-golden.json from its answers")

type validateCase struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
}

// validateGolden is what a validate answer says about transforms, predicates and class keys: the error
// count, the errors of every key, which transforms.*/predicates.* keys it lists, and the class each
// alias's type key resolved to.
type validateGolden struct {
	ErrorCount int                 `json:"error_count"`
	Errors     map[string][]string `json:"errors"`
	AliasKeys  []string            `json:"alias_keys"`
	Classes    map[string]*string  `json:"classes"`
}

func summarize(infos *herder.ConfigInfos) validateGolden {
	g := validateGolden{ErrorCount: infos.ErrorCount, Errors: map[string][]string{}, AliasKeys: []string{}, Classes: map[string]*string{}}
	for _, c := range infos.Configs {
		name := c.Definition.Name
		if len(c.Value.Errors) > 0 {
			g.Errors[name] = c.Value.Errors
		}
		// plugin.version keys (KIP-891) are not compared here.
		if strings.HasPrefix(name, "transforms.") || strings.HasPrefix(name, "predicates.") {
			if !strings.HasSuffix(name, ".plugin.version") {
				g.AliasKeys = append(g.AliasKeys, name)
			}
			if strings.Count(name, ".") == 2 && strings.HasSuffix(name, ".type") {
				g.Classes[name] = c.Value.Value
			}
		}
	}
	sort.Strings(g.AliasKeys)
	return g
}

func jvmValidate(t *testing.T, url string, config map[string]string) *herder.ConfigInfos {
	body, err := json.Marshal(config)
	require.NoError(t, err)
	req, err := http.NewRequest("PUT", url+"/connector-plugins/FileStreamSinkConnector/config/validate", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	require.Equal(t, 200, resp.StatusCode, string(out))
	var infos herder.ConfigInfos
	require.NoError(t, json.Unmarshal(out, &infos))
	return &infos
}

// TestValidateJVMGoldens validates the Kafka documentation's SMT and predicate configurations and a set of
// broken ones, and compares the answers with those of a JVM Connect 4.3.1 worker
// (testdata/validate/smt-golden.json, captured by testdata/validate/capture.sh).
func TestValidateJVMGoldens(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "validate")
	raw, err := os.ReadFile(filepath.Join(dir, "smt-cases.json"))
	require.NoError(t, err)
	var cases struct{ Cases []validateCase }
	require.NoError(t, json.Unmarshal(raw, &cases))
	goldenPath := filepath.Join(dir, "smt-golden.json")
	if *captureJVMValidate != "" {
		golden := map[string]validateGolden{}
		for _, c := range cases.Cases {
			golden[c.Name] = summarize(jvmValidate(t, *captureJVMValidate, c.Config))
		}
		out, err := json.MarshalIndent(golden, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(goldenPath, append(out, '\n'), 0o644))
		return
	}
	raw, err = os.ReadFile(goldenPath)
	require.NoError(t, err)
	var golden map[string]validateGolden
	require.NoError(t, json.Unmarshal(raw, &golden))
	v := &herder.Validator{Registry: testRegistry()}
	for _, c := range cases.Cases {
		t.Run(c.Name, func(t *testing.T) {
			want, ok := golden[c.Name]
			require.True(t, ok, "no golden for %s", c.Name)
			infos, err := v.Validate(c.Config)
			require.NoError(t, err)
			assert.Equal(t, want, summarize(infos))
		})
	}
}
