package herder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
)

func validateErrors(t *testing.T, config map[string]string) (int, map[string][]string) {
	t.Helper()
	v := &herder.Validator{Registry: testRegistry()}
	infos, err := v.Validate(config)
	require.NoError(t, err)
	errs := map[string][]string{}
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			errs[c.Definition.Name] = c.Value.Errors
		}
	}
	return infos.ErrorCount, errs
}

// An SMT's own key that ends in ".type" (TimestampConverter's target.type) is a plain string, not a class.
func TestValidateTimestampConverterTargetType(t *testing.T) {
	n, errs := validateErrors(t, map[string]string{
		"name": "d", "connector.class": "FileStreamSink", "topics": "t", "file": "/dev/null",
		"transforms": "ts", "transforms.ts.type": "org.apache.kafka.connect.transforms.TimestampConverter$Value",
		"transforms.ts.field": "ts", "transforms.ts.target.type": "unix",
	})
	assert.Equal(t, 0, n, "%v", errs)
}

// A converter key naming a class the worker cannot load is a validation error of that key, not a failure of the
// request (the JVM's ConfigDef.parseType for a CLASS key).
func TestValidateUnknownConverterClass(t *testing.T) {
	for _, key := range []string{"key.converter", "value.converter", "header.converter"} {
		t.Run(key, func(t *testing.T) {
			n, errs := validateErrors(t, map[string]string{
				"name": "d", "connector.class": "FileStreamSink", "topics": "t", "file": "/dev/null",
				key: "com.example.NoSuchConverter",
			})
			assert.Equal(t, 1, n, "%v", errs)
			assert.Equal(t, []string{"Invalid value com.example.NoSuchConverter for configuration " + key +
				": Class com.example.NoSuchConverter could not be found."}, errs[key])
		})
	}
}
