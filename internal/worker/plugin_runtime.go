package worker

import (
	"os"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/metrics"
)

// pluginRuntime is what connectors and tasks get of the worker beyond their configuration: the
// worker's metrics registry and its Kafka client factory (connect.PluginRuntime). The contexts add the
// worker's scratch directory and shared values.
type pluginRuntime struct{}

func (pluginRuntime) PluginMetrics() connect.PluginMetrics { return metrics.Plugins }
func (pluginRuntime) KafkaClients() connect.KafkaClients   { return kafka.PluginClients{} }

// SharedValues are the worker's: every connector and task on it shares them, and no other worker does.
func (c *connectorCtx) SharedValues() *connect.SharedValues { return &c.w.shared }
func (c *taskContext) SharedValues() *connect.SharedValues  { return &c.st.w.shared }

func (c *connectorCtx) ScratchDir() string { return c.w.cfg.scratchDir() }
func (c *taskContext) ScratchDir() string  { return c.st.w.cfg.scratchDir() }

// scratchDir is ScratchDir, or os.TempDir for a Config not made by ParseConfig.
func (c *Config) scratchDir() string {
	if c.ScratchDir == "" {
		return os.TempDir()
	}
	return c.ScratchDir
}

var (
	_ connect.PluginRuntime = (*connectorCtx)(nil)
	_ connect.PluginRuntime = (*taskContext)(nil)
	_ connect.ScratchSpace  = (*connectorCtx)(nil)
	_ connect.ScratchSpace  = (*taskContext)(nil)
	_ connect.WorkerValues  = (*connectorCtx)(nil)
	_ connect.WorkerValues  = (*taskContext)(nil)
)
