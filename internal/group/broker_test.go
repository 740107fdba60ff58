package group

import (
	"testing"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

func bootstrap(t *testing.T) string { return kafkatest.Bootstrap(t) }
