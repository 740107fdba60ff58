package api

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fakeSCD answers from the connector config it is given.
type fakeSCD struct{}

func (fakeSCD) MaterializeSCD(_ context.Context, cfg map[string]string) (any, error) {
	switch cfg["iceberg.tables.scd.tables"] {
	case "":
		return nil, &SCDConfigError{Message: "no SCD tables"}
	case "broken":
		return nil, errors.New("catalog: unreachable")
	}
	return []map[string]any{{"history": cfg["iceberg.tables.scd.tables"], "up_to_date": true}}, nil
}

// POST /connectd/connectors/{connector}/scd runs the connector's SCD tables with its stored config: 200 with the
// reports, the JVM's 404 for an unknown connector, 400 for a config without SCD tables, 500 when a run cannot
// start; without a materializer the path is unknown.
func TestSCDEndpoint(t *testing.T) {
	plain := newEnv(t, false)
	code, body := reconcileCall(t, plain, req{method: "POST", path: "/connectd/connectors/c/scd"})
	assert.Equal(t, 404, code)
	assert.Equal(t, `{"error_code":404,"message":"HTTP 404 Not Found"}`, body)

	e := newEnv(t, false, WithSCDMaterializer(fakeSCD{}))
	put := func(name string, extra map[string]string) {
		cfg := map[string]string{"name": name, "connector.class": "FileStreamSink", "topics": "t"}
		for k, v := range extra {
			cfg[k] = v
		}
		e.h.mu.Lock()
		e.h.configs[name] = cfg
		e.h.mu.Unlock()
	}
	put("with", map[string]string{"iceberg.tables.scd.tables": "db.history"})
	put("without", nil)
	put("broken", map[string]string{"iceberg.tables.scd.tables": "broken"})

	code, body = reconcileCall(t, e, req{method: "POST", path: "/connectd/connectors/with/scd"})
	assert.Equal(t, 200, code)
	assert.JSONEq(t, `[{"history":"db.history","up_to_date":true}]`, body)
	code, body = reconcileCall(t, e, req{method: "POST", path: "/connectd/connectors/missing/scd"})
	assert.Equal(t, 404, code)
	assert.Equal(t, `{"error_code":404,"message":"Connector missing not found"}`, body)
	code, body = reconcileCall(t, e, req{method: "POST", path: "/connectd/connectors/without/scd"})
	assert.Equal(t, 400, code)
	assert.Equal(t, `{"error_code":400,"message":"no SCD tables"}`, body)
	code, body = reconcileCall(t, e, req{method: "POST", path: "/connectd/connectors/broken/scd"})
	assert.Equal(t, 500, code)
	assert.Equal(t, `{"error_code":500,"message":"catalog: unreachable"}`, body)
	code, _ = reconcileCall(t, e, req{method: "GET", path: "/connectd/connectors/with/scd"})
	assert.Equal(t, 405, code)
}
