package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/plugins"
	"github.com/connectd/connectd/internal/worker"
)

// A restore drill key or file the worker cannot use stops standalone and distributed starts with the reason.
func TestWorkerRestoreDrillConfigRefusesStart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	base := "iceberg.catalog.type=sql\niceberg.catalog.uri=jdbc:sqlite:" + filepath.Join(dir, "c.db") +
		"\niceberg.table=cdc.customers\nclickhouse.hostname=127.0.0.1\nclickhouse.database=shop\nclickhouse.table=customers\n"
	good := write("good.properties", base+"drill.namespace=drill\ndrill.clickhouse.database=shop_drill\n")
	noSpare := write("no-spare.properties", base)
	missing := filepath.Join(dir, "missing.properties")
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{worker.RestoreDrillConfigsKey: missing}, missing},
		{map[string]string{worker.RestoreDrillConfigsKey: good + "," + noSpare}, noSpare + ": drill.namespace is required"},
		{map[string]string{worker.RestoreDrillConfigsKey: good, worker.RestoreDrillIntervalKey: "0"}, worker.RestoreDrillIntervalKey},
		{map[string]string{"connectd.restore-drill.config": good}, "unknown worker key connectd.restore-drill.config"},
	} {
		for _, distributed := range []bool{false, true} {
			p := map[string]string{"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "config.storage.topic": "c",
				"offset.storage.topic": "o", "status.storage.topic": "s",
				"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
				"listeners": "http://127.0.0.1:" + strconv.Itoa(freePort(t))}
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
		}
	}
	cfg, err := worker.ParseConfig(map[string]string{"key.converter": "x", "value.converter": "y", worker.RestoreDrillConfigsKey: good})
	require.NoError(t, err)
	require.Equal(t, int64(86400000), cfg.RestoreDrillInterval.Milliseconds())
	run, err := workerRestoreDrills(cfg)
	require.NoError(t, err)
	require.NotNil(t, run)
}
