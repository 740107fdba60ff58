// Package iceberg is the Iceberg sink: org.apache.iceberg.connect.IcebergSinkConnector (and the
// Tabular io.tabular.iceberg.connect.IcebergSinkConnector), on github.com/apache/iceberg-go.
//
// Append mode is the default. With id columns and upsert mode, a cdc-field, or Debezium
// change events, the sink writes equality deletes plus inserts in one row-delta snapshot per
// table and commit, after collapsing each key to its newest version (see table.go); commits
// are exactly-once (see coordinator.go).
package iceberg

import (
	"strings"

	"github.com/connectd/connectd/connect"
)

func init() {
	connect.Register(connect.Plugin{Class: ApacheClass, Aliases: []string{TabularClass}, Type: connect.PluginSink,
		Version: Version, New: func() any { return &Connector{} }})
}

// Connector is the sink connector.
type Connector struct {
	connect.ConnectorBase
	props map[string]string
}

func (c *Connector) Version() string               { return Version }
func (c *Connector) ConfigDef() *connect.ConfigDef { return ConfigDef() }

// Start validates the configuration (and that the catalog properties are usable).
func (c *Connector) Start(props map[string]string) error {
	if _, err := ParseConfig(props); err != nil {
		return err
	}
	c.props = props
	return nil
}

// TaskConfigs gives every task the connector's properties.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return connect.ReplicateTaskConfigs(c.props, maxTasks), nil
}

func (c *Connector) Stop() error { return nil }

// Task classes of the JVM sinks, written as task.class so that JVM workers sharing the cluster load the tasks.
const (
	ApacheTaskClass  = "org.apache.iceberg.connect.IcebergSinkTask"
	TabularTaskClass = "io.tabular.iceberg.connect.IcebergSinkTask"
)

// TaskClass is the task class of the sink the configuration names: Tabular's for Tabular's connector class,
// else Apache's.
func (c *Connector) TaskClass() string {
	if strings.TrimSpace(c.props["connector.class"]) == TabularClass {
		return TabularTaskClass
	}
	return ApacheTaskClass
}

var _ connect.JVMTaskClasser = (*Connector)(nil)

func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

// Validate adds the cross-key checks of ParseConfig to /config/validate.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	if _, err := ParseConfig(props); err != nil {
		if ce, ok := err.(*connect.ConfigError); ok && ce.Name != "" {
			return []connect.ConfigValue{{Name: ce.Name, Value: props[ce.Name], Errors: []string{ce.Message}, Visible: true}}
		}
	}
	return nil
}

var _ connect.ConfigValidator = (*Connector)(nil)
