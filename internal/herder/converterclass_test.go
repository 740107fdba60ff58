package herder_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/testutil/sinktest"
)

// A connector config naming an unknown converter class is refused on create and on replace with the JVM's 400
// "Connector configuration is invalid" answer, whose error is the CLASS key's parse error; nothing is stored.
func TestStandaloneUnknownConverterClass(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	name := "conv-sink"
	for _, key := range []string{"key.converter", "value.converter", "header.converter"} {
		cfg := sinkConfig("t", name, 1)
		cfg[key] = "com.example.NoSuchConverter"
		_, _, err := e.h.PutConnectorConfig(ctx, name, cfg, "", false)
		var re *herder.RestError
		require.True(t, errors.As(err, &re), "%s: %v", key, err)
		assert.Equal(t, 400, re.Status, key)
		assert.Equal(t, "Connector configuration is invalid and contains the following 1 error(s):\n"+
			"Invalid value com.example.NoSuchConverter for configuration "+key+": Class com.example.NoSuchConverter could not be found.\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`", re.Message, key)
	}
	_, err := e.h.ConnectorConfig(ctx, name)
	require.Error(t, err, "an invalid config is not stored")

	// replace (PUT /connectors/{name}/config) of a running connector
	e.create(name, sinkConfig("t", name, 1))
	bad := sinkConfig("t", name, 1)
	bad["value.converter"] = "com.example.NoSuchConverter"
	_, _, err = e.h.PutConnectorConfig(ctx, name, bad, "", true)
	var re *herder.RestError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, 400, re.Status)
	got, err := e.h.ConnectorConfig(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, sinktest.Class, got["connector.class"])
	assert.Empty(t, got["value.converter"], "the stored config is unchanged")
}
