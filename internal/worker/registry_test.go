package worker_test

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/plugintest"
)

// testRegistry holds the built-in plugins, sinktest's and this package's test sinks.
func testRegistry() *connect.Registry {
	return plugintest.Registry(metadataSinkPlugin, sharingSinkPlugin, modelSinkPlugin)
}
