package dlq

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// task.class names a task class, never the connector class with a suffix that no JVM could load.
func TestTaskClassNamesTheTask(t *testing.T) {
	p, ok := connect.NewRegistry(Plugins()).Lookup(Class)
	require.True(t, ok)
	c := p.New().(*Connector)
	require.NoError(t, c.Start(map[string]string{"connector.class": Class, ConfigTopic: "t", ConfigBootstrap: "127.0.0.1:9092"}))
	require.Equal(t, "io.connectd.connect.dlq.DeadLetterSinkTask", connect.JVMTaskClasser(c).TaskClass())
}
