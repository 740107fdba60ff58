// Package iceberg is the Iceberg sink: org.apache.iceberg.connect.IcebergSinkConnector (and the
// Tabular io.tabular.iceberg.connect.IcebergSinkConnector), on github.com/apache/iceberg-go.
//
// Append mode is the default. With id columns and upsert mode, a cdc-field, or Debezium
// change events, the sink writes equality deletes plus inserts in one row-delta snapshot per
// table and commit, after collapsing each key to its newest version (see icetable/table.go). Package
// commit runs the commit rounds, exactly-once (see commit/local.go); this package holds the connector, the
// task, the config, the metrics and the wiring between them.
package iceberg

import (
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
)

// Plugins lists the sink connector, for a runtime's registry (its SMTs are package transforms' Plugins).
func Plugins() []connect.Plugin {
	return []connect.Plugin{{Class: ApacheClass, Aliases: []string{TabularClass}, Type: connect.PluginSink,
		Version: Version, New: func() any { return &Connector{} }}}
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

// TaskConfigs gives every task the connector's properties plus what the Apache sink's tasks read from their
// config: task.id and the suffix of their transactional ids (JVM workers sharing the connector name their
// control-topic producers after it). The JVM draws the suffix's UUID at random per call; here it is derived
// from the connector's name, so task configs do not change each time they are generated, and a restarted
// task fences its predecessor and ends the transaction it left open instead of leaving it to time out.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	cfgs := connect.ReplicateTaskConfigs(c.props, maxTasks)
	suffix := "-txn-" + uuid.NewSHA1(uuid.NameSpaceURL, []byte("connectd:iceberg:"+c.props["name"])).String() + "-"
	for i, m := range cfgs {
		m[KeyTxnSuffix] = suffix + strconv.Itoa(i)
		m["task.id"] = strconv.Itoa(i)
	}
	return cfgs, nil
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
