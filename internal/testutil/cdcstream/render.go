package cdcstream

import "encoding/json"

// Debezium renders an event as a Kafka record of a Debezium PostgreSQL connector with the JsonConverter
// (schemas.enable=false): key {"id": <full key>}, value the envelope (before/after/source/op/ts_ms), or a
// null value for a tombstone. The late optional column is left out of a row that does not have it.
func Debezium(s Stream, e Event) (key, value []byte) {
	full := s.FullKey(e)
	key, _ = json.Marshal(map[string]any{"id": full})
	if e.Op == Tombstone {
		return key, nil
	}
	row := map[string]any{"id": full, "name": e.Row.Name, "qty": e.Row.Qty, "updated_at": e.Row.UpdatedAt}
	if e.Row.Email != nil {
		row["email"] = *e.Row.Email
	}
	env := map[string]any{
		"op":    string(e.Op),
		"ts_ms": 1_700_000_000_000 + e.LSN,
		"source": map[string]any{"version": "2.7.0.Final", "connector": "postgresql", "name": "shop", "db": "shop",
			"schema": "public", "table": "customers", "ts_ms": 1_700_000_000_000 + e.LSN, "snapshot": snapshotFlag(e.Op),
			"txId": 500 + e.LSN, "lsn": e.LSN},
		"transaction": nil,
	}
	if e.Op == Delete {
		env["before"], env["after"] = row, nil
	} else {
		env["before"], env["after"] = nil, row
	}
	value, _ = json.Marshal(env)
	return key, value
}

func snapshotFlag(op Op) string {
	if op == Read {
		return "true"
	}
	return "false"
}
