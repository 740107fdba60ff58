package iceberg

import (
	"fmt"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// rawSchema is the raw CDC history model (icetable.RawCDCSchema).
var rawSchema = icetable.RawCDCSchema

func str(v any) any {
	if v == nil {
		return nil
	}
	return icetable.ToString(v)
}

// rawRow builds the raw history row of one record. value is the converted record value (a
// Debezium envelope, or anything else, which is stored as after_payload with op "c"), key the
// converted key.
func rawRow(r *connect.SinkRecord, value icetable.Row, key any, now time.Time) icetable.Row {
	row := icetable.Row{
		"kafka_topic":     r.OriginalTopic,
		"kafka_partition": r.OriginalPartition,
		"kafka_offset":    r.OriginalOffset,
		"primary_key":     icetable.JSONString(key),
		"ingested_at":     now,
	}
	if row["kafka_topic"] == "" {
		row["kafka_topic"], row["kafka_partition"], row["kafka_offset"] = r.Topic, r.Partition, r.Offset
	}
	if r.Timestamp >= 0 {
		row["kafka_timestamp"] = time.UnixMilli(r.Timestamp).UTC()
	}
	if value == nil { // tombstone
		row["operation"] = "tombstone"
		return row
	}
	if !icetable.DebeziumEnvelope(value) {
		row["operation"] = "c"
		row["after_payload"] = icetable.JSONString(value)
		return row
	}
	row["operation"] = value["op"]
	row["before_payload"] = icetable.JSONString(value["before"])
	row["after_payload"] = icetable.JSONString(value["after"])
	if src, ok := value["source"].(map[string]any); ok {
		row["source_system"] = str(src["connector"])
		if n, ok := src["name"]; ok && n != nil {
			row["source_system"] = fmt.Sprintf("%v:%v", src["connector"], n)
		}
		if s, ok := src["schema"]; ok && s != nil {
			row["source_schema"] = str(s)
		} else {
			row["source_schema"] = str(src["db"])
		}
		row["source_table"] = str(src["table"])
		if ts, ok := src["ts_ms"]; ok && ts != nil {
			if ms, err := icetable.ToInt64(ts); err == nil {
				row["source_timestamp"] = time.UnixMilli(ms).UTC()
			}
		}
		row["source_version"] = sourceVersion(src)
		for _, k := range []string{"txId", "gtid", "xid"} {
			if v, ok := src[k]; ok && v != nil {
				row["transaction_id"] = str(v)
				break
			}
		}
	}
	if row["source_timestamp"] == nil {
		if ms, err := icetable.ToInt64(value["ts_ms"]); err == nil && value["ts_ms"] != nil {
			row["source_timestamp"] = time.UnixMilli(ms).UTC()
		}
	}
	if tx, ok := value["transaction"].(map[string]any); ok && row["transaction_id"] == nil {
		row["transaction_id"] = str(tx["id"])
	}
	return row
}

// sourceVersion is the position of the change in the source log: Postgres lsn, MySQL
// binlog file:pos(:row), Oracle scn, SQL Server change_lsn, MongoDB ord.
func sourceVersion(src map[string]any) any {
	for _, k := range []string{"lsn", "scn", "change_lsn", "commit_lsn"} {
		if v, ok := src[k]; ok && v != nil {
			return str(v)
		}
	}
	if f, ok := src["file"]; ok && f != nil {
		s := fmt.Sprintf("%v:%v", f, src["pos"])
		if r, ok := src["row"]; ok && r != nil {
			s += fmt.Sprintf(":%v", r)
		}
		return s
	}
	if v, ok := src["ord"]; ok && v != nil {
		return fmt.Sprintf("%v:%v", src["ts_ms"], v)
	}
	return nil
}
