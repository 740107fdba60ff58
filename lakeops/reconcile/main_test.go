package reconcile

import (
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shim != nil {
		_ = shim.Close()
	}
	kafkatest.Stop()
	chdbtest.Close()
	os.Exit(code)
}

// The ClickHouse engine is chDB in this process, behind the native-protocol test server that the sink and
// reconcile connect to.
var (
	shimOnce sync.Once
	shim     *chshim.Server
	shimErr  error
)

func clickhouseEngine(t testing.TB) (*chdb.Session, *chshim.Server) {
	s := chdbtest.Session(t)
	shimOnce.Do(func() {
		shim = chshim.New(s)
		shimErr = shim.Start()
	})
	require.NoError(t, shimErr)
	return s, shim
}
