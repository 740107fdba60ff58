package reconcile

import (
	"os"
	"testing"

	"github.com/connectd/connectd/internal/testutil/chdb/chshimtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	kafkatest.Stop()
	chshimtest.Close()
	os.Exit(code)
}

// The ClickHouse engine is chDB in this process, behind the native-protocol test server that the sink and
// reconcile connect to.
var clickhouseEngine = chshimtest.Engine
