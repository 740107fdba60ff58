package clickhouse

import (
	"context"
	"crypto/x509"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// Tests run the sink over the native protocol (ch-go) against the chDB test shim, i.e. the real
// ClickHouse 26.7 engine behind a loopback native-protocol TEST SHIM (internal/testutil/chdb/chshim). Every
// connection of a task started by startTask is redirected to the shim by toShim, so configurations are used
// unchanged.

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range []*chshim.Server{shimPlain, shimTLS} {
		if s != nil {
			_ = s.Close()
		}
	}
	kafkatest.Stop()
	chdbtest.Close()
	os.Exit(code)
}

var (
	shimOnce  sync.Once
	shimPlain *chshim.Server
	shimTLS   *chshim.Server
	shimCAs   *x509.CertPool
	shimErr   error
)

const shimServerName = "chshim.test"

func engine(t testing.TB) (*chdb.Session, *chshim.Server) {
	t.Helper()
	s := chdbtest.Session(t)
	shimOnce.Do(func() {
		shimPlain = chshim.New(s)
		if shimErr = shimPlain.Start(); shimErr != nil {
			return
		}
		tlsCfg, pool, err := chshim.SelfSignedTLS(shimServerName)
		if err != nil {
			shimErr = err
			return
		}
		shimCAs = pool
		shimTLS = chshim.New(s)
		if shimErr = shimTLS.StartTLS(tlsCfg); shimErr != nil {
			return
		}
	})
	require.NoError(t, shimErr)
	return s, shimPlain
}

// toShim is the Task.dialOptions of the tests: TLS connections go to the TLS shim (trusting its certificate),
// the others to the plain one. Before engine has started the shims, connections go where the configuration says.
func toShim(o *ch.Options) {
	if shimPlain == nil || shimTLS == nil {
		return
	}
	if o.TLS != nil {
		o.Address = shimTLS.Addr()
		o.TLS.RootCAs = shimCAs
		o.TLS.ServerName = shimServerName
		return
	}
	o.Address = shimPlain.Addr()
}

// taskCtx is a minimal SinkTaskContext with an optional dead-letter reporter.
type taskCtx struct {
	props map[string]string
	rep   connect.ErrantRecordReporter
}

func (c *taskCtx) Configs() map[string]string                         { return c.props }
func (c *taskCtx) Offset(map[connect.TopicPartition]int64)            {}
func (c *taskCtx) Timeout(time.Duration)                              {}
func (c *taskCtx) Assignment() []connect.TopicPartition               { return nil }
func (c *taskCtx) Pause(...connect.TopicPartition)                    {}
func (c *taskCtx) Resume(...connect.TopicPartition)                   {}
func (c *taskCtx) RequestCommit()                                     {}
func (c *taskCtx) ErrantRecordReporter() connect.ErrantRecordReporter { return c.rep }

// deadLetters records reported records like a DLQ would.
type deadLetters struct {
	mu   sync.Mutex
	recs []*connect.SinkRecord
	errs []error
}

func (d *deadLetters) Report(_ context.Context, r *connect.SinkRecord, err error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.recs = append(d.recs, r)
	d.errs = append(d.errs, err)
	return nil
}

func props(db string, kv ...string) map[string]string {
	p := map[string]string{"hostname": "clickhouse.local", "port": "9000", "database": db, "retryCount": "2"}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

func startTask(t testing.TB, p map[string]string, rep connect.ErrantRecordReporter) *Task {
	t.Helper()
	conn := &Connector{}
	require.NoError(t, conn.Start(p))
	cfgs, err := conn.TaskConfigs(1)
	require.NoError(t, err)
	task := conn.NewTask().(*Task)
	task.dialOptions = toShim
	task.Initialize(&taskCtx{props: cfgs[0], rep: rep})
	require.NoError(t, task.Start(cfgs[0]))
	t.Cleanup(func() { _ = task.Stop() })
	return task
}

func query(t testing.TB, s *chdb.Session, sql string) string {
	t.Helper()
	return chdbtest.MustQuery(t, s, sql)
}
