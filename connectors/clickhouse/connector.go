// Package clickhouse is a ClickHouse sink connector over the native TCP protocol (github.com/ClickHouse/ch-go),
// configuration-compatible with ClickHouse's official Kafka Connect sink; docs/guides/clickhouse-sink.md is its
// user guide, docs/design/clickhouse-sink.md its design.
package clickhouse

import (
	"log/slog"

	"github.com/connectd/connectd/connect"
)

// Class is the official sink's class name, so that existing configurations work unchanged.
const Class = "com.clickhouse.kafka.connect.ClickHouseSinkConnector"

// Version of the connector.
const Version = "0.1.0"

// Plugins lists the sink connector, for a runtime's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{Class: Class, Type: connect.PluginSink, Version: Version,
		Aliases: []string{"ClickHouseNativeSink"}, New: func() any { return &Connector{} }}}
}

// Connector is the ClickHouse sink connector.
type Connector struct {
	connect.ConnectorBase
	props map[string]string
	note  string // what the connector adjusted in its config, for its status
}

var _ connect.SinkConnector = (*Connector)(nil)
var _ connect.PreCommitter = (*Task)(nil)

// Version implements connect.Versioned.
func (c *Connector) Version() string { return Version }

// ConfigDef implements connect.Configurable.
func (c *Connector) ConfigDef() *connect.ConfigDef { return configDef() }

// Start implements connect.Connector.
func (c *Connector) Start(props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	c.props, c.note = props, cfg.PortNote
	if c.note != "" {
		slog.Warn(c.note, "connector", props["name"])
	}
	return nil
}

// StatusNote implements connect.StatusNoter: a mapped HTTP interface port.
func (c *Connector) StatusNote() string { return c.note }

var _ connect.StatusNoter = (*Connector)(nil)

// TaskConfigs implements connect.Connector.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return connect.ReplicateTaskConfigs(c.props, maxTasks), nil
}

// Stop implements connect.Connector.
func (c *Connector) Stop() error { return nil }

// TaskClass is the official sink's task class, written as task.class so that JVM workers sharing the cluster
// load the tasks.
const TaskClass = "com.clickhouse.kafka.connect.sink.ClickHouseSinkTask"

// TaskClass implements connect.JVMTaskClasser.
func (c *Connector) TaskClass() string { return TaskClass }

var _ connect.JVMTaskClasser = (*Connector)(nil)

// NewTask implements connect.SinkConnector.
func (c *Connector) NewTask() connect.SinkTask { return &Task{} }
