// Package chshimtest is the ClickHouse server of a test process: the shared chDB session (chdbtest) behind one
// native-protocol test shim (chshim) that sinks and commands connect to over loopback.
package chshimtest

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

var (
	mu   sync.Mutex
	shim *chshim.Server
)

// Engine is the shared session and the shim serving it, started on first use.
func Engine(t testing.TB) (*chdb.Session, *chshim.Server) {
	t.Helper()
	s := chdbtest.Session(t)
	mu.Lock()
	defer mu.Unlock()
	if shim == nil {
		srv := chshim.New(s)
		require.NoError(t, srv.Start())
		shim = srv
	}
	return s, shim
}

// Close stops the shim and the engine; call it from TestMain after m.Run.
func Close() {
	mu.Lock()
	if shim != nil {
		_ = shim.Close()
		shim = nil
	}
	mu.Unlock()
	chdbtest.Close()
}
