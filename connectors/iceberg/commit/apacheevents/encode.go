package apacheevents

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Encode writes e as Java's AvroUtil.encode does: for the same event the bytes are the same.
func Encode(e *Event) ([]byte, error) {
	if e == nil {
		return nil, errors.New("apacheevents: encode nil event")
	}
	if e.Type == DataWritten || e.Type == CommitToTable {
		if err := checkTable(e.Table); err != nil {
			return nil, fmt.Errorf("apacheevents: encode %v: %w", e.Type, err)
		}
	}
	sch, err := eventSchema(e.Type, &e.PartitionType)
	if err != nil {
		return nil, fmt.Errorf("apacheevents: encode %v: %w", e.Type, err)
	}
	payload, err := payloadValue(e, sch.fields[sch.fieldByID(idEventPayload)].typ)
	if err != nil {
		return nil, fmt.Errorf("apacheevents: encode %v: %w", e.Type, err)
	}
	vals := map[int]any{
		idEventID:        uuidBytes(e.ID),
		idEventType:      int32(e.Type),
		idEventTimestamp: micros(e.Timestamp),
		idEventGroupID:   e.GroupID,
		idEventPayload:   payload,
	}
	out := append([]byte(nil), magic...)
	if out, err = appendJavaUTF(out, schemaJSON(sch)); err != nil {
		return nil, fmt.Errorf("apacheevents: encode %v: %w", e.Type, err)
	}
	w := writer{b: out}
	if err := w.value(sch, newRecord(sch, vals)); err != nil {
		return nil, fmt.Errorf("apacheevents: encode %v: %w", e.Type, err)
	}
	if e.Ext != nil {
		w.b = append(w.b, extMarker...)
		w.bytes(e.Ext)
	}
	return w.b, nil
}

// newRecord makes the record value of n from values by field id; fields without a value are null.
func newRecord(n *node, byID map[int]any) *record {
	r := &record{n: n, vals: make([]any, len(n.fields))}
	for i, f := range n.fields {
		r.vals[i] = byID[f.id]
	}
	return r
}

func uuidBytes(u uuid.UUID) []byte { return u[:] }

// micros is DateTimeUtil.microsFromTimestamptz: both floor below the microsecond.
func micros(t time.Time) int64 { return t.UnixMicro() }

func optMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

func optLong(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

func payloadValue(e *Event, n *node) (*record, error) {
	vals := map[int]any{commitIDField[e.Type]: uuidBytes(e.CommitID)}
	switch e.Type {
	case DataWritten:
		vals[idDataWrittenTable] = tableValue(e.Table, n.fields[n.fieldByID(idDataWrittenTable)].typ)
		for _, l := range []struct {
			id    int
			files []iceberg.DataFile
		}{{idDataWrittenData, e.DataFiles}, {idDataWrittenDeletes, e.DeleteFiles}} {
			if l.files == nil {
				continue
			}
			arr, _ := n.fields[n.fieldByID(l.id)].typ.optionOf()
			items := make([]any, len(l.files))
			for i, f := range l.files {
				// Java's coordinator adds data_files as data and delete_files as deletes, whatever their content
				if isDelete := f.ContentType() != iceberg.EntryContentData; isDelete != (l.id == idDataWrittenDeletes) {
					return nil, fmt.Errorf("file %d (%s): content %v in the wrong list", i, f.FilePath(), f.ContentType())
				}
				r, err := dataFileValue(f, arr.items, &e.PartitionType)
				if err != nil {
					return nil, fmt.Errorf("file %d (%s): %w", i, f.FilePath(), err)
				}
				items[i] = r
			}
			vals[l.id] = items
		}
	case DataComplete:
		if e.Assignments != nil {
			arr, _ := n.fields[n.fieldByID(idDataCompleteAssigns)].typ.optionOf()
			items := make([]any, len(e.Assignments))
			for i, a := range e.Assignments {
				items[i] = newRecord(arr.items, map[int]any{
					idTPOTopic:     a.Topic,
					idTPOPartition: a.Partition,
					idTPOOffset:    optLong(a.Offset),
					idTPOTimestamp: optMicros(a.Timestamp),
				})
			}
			vals[idDataCompleteAssigns] = items
		}
	case CommitToTable:
		vals[idCommitToTableTable] = tableValue(e.Table, n.fields[n.fieldByID(idCommitToTableTable)].typ)
		vals[idCommitToTableSnapshot] = optLong(e.SnapshotID)
		vals[idCommitToTableValid] = optMicros(e.ValidThrough)
	case CommitComplete:
		vals[idCommitCompleteValid] = optMicros(e.ValidThrough)
	}
	return newRecord(n, vals), nil
}

// checkTable keeps to what Java's TableReference.identifier() accepts: the coordinator fails on anything else.
func checkTable(t TableReference) error {
	if t.Name == "" {
		return errors.New("table reference without a table name")
	}
	for _, l := range t.Namespace {
		if strings.ContainsRune(l, 0) {
			return fmt.Errorf("namespace level %q contains a null character", l)
		}
	}
	return nil
}

func tableValue(t TableReference, n *node) *record {
	ns := make([]any, len(t.Namespace))
	for i, s := range t.Namespace {
		ns[i] = s
	}
	return newRecord(n, map[int]any{idTableCatalog: t.Catalog, idTableNamespace: ns, idTableName: t.Name})
}
