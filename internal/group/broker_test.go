package group

import (
	"os"
	"testing"
)

// bootstrap is the broker for integration tests: KAFKA_BOOTSTRAP, as `make test` sets it.
// TODO: switch to internal/testutil/kafkatest.Bootstrap(t) once it lands (it starts a broker when unset).
func bootstrap(t *testing.T) string {
	if a := os.Getenv("KAFKA_BOOTSTRAP"); a != "" {
		return a
	}
	t.Skip("KAFKA_BOOTSTRAP not set (kafkatest helper pending)")
	return ""
}
