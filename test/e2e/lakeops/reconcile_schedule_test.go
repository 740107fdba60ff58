package lakeops

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/lakepipeline"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// TestWorkerReconcileSchedule runs both sinks and the reconcile schedule of their tables in one standalone
// worker with basic authentication: GET /connectd/reconcile reports the pair clean once both layers hold the
// stream; a row changed behind the sink's back in ClickHouse shows up as drift with its key after POST; the
// series are on the worker's /metrics; nothing answers without credentials.
func TestWorkerReconcileSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := lakepipeline.Seed(t)
	rng := rand.New(rand.NewSource(seed))
	p := newPipeline(t)

	var lines []string
	for k, v := range p.props() {
		lines = append(lines, k+"="+v)
	}
	sort.Strings(lines)
	reconcileFile := filepath.Join(p.Dir, "customers-reconcile.properties")
	require.NoError(t, os.WriteFile(reconcileFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	creds := filepath.Join(p.Dir, "credentials.properties")
	require.NoError(t, os.WriteFile(creds, []byte("ops=ops-secret\n"), 0o600))
	jaas := filepath.Join(p.Dir, "connect_jaas.conf")
	require.NoError(t, os.WriteFile(jaas, []byte("KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\""+creds+"\";\n};\n"), 0o600))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	wp := filepath.Join(p.Dir, "worker.properties")
	b, err := os.ReadFile(wp)
	require.NoError(t, err)
	worker := strings.Replace(string(b), "listeners=http://127.0.0.1:0", "listeners="+url, 1) + fmt.Sprintf(`rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
java.security.auth.login.config=%s
connectd.reconcile.configs=%s
connectd.reconcile.interval.ms=3600000
`, jaas, reconcileFile)
	require.NoError(t, os.WriteFile(wp, []byte(worker), 0o644))

	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:ops-secret"))
	call := func(method, path, authorization string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url+path, nil)
		require.NoError(t, err)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, []byte(err.Error())
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, body
	}
	status := func() reconcile.ScheduleStatus {
		t.Helper()
		code, body := call("GET", "/connectd/reconcile", auth)
		require.Equal(t, 200, code, string(body))
		var st reconcile.ScheduleStatus
		require.NoError(t, json.Unmarshal(body, &st), string(body))
		require.Len(t, st.Pairs, 1)
		return st
	}
	// runNow asks for a run (the scheduled one may be in progress) and waits for its outcome.
	runNow := func() reconcile.JobStatus {
		t.Helper()
		asked := time.Now()
		require.Eventually(t, func() bool {
			code, body := call("POST", "/connectd/reconcile", auth)
			require.Contains(t, []int{202, 409}, code, string(body))
			return code == 202
		}, time.Minute, 50*time.Millisecond)
		var js reconcile.JobStatus
		require.Eventually(t, func() bool {
			js = status().Pairs[0]
			return js.RanAt != nil && !js.RanAt.Before(asked) && js.Result != ""
		}, 4*time.Minute, 100*time.Millisecond)
		if js.Report != nil {
			t.Logf("run: %s, %d mismatched, %d lag", js.Result, js.Report.MismatchedRows, js.Report.Cut.LagRecords)
		}
		return js
	}

	p.Start()
	require.Eventually(t, func() bool { code, _ := call("GET", "/connectd/reconcile", auth); return code == 200 }, time.Minute, 50*time.Millisecond)
	for _, path := range []string{"/connectd/reconcile", "/metrics"} {
		code, body := call("GET", path, "")
		require.Equal(t, 401, code, "%s without credentials", path)
		require.Equal(t, "User cannot access the resource.", string(body))
		code, _ = call("GET", path, "Basic "+base64.StdEncoding.EncodeToString([]byte("ops:wrong")))
		require.Equal(t, 401, code, "%s with a wrong password", path)
	}
	code, _ := call("POST", "/connectd/reconcile", "")
	require.Equal(t, 401, code, "POST without credentials")
	st := status()
	require.Equal(t, int64(3600000), st.IntervalMS)
	require.Equal(t, reconcileFile, st.Pairs[0].Config)
	require.Equal(t, "cdc.customers", st.Pairs[0].IcebergTable)
	require.Equal(t, p.DB+".customers", st.Pairs[0].ClickHouseTable)

	p.Produce(rng, 30)
	p.Wait()
	js := runNow()
	require.Equal(t, reconcile.StatusClean, js.Result, js.Error)
	require.Empty(t, js.Error)
	require.NotNil(t, js.Report)
	require.Equal(t, reconcile.StatusClean, js.Report.Status)
	require.Zero(t, js.Report.MismatchedRows)
	require.Equal(t, int64(len(p.Model())), js.Report.Iceberg.Rows)

	var keys []string
	for k := range p.Model() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	changed := keys[0]
	tbl := p.DB + ".customers"
	chdbtest.MustExec(t, p.S, "INSERT INTO "+tbl+" SELECT id, 'tampered', qty, updated_at, email, _version + 1, 0 FROM "+tbl+" FINAL WHERE id = "+quoteString(changed))
	js = runNow()
	require.Equal(t, reconcile.StatusDrift, js.Result, js.Error)
	require.Equal(t, 1, js.Report.MismatchedRows)
	require.Equal(t, []reconcile.Mismatch{{Key: changed, Kind: reconcile.Different, Columns: []string{"name", "version"}}}, js.Report.Mismatches)

	code, body := call("GET", "/metrics", auth)
	require.Equal(t, 200, code)
	labels := fmt.Sprintf(`clickhouse_table=%q,iceberg_table="cdc.customers"`, tbl)
	for _, want := range []string{
		"connectd_reconcile_mismatched_rows{" + labels + "} 1",
		"connectd_reconcile_lag_records{" + labels + "} 0",
		"connectd_reconcile_runs_total{" + labels + `,result="drift"} 1`,
		"connectd_reconcile_last_success_timestamp_seconds{" + labels + "} ",
		"connectd_reconcile_runs_total{" + labels + `,result="clean"} `,
	} {
		require.Contains(t, string(body), want)
	}
}
