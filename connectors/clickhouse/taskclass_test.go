package clickhouse

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// JVM workers in the same cluster load task configs by task.class: it has to be the official sink's task class.
func TestTaskClassIsTheJVMs(t *testing.T) {
	p, ok := connect.NewRegistry(Plugins()).Lookup(Class)
	require.True(t, ok)
	c := p.New().(*Connector)
	require.NoError(t, c.Start(map[string]string{"connector.class": Class, "hostname": "h"}))
	require.Equal(t, "com.clickhouse.kafka.connect.sink.ClickHouseSinkTask", connect.JVMTaskClasser(c).TaskClass())
}
