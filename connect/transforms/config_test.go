package transforms

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// TestBadConfigs checks ConfigException messages as the JVM words them.
func TestBadConfigs(t *testing.T) {
	cases := []struct {
		class string
		props map[string]string
		msg   string
	}{
		{kt + "Cast$Value", map[string]string{}, `Missing required configuration "spec" which has no default value.`},
		{kt + "Cast$Value", map[string]string{"spec": "a:bytes"}, "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"},
		{kt + "Cast$Value", map[string]string{"spec": "a:foo"}, "Invalid type found in casting spec: foo"},
		{kt + "Cast$Value", map[string]string{"spec": "int32,a:int8"}, "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec"},
		{kt + "ReplaceField$Value", map[string]string{"renames": "a:b:c"}, "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"},
		{kt + "InsertField$Value", map[string]string{}, "No field insertion configured"},
		{kt + "SetSchemaMetadata$Value", map[string]string{}, "Neither schema name nor version configured"},
		{kt + "HeaderFrom$Value", map[string]string{"fields": "a,b", "headers": "x", "operation": "copy"}, "'fields' config must have the same number of elements as 'headers' config."},
		{kt + "HeaderFrom$Value", map[string]string{"fields": "a", "headers": "x", "operation": "swap"}, "Invalid value swap for configuration operation: String must be one of: move, copy"},
		{kt + "TimestampConverter$Value", map[string]string{"target.type": "string"}, "TimestampConverter requires format option to be specified when using string timestamps"},
		{kt + "MaskField$Value", map[string]string{"fields": ""}, "Invalid value [] for configuration fields: Empty list"},
		{kt + "ExtractField$Value", map[string]string{"field": "`a.b", "field.syntax.version": "V2"}, "Incomplete backtick pair in path: [`a.b], consider adding a backslash before backtick at position 0 to escape it"},
	}
	for _, c := range cases {
		tr, err := connect.NewRegistry(Plugins()).NewTransformation(c.class)
		require.NoError(t, err)
		err = tr.Configure(c.props)
		require.Error(t, err, c.class)
		assert.Equal(t, c.msg, err.Error(), c.class)
		assert.Equal(t, "org.apache.kafka.common.config.ConfigException", connect.ErrorClassName(err))
	}
}
