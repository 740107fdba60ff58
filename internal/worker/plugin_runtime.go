package worker

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
	"github.com/connectd/connectd/internal/metrics"
)

// pluginRuntime is what connectors and tasks get of the worker beyond their configuration: the
// worker's metrics registry and its Kafka client factory (connect.PluginRuntime).
type pluginRuntime struct{}

func (pluginRuntime) PluginMetrics() connect.PluginMetrics { return metrics.Plugins }
func (pluginRuntime) KafkaClients() connect.KafkaClients   { return kafka.PluginClients{} }

var (
	_ connect.PluginRuntime = (*connectorCtx)(nil)
	_ connect.PluginRuntime = (*taskContext)(nil)
)
