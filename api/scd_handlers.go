package api

import (
	"context"
	"errors"
	"net/http"
)

// SCDMaterializer runs the SCD Type 2 materialization of one connector's configuration once (the Iceberg
// sink's iceberg.tables.scd.* keys) behind POST /connectd/connectors/{connector}/scd, an endpoint of
// connectd's own outside the JVM's API.
type SCDMaterializer interface {
	// MaterializeSCD runs every SCD table of the connector's config and returns the reports; an
	// *SCDConfigError when the config names no SCD table or is invalid.
	MaterializeSCD(ctx context.Context, connectorConfig map[string]string) (any, error)
}

// SCDConfigError is a connector configuration that the materialization cannot run (answered 400).
type SCDConfigError struct{ Message string }

func (e *SCDConfigError) Error() string { return e.Message }

// WithSCDMaterializer serves POST /connectd/connectors/{connector}/scd where /admin/loggers is served, behind
// the REST authentication: a run reads history tables and commits to SCD tables.
func WithSCDMaterializer(m SCDMaterializer) Option { return func(s *Server) { s.scd = m } }

// materializeSCD runs the connector's SCD tables now and answers their reports (200), the JVM's 404 for an
// unknown connector, 400 for a config without SCD tables.
func (s *Server) materializeSCD(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "connector")
	cfg, err := read(s, r, func(ctx context.Context) (map[string]string, error) { return s.h.ConnectorConfig(ctx, name) })
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := s.scd.MaterializeSCD(r.Context(), cfg)
	var ce *SCDConfigError
	switch {
	case errors.As(err, &ce):
		writeError(w, newRestError(400, ce.Message))
	case err != nil:
		writeError(w, newRestError(500, err.Error()))
	default:
		writeJSON(w, 200, out)
	}
}
