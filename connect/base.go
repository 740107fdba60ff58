package connect

import "context"

// SinkTaskBase gives a SinkTask the JVM's default method bodies; embed it and override what you need.
type SinkTaskBase struct{ Ctx SinkTaskContext }

func (b *SinkTaskBase) Initialize(ctx SinkTaskContext)        { b.Ctx = ctx }
func (*SinkTaskBase) Open(partitions []TopicPartition) error  { return nil }
func (*SinkTaskBase) Close(partitions []TopicPartition) error { return nil }
func (*SinkTaskBase) Flush(context.Context, map[TopicPartition]OffsetAndMetadata) error {
	return nil
}
func (*SinkTaskBase) Version() string { return DefaultPluginVersion }

// ConnectorBase gives a Connector default Initialize/Version and keeps the context.
type ConnectorBase struct{ Ctx ConnectorContext }

func (b *ConnectorBase) Initialize(ctx ConnectorContext) { b.Ctx = ctx }
func (*ConnectorBase) Version() string                   { return DefaultPluginVersion }

// ReplicateTaskConfigs gives every task the connector's own properties (what most sinks do).
func ReplicateTaskConfigs(props map[string]string, maxTasks int) []map[string]string {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		m := make(map[string]string, len(props))
		for k, v := range props {
			m[k] = v
		}
		out[i] = m
	}
	return out
}
