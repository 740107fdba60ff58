package worker_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/configprovider"
	"github.com/connectd/connectd/internal/worker"
)

// A worker key naming a provider class this worker does not implement stops the worker from starting,
// with the key and class in the message.
func TestParseConfigRefusesUnknownProviderClass(t *testing.T) {
	_, err := worker.ParseConfig(map[string]string{
		"config.providers":             "vault",
		"config.providers.vault.class": "com.github.jcustenborder.kafka.config.vault.VaultConfigProvider",
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.providers.vault.class")
	assert.Contains(t, err.Error(), "com.github.jcustenborder.kafka.config.vault.VaultConfigProvider")
}

// Worker properties are resolved with the providers they declare (the JVM's AbstractConfig); a provider
// failure is a start-up error.
func TestParseConfigResolvesWorkerProperties(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(f, []byte("flush=1234\npw=s3cr3t\n"), 0o600))
	props := map[string]string{
		"config.providers":            "file",
		"config.providers.file.class": configprovider.FileClass,
		"offset.flush.interval.ms":    "${file:" + f + ":flush}",
		"consumer.sasl.jaas.config":   "x password=\"${file:" + f + ":pw}\";",
		"key.converter":               "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":             "org.apache.kafka.connect.storage.StringConverter",
	}
	cfg, err := worker.ParseConfig(props)
	require.NoError(t, err)
	assert.Equal(t, int64(1234), cfg.OffsetFlushInterval.Milliseconds())
	assert.Equal(t, "x password=\"s3cr3t\";", cfg.ClientProps("consumer")["sasl.jaas.config"])
	assert.Equal(t, []string{"file"}, cfg.Providers.Providers())
	assert.Equal(t, "${file:"+f+":flush}", props["offset.flush.interval.ms"], "the caller's map is not changed")

	props["offset.flush.interval.ms"] = "${file:" + dir + "/missing.properties:flush}"
	_, err = worker.ParseConfig(props)
	assert.ErrorContains(t, err, "Could not read properties from file "+dir+"/missing.properties")
}

func TestRedactConfig(t *testing.T) {
	def := connect.NewConfigDef().Define(connect.ConfigKey{Name: "auth", Type: connect.ConfigPassword, Default: ""})
	got := worker.RedactConfig(map[string]string{
		"auth": "a", "password": "b", "iceberg.catalog.jdbc.password": "c", "consumer.override.sasl.jaas.config": "d",
		"value.converter.basic.auth.user.info": "e", "ssl.keystore.key": "f", "s3.secret-access-key": "g",
		"file": "/tmp/out", "topics": "t",
	}, []*connect.ConfigDef{def, nil})
	for _, k := range []string{"auth", "password", "iceberg.catalog.jdbc.password", "consumer.override.sasl.jaas.config",
		"value.converter.basic.auth.user.info", "ssl.keystore.key", "s3.secret-access-key"} {
		assert.Equal(t, worker.Hidden, got[k], k)
	}
	assert.Equal(t, "/tmp/out", got["file"])
	assert.Equal(t, "file = /tmp/out, topics = t", worker.FormatConfig(map[string]string{"topics": "t", "file": "/tmp/out"}))
}
