package iceberg

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// JVM workers in the same cluster load task configs by task.class: it is the task class of the sink the
// configuration names (Apache's, or Tabular's for Tabular's connector class).
func TestTaskClassIsTheJVMs(t *testing.T) {
	for class, want := range map[string]string{
		ApacheClass:  "org.apache.iceberg.connect.IcebergSinkTask",
		TabularClass: "io.tabular.iceberg.connect.IcebergSinkTask",
	} {
		p, ok := connect.DefaultRegistry.Lookup(class)
		require.True(t, ok, class)
		c := p.New().(*Connector)
		require.NoError(t, c.Start(map[string]string{"connector.class": class, "name": "n", KeyTables: "x.y",
			"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:/nonexistent/cat.db",
			"iceberg.catalog.warehouse": "file:///nonexistent"}))
		require.Equal(t, want, connect.JVMTaskClasser(c).TaskClass(), class)
	}
}
