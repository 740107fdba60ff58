package commit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
)

// The control topic speaks one of two protocols per connector (iceberg.control.protocol):
//
//	apache    the Apache Iceberg sink's events (iceberg-kafka-connect-events, Avro), so that the tasks of one
//	          connector can run on JVM workers with the Apache sink and on connectd workers at once, either
//	          side committing (control_apache_participant.go, control_apache_committer.go)
//	connectd  this sink's own JSON messages (control.go), which carry what upsert and CDC tables need
//	          (the snapshot each part was planned on, tombstones) and the Apache events cannot
//
// Under the apache protocol exactly-once rests where the Apache sink puts it: each task answers START_COMMIT
// with its files (DATA_WRITTEN) and DATA_COMPLETE in one Kafka transaction of its own producer
// (control_apache_producers.go) that also commits its source offsets to the connector's consumer group; the
// committer reads the control topic read_committed from its own group (<connect group>-coord), commits every
// file it has read since its last commit, and records in the snapshot summary how far it read
// (kafka.connect.offsets.<control topic>.<connect group>), so a file is committed once however often the
// control topic is read again.

// Snapshot summary keys of the Apache sink's committer.
const (
	ApacheSummaryCommitID     = "kafka.connect.commit-id"
	ApacheSummaryValidThrough = "kafka.connect.valid-through-ts"
)

// ApacheOffsetsSummaryKey is the summary key holding the control topic offsets the committer had read
// (JSON: partition → next offset) when it made the snapshot.
func ApacheOffsetsSummaryKey(controlTopic, group string) string {
	return "kafka.connect.offsets." + controlTopic + "." + group
}

// frameConnectd wraps a connectd-protocol message in an Apache event (a COMMIT_COMPLETE of the group, the
// message after the Avro datum, where the Java reader does not look): an Apache sink sharing the control topic
// decodes every record before it looks at the group, and fails its task on anything else.
func frameConnectd(group string, msg []byte) ([]byte, error) {
	return ae.Encode(&ae.Event{ID: uuid.New(), Type: ae.CommitComplete, Timestamp: nowMicros(), GroupID: group,
		CommitID: uuid.New(), Ext: msg})
}

// connectdPayload returns the connectd-protocol message a control record carries (framed, or the plain JSON
// of earlier versions), and whether the record is instead an Apache sink event of group.
func connectdPayload(v []byte, group string) (msg []byte, apache bool) {
	ev, err := ae.Decode(v)
	switch {
	case errors.Is(err, ae.ErrNotEvent):
		return v, false
	case err != nil:
		return nil, false
	case isConnectdJSON(ev.Ext):
		return ev.Ext, false
	case ev.Ext != nil: // an apache-protocol connectd process
		return nil, ev.GroupID == group
	default:
		return nil, ev.GroupID == group
	}
}

// errApacheEvents fails a connectd-protocol connector whose control topic carries Apache events of its group.
func errApacheEvents(topic, group, protocolKey string) error {
	return fmt.Errorf("the control topic %s carries the Apache Iceberg sink's events for this connector (group %s): "+
		"some of its tasks run on JVM workers with the Apache sink, and this connector speaks connectd's control "+
		"protocol (%s=%s, or upsert mode / a cdc-field, which the Apache sink cannot host); run all of the "+
		"connector's tasks on one kind of worker (docs/COMPATIBILITY.md)", topic, group, protocolKey, ProtocolConnectd)
}

// errConnectdMessages fails an apache-protocol connector whose control topic carries connectd messages of its
// group: another process runs the connector with the other protocol.
func errConnectdMessages(topic, group, protocolKey string) error {
	return fmt.Errorf("the control topic %s carries connectd-protocol messages for this connector (group %s), which "+
		"this process runs with the Apache sink's protocol: the workers disagree on %s; give every worker the "+
		"same connector config", topic, group, protocolKey)
}

// tableRef names a table the way the Apache events do.
func tableRef(catalogName, name string) ae.TableReference {
	id := catalog.ToIdentifier(name)
	return ae.TableReference{Catalog: catalogName, Namespace: id[:len(id)-1], Name: id[len(id)-1]}
}

// refName is the inverse of tableRef: the name the catalog loads.
func refName(r ae.TableReference) string {
	return strings.Join(append(slices.Clone(r.Namespace), r.Name), ".")
}

// apacheOffsets is the control-topic position map of the Apache summary (Jackson's Map<Integer, Long>).
type apacheOffsets map[int32]int64

func (o apacheOffsets) encode() string {
	m := make(map[string]int64, len(o))
	for p, off := range o {
		m[strconv.Itoa(int(p))] = off
	}
	b, _ := json.Marshal(m) // sorted keys
	return string(b)
}

// parseApacheOffsets reads the offsets in the order written: two keys of one partition ("1", "01") keep the
// later, as Jackson's map does.
func parseApacheOffsets(s string) (apacheOffsets, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	t, err := dec.Token()
	if err == nil && t == nil { // null
		return apacheOffsets{}, endOfOffsets(dec, s)
	}
	if err != nil || t != json.Delim('{') {
		if err == nil {
			err = fmt.Errorf("not a JSON object")
		}
		return nil, fmt.Errorf("offsets %q: %w", s, err)
	}
	out := apacheOffsets{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("offsets %q: %w", s, err)
		}
		k, _ := t.(string)
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("partition %q: %w", k, err)
		}
		var off int64
		if err := dec.Decode(&off); err != nil {
			return nil, fmt.Errorf("offset of partition %q: %w", k, err)
		}
		out[int32(p)] = off
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("offsets %q: %w", s, err)
	}
	return out, endOfOffsets(dec, s)
}

// endOfOffsets fails when anything but space follows the offsets' JSON value.
func endOfOffsets(dec *json.Decoder, s string) error {
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("offsets %q: data after the JSON value", s)
	}
	return nil
}

// newApacheEvent is an event of this connector's group.
func (ctl *control) newApacheEvent(t ae.PayloadType, commitID uuid.UUID) *ae.Event {
	return &ae.Event{ID: uuid.New(), Type: t, Timestamp: nowMicros(), GroupID: ctl.opts.GroupID, CommitID: commitID, Ext: connectdMark}
}

// connectdMark follows the Avro datum of the events connectd sends under the apache protocol (the Java reader
// does not look there): it tells connectd's committer which coordinators are JVM tasks.
var connectdMark = []byte("connectd")

// isConnectdJSON reports whether an event's extension is a connectd-protocol message.
func isConnectdJSON(ext []byte) bool { return len(ext) > 0 && ext[0] == '{' }

// apacheMessage frames an event for the control topic, keyed like the Apache sink's: by producer (key), to keep
// one producer's events in order.
func (ctl *control) apacheMessage(e *ae.Event, key []byte) (*connect.ProducerRecord, error) {
	b, err := ae.Encode(e)
	if err != nil {
		return nil, fmt.Errorf("encode %v event: %w", e.Type, err)
	}
	if len(b) > maxControlMessage {
		return nil, fmt.Errorf("%v event of %d bytes exceeds the control topic's %d", e.Type, len(b), maxControlMessage)
	}
	return &connect.ProducerRecord{Topic: ctl.topic, Partition: connect.AnyPartition, Key: key, Value: b}, nil
}

// readApache hands this group's START_COMMIT events to the participant.
func (ctl *control) readApache(v []byte) {
	group := ctl.opts.GroupID
	ev, err := ae.Decode(v)
	if ev != nil && isConnectdJSON(ev.Ext) || errors.Is(err, ae.ErrNotEvent) {
		var m ctlMsg
		if msg, _ := connectdPayload(v, group); json.Unmarshal(msg, &m) == nil && m.Group == group {
			ctl.tasks.Fail(errConnectdMessages(ctl.topic, group, ctl.opts.ProtocolKey))
		}
		return
	}
	if err != nil || ev.GroupID != group {
		return
	}
	if ev.Ext == nil { // a JVM task's coordinator
		switch ev.Type {
		case ae.StartCommit:
			ctl.foreign.started(time.Now())
		case ae.CommitComplete:
			ctl.foreign.done(time.Now())
		}
	}
	if ev.Type == ae.CommitComplete && ctl.answers.completed(ev.CommitID) {
		ctl.tasks.Progressed()
	}
	if ev.Type != ae.StartCommit {
		return
	}
	select {
	case ctl.astarts <- ev.CommitID:
	default:
		ctl.log.Warn("START_COMMIT dropped (the participant is busy); the committer commits what it has at its timeout", "commit", ev.CommitID)
	}
}

// eventFiles converts a DATA_WRITTEN's files against the spec they were written with: the table's spec whose
// partition type has the event's field ids (the current spec when none matches).
func eventFiles(ev *ae.Event, md table.Metadata) (data, dels []ice.DataFile, err error) {
	sc := md.CurrentSchema()
	spec := md.PartitionSpec()
	for _, s := range md.PartitionSpecs() {
		if sameFieldIDs(s.PartitionType(sc), &ev.PartitionType) {
			spec = s
			break
		}
	}
	return ev.Files(spec, sc)
}

func sameFieldIDs(a, b *ice.StructType) bool {
	if len(a.FieldList) != len(b.FieldList) {
		return false
	}
	for i := range a.FieldList {
		if a.FieldList[i].ID != b.FieldList[i].ID {
			return false
		}
	}
	return true
}
