package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/plugins"
	"github.com/connectd/connectd/internal/worker"
)

// A reconcile key or file the worker cannot use stops standalone and distributed starts with the reason,
// before any listener is bound.
func TestWorkerReconcileConfigRefusesStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	good := write("good.properties", "iceberg.catalog.type=sql\niceberg.catalog.uri=jdbc:sqlite:"+filepath.Join(dir, "c.db")+
		"\niceberg.table=cdc.customers\nclickhouse.hostname=127.0.0.1\nclickhouse.table=customers\n")
	noTable := write("no-table.properties", "iceberg.catalog.type=sql\niceberg.catalog.uri=jdbc:sqlite:x.db\nclickhouse.table=customers\n")
	badBuckets := write("bad-buckets.properties", "iceberg.catalog.type=sql\niceberg.catalog.uri=jdbc:sqlite:x.db\n"+
		"iceberg.table=cdc.customers\nclickhouse.hostname=h\nclickhouse.table=customers\nbuckets=many\n")
	missing := filepath.Join(dir, "missing.properties")
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{worker.ReconcileConfigsKey: missing}, missing},
		{map[string]string{worker.ReconcileConfigsKey: good + "," + noTable}, noTable + ": iceberg.table is required"},
		{map[string]string{worker.ReconcileConfigsKey: badBuckets}, `buckets="many"`},
		{map[string]string{worker.ReconcileConfigsKey: good, worker.ReconcileIntervalKey: "-1"}, worker.ReconcileIntervalKey},
		{map[string]string{worker.ReconcileConfigsKey: good, worker.ReconcileIntervalKey: "5m"}, worker.ReconcileIntervalKey},
		{map[string]string{"connectd.reconcile.config": good}, "unknown worker key connectd.reconcile.config"},
	} {
		for _, distributed := range []bool{false, true} {
			port := freePort(t)
			p := map[string]string{"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "config.storage.topic": "c",
				"offset.storage.topic": "o", "status.storage.topic": "s",
				"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
				"listeners": "http://127.0.0.1:" + strconv.Itoa(port)}
			for k, v := range tc.props {
				p[k] = v
			}
			var err error
			if distributed {
				err = serveDistributed(context.Background(), plugins.Builtin(), p)
			} else {
				err = serveStandalone(context.Background(), plugins.Builtin(), p, nil, nil)
			}
			require.ErrorContains(t, err, tc.want, "%v distributed=%v", tc.props, distributed)
			require.ErrorContains(t, err, "invalid worker config")
			c, derr := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if derr == nil {
				c.Close()
			}
			require.Error(t, derr, "the REST listener must not be bound")
		}
	}
	// the good file alone is accepted
	cfg, err := worker.ParseConfig(map[string]string{"key.converter": "x", "value.converter": "y", worker.ReconcileConfigsKey: good})
	require.NoError(t, err)
	sched, err := workerReconcile(cfg)
	require.NoError(t, err)
	require.NotNil(t, sched)
	require.Equal(t, int64(300000), sched.Status().IntervalMS)
	require.Equal(t, good, sched.Status().Pairs[0].Config)
}
