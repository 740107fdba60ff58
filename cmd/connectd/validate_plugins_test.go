package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/plugins"
)

// Every built-in SMT and predicate validates with only its required keys reported: a key with a default,
// left unset, is never an error (validators run on the default, null included, as the JVM's do).
func TestValidateEveryTransformationDefaults(t *testing.T) {
	reg := plugins.Builtin()
	v := &herder.Validator{Registry: reg}
	n := 0
	for _, p := range reg.Plugins() {
		if p.Type != connect.PluginTransformation && p.Type != connect.PluginPredicate {
			continue
		}
		n++
		list := "transforms"
		if p.Type == connect.PluginPredicate {
			list = "predicates"
		}
		cfg := map[string]string{"name": "v", "connector.class": "FileStreamSink", "topics": "t",
			list: "a", list + ".a.type": p.Class}
		infos, err := v.Validate(cfg)
		require.NoError(t, err, p.Class)
		required := map[string]bool{}
		if c, ok := p.New().(connect.Configurable); ok && c.ConfigDef() != nil {
			for _, k := range c.ConfigDef().Keys() {
				if !k.HasDefault() {
					required[list+".a."+k.Name] = true
				}
			}
		}
		for _, c := range infos.Configs {
			name := c.Definition.Name
			if len(c.Value.Errors) == 0 {
				continue
			}
			assert.True(t, required[name], "%s: %s: %v", p.Class, name, c.Value.Errors)
			assert.True(t, strings.HasPrefix(c.Value.Errors[0], `Missing required configuration "`+name+`"`), "%s: %v", p.Class, c.Value.Errors)
		}
	}
	// Kafka's 16 SMTs as 26 classes ($Key/$Value), 3 predicates, ExtractNewRecordState, 6 Iceberg SMTs
	assert.Equal(t, 26+3+1+6, n, "transformations and predicates registered")
}
