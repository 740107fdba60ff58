package api

import (
	"io"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeReconciler runs nothing: a triggered run stays running until finish.
type fakeReconciler struct {
	mu      sync.Mutex
	running bool
	runs    int
}

func (f *fakeReconciler) ReconcileStatus() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return map[string]any{"running": f.running, "runs": f.runs}
}

func (f *fakeReconciler) TriggerReconcile() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running {
		return false
	}
	f.running, f.runs = true, f.runs+1
	return true
}

func (f *fakeReconciler) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running = false
}

func reconcileCall(t *testing.T, e *env, r req) (int, string) {
	t.Helper()
	resp := e.do(t, r)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// GET answers the reconciler's status, POST starts a run (202) unless one is running (409); without a
// reconciler the path is unknown, with the JVM's 404.
func TestReconcileEndpoint(t *testing.T) {
	plain := newEnv(t, false)
	for _, m := range []string{"GET", "POST"} {
		code, body := reconcileCall(t, plain, req{method: m, path: "/connectd/reconcile"})
		assert.Equal(t, 404, code)
		assert.Equal(t, `{"error_code":404,"message":"HTTP 404 Not Found"}`, body)
	}

	f := &fakeReconciler{}
	e := newEnv(t, true, WithReconciler(f))
	code, body := reconcileCall(t, e, req{method: "GET", path: "/connectd/reconcile"})
	assert.Equal(t, 200, code)
	assert.JSONEq(t, `{"running":false,"runs":0}`, body)
	code, body = reconcileCall(t, e, req{method: "POST", path: "/connectd/reconcile"})
	assert.Equal(t, 202, code)
	assert.JSONEq(t, `{"running":true,"runs":1}`, body)
	code, body = reconcileCall(t, e, req{method: "POST", path: "/connectd/reconcile/"})
	assert.Equal(t, 409, code)
	assert.Equal(t, `{"error_code":409,"message":"A reconcile run is already in progress."}`, body)
	f.finish()
	code, _ = reconcileCall(t, e, req{method: "POST", path: "/connectd/reconcile"})
	assert.Equal(t, 202, code)
	code, _ = reconcileCall(t, e, req{method: "DELETE", path: "/connectd/reconcile"})
	assert.Equal(t, 405, code)
}

// With admin.listeners the endpoint moves to them with /admin/loggers; an empty admin.listeners serves it nowhere.
func TestReconcileEndpointOnAdminListeners(t *testing.T) {
	for _, admin := range [][]string{{"http://127.0.0.1:0"}, {}} {
		s := NewServer(newFakeHerder(), WithRegistry(testRegistry), WithReconciler(&fakeReconciler{}), WithAdminListeners(admin))
		main := httptest.NewServer(s.Handler())
		resp, err := main.Client().Get(main.URL + "/connectd/reconcile")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 404, resp.StatusCode, "not on the main listeners when admin.listeners is set")
		main.Close()
	}
	s := NewServer(newFakeHerder(), WithRegistry(testRegistry), WithReconciler(&fakeReconciler{}), WithAdminListeners([]string{"http://127.0.0.1:0"}))
	adm := httptest.NewServer(s.AdminHandler())
	defer adm.Close()
	resp, err := adm.Client().Get(adm.URL + "/connectd/reconcile")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}
