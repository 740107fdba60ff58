package herder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	_ "github.com/connectd/connectd/connect/transforms"
	_ "github.com/connectd/connectd/connectors/file"
	_ "github.com/connectd/connectd/converters/jsonconv"
	_ "github.com/connectd/connectd/converters/str"
	"github.com/connectd/connectd/internal/herder"
)

func validateErrors(t *testing.T, config map[string]string) (int, map[string][]string) {
	t.Helper()
	v := &herder.Validator{Registry: connect.DefaultRegistry}
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
