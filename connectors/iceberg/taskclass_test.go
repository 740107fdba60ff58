package iceberg

import (
	"regexp"
	"strconv"
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
		p, ok := connect.NewRegistry(Plugins()).Lookup(class)
		require.True(t, ok, class)
		c := p.New().(*Connector)
		require.NoError(t, c.Start(map[string]string{"connector.class": class, "name": "n", KeyTables: "x.y",
			"iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:/nonexistent/cat.db",
			"iceberg.catalog.warehouse": "file:///nonexistent"}))
		require.Equal(t, want, connect.JVMTaskClasser(c).TaskClass(), class)
	}
}

// TestTaskConfigsAsTheApacheSink: task configs carry what the Apache sink's tasks read (a JVM worker sharing the
// connector names its transactional ids after them: without a suffix every JVM task would use "workernull" and
// fence the others), in the JVM's format, stable across calls and distinct across connectors.
func TestTaskConfigsAsTheApacheSink(t *testing.T) {
	gen := func(name string) []map[string]string {
		props, _ := sinkProps(t, map[string]string{"name": name, "topics": "t", "iceberg.tables": "a.b"})
		c := &Connector{}
		require.NoError(t, c.Start(props))
		cfgs, err := c.TaskConfigs(3)
		require.NoError(t, err)
		return cfgs
	}
	a := gen("orders")
	suffix := regexp.MustCompile(`^-txn-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-([0-9]+)$`)
	for i, m := range a {
		require.Equal(t, strconv.Itoa(i), m["task.id"])
		g := suffix.FindStringSubmatch(m[KeyTxnSuffix])
		require.NotNil(t, g, m[KeyTxnSuffix])
		require.Equal(t, strconv.Itoa(i), g[1])
	}
	b := gen("orders")
	for i := range a {
		require.Equal(t, a[i][KeyTxnSuffix], b[i][KeyTxnSuffix], "the same connector gets the same task configs")
	}
	require.NotEqual(t, a[0][KeyTxnSuffix], gen("payments")[0][KeyTxnSuffix])
}
