package api

import (
	"net/http"
)

// Reconciler is the worker's reconcile schedule (connectd.reconcile.* worker keys) behind
// /connectd/reconcile, an endpoint of connectd's own outside the JVM's API.
type Reconciler interface {
	// ReconcileStatus is the body of GET /connectd/reconcile: each table pair's latest run.
	ReconcileStatus() any
	// TriggerReconcile starts a run of every pair in the background; false when one is already running.
	TriggerReconcile() bool
}

// WithReconciler serves GET and POST /connectd/reconcile where /admin/loggers is served (the admin listeners
// when admin.listeners is set), behind the REST authentication: a run scans both tables of every pair, and
// the report lists mismatching keys.
func WithReconciler(r Reconciler) Option { return func(s *Server) { s.reconciler = r } }

func (s *Server) reconcileStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, s.reconciler.ReconcileStatus())
}

func (s *Server) reconcileNow(w http.ResponseWriter, _ *http.Request) {
	if !s.reconciler.TriggerReconcile() {
		writeError(w, newRestError(409, "A reconcile run is already in progress."))
		return
	}
	writeJSON(w, 202, s.reconciler.ReconcileStatus())
}
