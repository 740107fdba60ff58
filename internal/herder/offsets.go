package herder

// The sink offsets of GET/PATCH/DELETE /connectors/{name}/offsets, shared by the standalone and the distributed
// herder: both keep sink offsets in the connector's consumer group and differ only in where the config comes from.

import (
	"fmt"
	"sort"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/values"
	"github.com/connectd/connectd/internal/worker"
)

func notStoppedError(name string) error {
	return BadRequest("Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
}

// SinkOffsets reads a sink connector's consumer-group offsets in the REST shape.
func SinkOffsets(w *worker.Worker, group string) (*ConnectorOffsets, error) {
	offs, err := w.GroupOffsets(group)
	if err != nil {
		return nil, err
	}
	tps := make([]connect.TopicPartition, 0, len(offs))
	for tp := range offs {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	out := &ConnectorOffsets{Offsets: []ConnectorOffset{}}
	for _, tp := range tps {
		out.Offsets = append(out.Offsets, ConnectorOffset{
			Partition: map[string]any{"kafka_topic": tp.Topic, "kafka_partition": tp.Partition},
			Offset:    map[string]any{"kafka_offset": offs[tp]},
		})
	}
	return out, nil
}

const (
	alteredMsg = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	resetMsg   = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
)

// AlterSinkOffsets validates the body and alters the group offsets (and the connector's, if it keeps its own).
// config is the stored connector config; its provider references are resolved here (the JVM passes the
// resolved config to modifyConnectorOffsets).
func AlterSinkOffsets(w *worker.Worker, name string, config map[string]string, body ConnectorOffsets) (string, error) {
	if len(body.Offsets) == 0 {
		return "", BadRequest("The offsets to be modified must not be null or empty")
	}
	config, err := w.ResolveConfig(config)
	if err != nil {
		return "", err
	}
	group := w.ConsumerGroup(name, config)
	offsets := map[connect.TopicPartition]*int64{}
	for _, o := range body.Offsets {
		topic, tok := o.Partition["kafka_topic"].(string)
		if o.Partition == nil || !tok || topic == "" {
			return "", BadRequest("Kafka topic names must be valid strings and may not be null")
		}
		part, perr := values.ToLong(o.Partition["kafka_partition"])
		if perr != nil {
			return "", BadRequest("Failed to parse the following Kafka partition value in the provided offsets: '%v'. Partition values for sink connectors need to be integers.", o.Partition["kafka_partition"])
		}
		tp := connect.TopicPartition{Topic: topic, Partition: int32(part)}
		if o.Offset == nil {
			offsets[tp] = nil
			continue
		}
		off, oerr := values.ToLong(o.Offset["kafka_offset"])
		if oerr != nil {
			return "", BadRequest("Failed to parse the following Kafka offset value in the provided offsets: '%v'. Offset values for sink connectors need to be integers.", o.Offset["kafka_offset"])
		}
		offsets[tp] = &off
	}
	empty, err := w.GroupIsEmpty(group)
	if err != nil {
		return "", err
	}
	if !empty {
		return "", fmt.Errorf("Failed to alter consumer group offsets for connector %s either because its tasks haven't stopped completely yet or the connector was resumed before the request to alter its offsets could be successfully completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks.", name)
	}
	if err := w.AlterGroupOffsets(group, offsets); err != nil {
		return "", fmt.Errorf("Failed to alter consumer group offsets for connector %s: %w", name, err)
	}
	if alt, ok := newConnector(w, config).(connect.OffsetAlterer); ok {
		done, err := alt.AlterOffsets(config, offsets)
		if err != nil {
			return "", err
		}
		if done {
			return "The offsets for this connector have been altered successfully", nil
		}
	}
	return alteredMsg, nil
}

// ResetSinkOffsets deletes the connector's consumer group.
func ResetSinkOffsets(w *worker.Worker, name string, config map[string]string) (string, error) {
	config, err := w.ResolveConfig(config)
	if err != nil {
		return "", err
	}
	group := w.ConsumerGroup(name, config)
	if err := w.DeleteGroup(group); err != nil {
		return "", fmt.Errorf("Failed to reset consumer group offsets for connector %s: %w", name, err)
	}
	if alt, ok := newConnector(w, config).(connect.OffsetAlterer); ok {
		done, err := alt.AlterOffsets(config, nil)
		if err != nil {
			return "", err
		}
		if done {
			return "The offsets for this connector have been reset successfully", nil
		}
	}
	return resetMsg, nil
}

func newConnector(w *worker.Worker, config map[string]string) connect.SinkConnector {
	c, _, err := w.Registry().NewSinkConnector(config["connector.class"])
	if err != nil {
		return nil
	}
	return c
}
