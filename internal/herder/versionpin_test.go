package herder_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/herder"
)

func icebergConfig(pin string) map[string]string {
	return map[string]string{
		"name": "ice", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "topics": "t",
		"iceberg.tables": "db.t", "iceberg.catalog.catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
		"iceberg.catalog.uri": "jdbc:sqlite:/tmp/never-opened.db", "iceberg.catalog.warehouse": "/tmp/wh",
		"connector.plugin.version": pin,
	}
}

// TestValidateConnectorVersionPin: a connector.plugin.version pin (KIP-891, Maven version-range syntax) that the
// Iceberg plugin's 1.10.1 satisfies validates as without one; one it does not is refused as the JVM refuses it
// (AbstractHerder.invalidVersionedConnectorValidation): 200 with the plugin loader's error on connector.class
// and on the pin, only the keys of every connector, the installed version recommended; create answers 400 with
// those errors. A pin that is no version range is a 400 with Maven's message.
func TestValidateConnectorVersionPin(t *testing.T) {
	v := &herder.Validator{Registry: testRegistry()}
	for _, pin := range []string{"1.10.1", "[1.10.1]", "[1.0,2.0)", "(,1.10.1]", "[1.10,)", "latest"} {
		infos, err := v.Validate(icebergConfig(pin))
		require.NoError(t, err, pin)
		for _, c := range infos.Configs {
			assert.Empty(t, c.Value.Errors, "%s: %s", pin, c.Definition.Name)
		}
		assert.NoError(t, herder.ValidationError(infos), pin)
	}

	for pin, printed := range map[string]string{
		"1.10.0":    "[1.10.0,1.10.0]",
		"[2.0,3.0)": "[2.0,3.0)",
		"(,1.10.1)": "(,1.10.1)",
		"1.10":      "[1.10,1.10]",
	} {
		infos, err := v.Validate(icebergConfig(pin))
		require.NoError(t, err, pin)
		msg := "Plugin org.apache.iceberg.connect.IcebergSinkConnector not found that matches the version range " + printed + ", available versions: [1.10.1]"
		assert.Equal(t, 2, infos.ErrorCount, pin)
		errs := map[string][]string{}
		var names []string
		for _, c := range infos.Configs {
			names = append(names, c.Definition.Name)
			if len(c.Value.Errors) > 0 {
				errs[c.Definition.Name] = c.Value.Errors
			}
			if c.Definition.Name == "connector.plugin.version" {
				assert.Equal(t, []string{"1.10.1"}, c.Value.RecommendedValues, pin)
				assert.Equal(t, "1.10.1", *c.Definition.DefaultValue, pin)
			}
		}
		assert.Equal(t, map[string][]string{"connector.class": {msg}, "connector.plugin.version": {msg}}, errs, pin)
		assert.NotContains(t, names, "topics", "the sink's keys are not validated past an unmatched pin")
		assert.NotContains(t, names, "iceberg.tables", "the connector's keys are not validated past an unmatched pin")
		assert.Contains(t, names, "errors.tolerance")

		err = herder.ValidationError(infos)
		var re *herder.RestError
		require.True(t, errors.As(err, &re), pin)
		assert.Equal(t, 400, re.Status)
		assert.Equal(t, "Connector configuration is invalid and contains the following 2 error(s):\n"+msg+"\n"+msg+"\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`", re.Message)
	}

	for pin, msg := range map[string]string{
		"[1.0":        "Unbounded range: [1.0",
		"[2.0,1.0]":   "Range defies version ordering: [2.0,1.0]",
		"(1.10.1]":    "Single version must be surrounded by []: (1.10.1]",
		"[1,2],[1,3]": "Ranges overlap: [1,2],[1,3]",
	} {
		_, err := v.Validate(icebergConfig(pin))
		var re *herder.RestError
		require.True(t, errors.As(err, &re), "%s: %v", pin, err)
		assert.Equal(t, 400, re.Status, pin)
		assert.Equal(t, msg, re.Message, pin)
	}
}
