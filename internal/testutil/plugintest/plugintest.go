// Package plugintest builds the plugin registries of tests that run the worker, herder or REST layer with
// every built-in plugin.
package plugintest

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/plugins"
	"github.com/connectd/connectd/internal/testutil/sinktest"
)

// Registry returns the built-in plugins, sinktest's connector and converters, and extra.
func Registry(extra ...connect.Plugin) *connect.Registry {
	r := plugins.Builtin()
	for _, ps := range [][]connect.Plugin{sinktest.Plugins(), extra} {
		for _, p := range ps {
			r.Register(p)
		}
	}
	return r
}
