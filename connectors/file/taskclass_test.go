package file

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// JVM workers in the same cluster load task configs by task.class: it has to be the JVM's task class.
func TestTaskClassIsTheJVMs(t *testing.T) {
	p, ok := connect.NewRegistry(Plugins()).Lookup(Class)
	require.True(t, ok)
	c := p.New().(*Connector)
	require.NoError(t, c.Start(map[string]string{"connector.class": "FileStreamSink", "file": "/dev/null"}))
	require.Equal(t, "org.apache.kafka.connect.file.FileStreamSinkTask", connect.JVMTaskClasser(c).TaskClass())
}
