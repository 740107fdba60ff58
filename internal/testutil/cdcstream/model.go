package cdcstream

// VersionSource says which value of an event the sink orders a key's versions by.
type VersionSource int

const (
	// VersionLSN orders by the envelope's source.lsn (the delete's own position).
	VersionLSN VersionSource = iota
	// VersionColumn orders by the row's updated_at column (for a delete: its `before` row's value).
	VersionColumn
)

// String names the source as in test names.
func (v VersionSource) String() string {
	if v == VersionColumn {
		return "updated_at"
	}
	return "source.lsn"
}

// Version is the ordering value of a versioned (non-tombstone) event.
func (v VersionSource) Version(e Event) int64 {
	if v == VersionColumn {
		return e.Row.UpdatedAt
	}
	return e.LSN
}

// keyState is the model's view of one key: the highest version seen and the event that wins.
type keyState struct {
	seen    bool
	maxSeen int64
	winner  *Event
	winVer  int64
	deleted bool
	// afterDelete: the key's latest versioned event in Kafka order is a delete, won or stale; a tombstone
	// now is that delete's companion (Debezium's tombstones.on.delete) and changes nothing.
	afterDelete bool
}

// State returns the current state after events (in Kafka order per key): the live rows by local key.
func State(events []Event, vs VersionSource) map[string]Row {
	keys := map[string]*keyState{}
	for i := range events {
		e := &events[i]
		k := keys[e.Key]
		if k == nil {
			k = &keyState{}
			keys[e.Key] = k
		}
		if e.Op == Tombstone {
			// the companion of the delete before it: nothing (a stale delete's tombstone is stale with it);
			// else bare: a delete at the highest version seen for the key; nothing seen: nothing to delete
			if k.seen && !k.afterDelete {
				k.winner, k.winVer, k.deleted = nil, k.maxSeen, true
			}
			continue
		}
		v := vs.Version(*e)
		if !k.seen || v > k.maxSeen {
			k.maxSeen = v
		}
		isDelete := e.Op == Delete
		k.afterDelete = isDelete
		if !k.seen || v > k.winVer || (v == k.winVer && isDelete) {
			k.winner, k.winVer, k.deleted = e, v, isDelete
		}
		k.seen = true
	}
	out := map[string]Row{}
	for key, k := range keys {
		if k.seen && !k.deleted {
			r := *k.winner.Row
			out[key] = r
		}
	}
	return out
}
