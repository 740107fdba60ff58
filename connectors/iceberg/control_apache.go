package iceberg

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// The Apache Iceberg sink's control events (iceberg-kafka-connect-events) are Avro records written by
// Iceberg's AvroEncoderUtil: the magic bytes C2 01, the writer's schema as a Java DataOutput UTF string
// (2-byte big-endian length), then the datum, whose groupId field holds the connector's consumer group.
// This sink speaks its own control messages, so a connector whose tasks run partly on JVM workers with the
// Apache sink would have two committers, each committing its own half with its own view of the offsets.
// Seeing such an event of our own group on the control topic therefore fails the tasks with the reason.
var apacheEventMagic = []byte{0xC2, 0x01}

// isApacheEvent reports whether v is an Apache sink control event of consumer group group.
func isApacheEvent(v []byte, group string) bool {
	if !bytes.HasPrefix(v, apacheEventMagic) || len(v) < 4 {
		return false
	}
	n := int(binary.BigEndian.Uint16(v[2:4]))
	if 4+n > len(v) {
		return false
	}
	schema, datum := v[4:4+n], v[4+n:]
	return bytes.Contains(schema, []byte(`"record"`)) && group != "" && bytes.Contains(datum, []byte(group))
}

// errApacheEvents is the task failure when the Apache sink shares this connector's control topic.
func errApacheEvents(topic, group string) error {
	return fmt.Errorf("the control topic %s carries the Apache Iceberg sink's events for this connector (group %s): "+
		"some of its tasks run on JVM workers with the Apache sink. connectd commits through its own control messages "+
		"and cannot share a connector with the Apache sink (each side would commit its own partitions); run all of "+
		"the connector's tasks on one kind of worker, e.g. finish moving the workers of the group (docs/COMPATIBILITY.md)", topic, group)
}
