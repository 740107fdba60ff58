package main

import (
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/api"
	"github.com/connectd/connectd/internal/worker"
)

// /debug/pprof/ is served only with connectd.debug.pprof.enable=true, and behind the REST authentication.
func TestPprofWorkerKey(t *testing.T) {
	jaas := filepath.Join(t.TempDir(), "jaas.conf")
	users := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(users, []byte("alice: secret\n"), 0o600))
	require.NoError(t, os.WriteFile(jaas, []byte("KafkaConnect {\n org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n file=\""+users+"\";\n};\n"), 0o600))
	for _, tc := range []struct {
		props map[string]string
		auth  bool
		want  int
	}{
		{map[string]string{}, false, 404},
		{map[string]string{worker.PprofEnableKey: "false"}, false, 404},
		{map[string]string{worker.PprofEnableKey: "true"}, false, 200},
		{map[string]string{worker.PprofEnableKey: "true", "rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"}, true, 401},
	} {
		p := map[string]string{"bootstrap.servers": "127.0.0.1:1", "key.converter": "org.apache.kafka.connect.storage.StringConverter",
			"value.converter": "org.apache.kafka.connect.storage.StringConverter", "listeners": "http://127.0.0.1:0"}
		for k, v := range tc.props {
			p[k] = v
		}
		if tc.auth {
			t.Setenv("KAFKA_OPTS", "-Djava.security.auth.login.config="+jaas)
		}
		cfg, err := worker.ParseConfig(p)
		require.NoError(t, err)
		opts, err := restOptions(cfg)
		require.NoError(t, err)
		srv := httptest.NewServer(api.NewServer(nil, opts...).Handler())
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1"} {
			resp, err := srv.Client().Get(srv.URL + path)
			require.NoError(t, err)
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, tc.want, resp.StatusCode, "%v %s", tc.props, path)
		}
		srv.Close()
	}
}
