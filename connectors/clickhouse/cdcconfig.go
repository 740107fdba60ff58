package clickhouse

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// unwrapConfig is what the connector's own transform chain says about Debezium records reaching the
// sink: whether ExtractNewRecordState unwraps them, which source fields its add.fields copies into the
// row (and under which names), and what it does with deletes.
type unwrapConfig struct {
	alias      string // the transform's name in "transforms", "" when there is none
	fields     positionFields
	copied     map[string]bool // source fields named in add.fields
	deleteMode string
}

// readUnwrapConfig finds io.debezium.transforms.ExtractNewRecordState in the connector's transforms.
func readUnwrapConfig(props map[string]string) unwrapConfig {
	u := unwrapConfig{fields: defaultPositionFields(), copied: map[string]bool{}}
	for _, name := range strings.Split(props["transforms"], ",") {
		name = strings.TrimSpace(name)
		if name == "" || !strings.HasSuffix(props["transforms."+name+".type"], "ExtractNewRecordState") {
			continue
		}
		pre := "transforms." + name + "."
		u.alias = name
		prefix, ok := props[pre+"add.fields.prefix"]
		if !ok {
			prefix = "__"
		}
		renamed := map[string]string{}
		for _, f := range strings.Split(props[pre+"add.fields"], ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			ref, rename, hasRename := strings.Cut(f, ":")
			field := ref
			if i := strings.LastIndex(ref, "."); i >= 0 {
				if ref[:i] != "source" {
					continue
				}
				field = ref[i+1:]
			}
			if ref == "ts_ms" {
				continue // the envelope's processing time, not the source's
			}
			u.copied[field] = true
			if hasRename {
				renamed[field] = rename
			}
		}
		u.fields = positionFieldsFor(renamed, prefix)
		u.deleteMode = strings.ToLower(strings.TrimSpace(props[pre+"delete.tombstone.handling.mode"]))
		if u.deleteMode == "" {
			u.deleteMode = "tombstone" // Debezium 3.x's default
		}
	}
	return u
}

// hasPosition reports whether add.fields copies a field that orders events.
func (u unwrapConfig) hasPosition() bool {
	return u.copied["lsn"] || u.copied["commit_lsn"] || u.copied["change_lsn"] || u.copied["scn"] ||
		(u.copied["file"] && u.copied["pos"])
}

// checkCDCConfig refuses CDC configurations that cannot order events at all and warns about those
// that order them only by the Kafka offset or the commit time. It returns the warnings to log.
func checkCDCConfig(cfg *Config, u unwrapConfig) (warnings []string, err error) {
	if !cfg.DebeziumCDC {
		return nil, nil
	}
	vf := cfg.VersionField
	if u.alias != "" && (strings.HasPrefix(vf, "source.") || strings.HasPrefix(vf, "after.") || strings.HasPrefix(vf, "before.")) {
		return nil, &connect.ConfigError{Name: keyCDCVersionField, Value: vf, Message: fmt.Sprintf(
			"names a field of the Debezium envelope, but transform %q (ExtractNewRecordState) unwraps the envelope before the sink sees it; "+
				"copy the field into the row with transforms.%s.add.fields (e.g. lsn, read as __lsn) and name that, or leave %s empty",
			u.alias, u.alias, keyCDCVersionField)}
	}
	if u.alias == "" || vf != "" {
		return nil, nil
	}
	if u.deleteMode == "drop" {
		warnings = append(warnings, fmt.Sprintf("transform %q drops delete events (delete.tombstone.handling.mode=drop): deleted rows stay in ClickHouse; "+
			"use tombstone (the default), rewrite or rewrite-with-tombstone", u.alias))
	}
	if !u.hasPosition() {
		what := "the Kafka offset"
		if u.copied["ts_ms"] {
			what = "source.ts_ms (ties within a millisecond)"
		}
		warnings = append(warnings, fmt.Sprintf("transform %q unwraps Debezium records without a source position (transforms.%s.add.fields has no lsn, scn, "+
			"commit_lsn/change_lsn or file,pos): unless a table's version column is a column of the row, row versions come from %s, "+
			"so a stale redelivery can overwrite newer state. Add to transforms.%s.add.fields: lsn (PostgreSQL), file,pos,row (MySQL), "+
			"scn (Oracle), commit_lsn,change_lsn (SQL Server); or set %s", u.alias, u.alias, what, u.alias, keyCDCVersionField))
	}
	return warnings, nil
}
