// Package security holds the end-to-end tests of a secured worker: HTTPS and basic authentication on the REST
// API, and every Kafka client the worker opens over SASL_SSL and OAUTHBEARER, on connectd processes started
// through internal/testutil/workerproc.
package security

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }
