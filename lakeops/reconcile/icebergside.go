package reconcile

import (
	"context"
	"fmt"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// tp is a Kafka topic-partition.
type tp = icetable.TP

// lakeTable is the Iceberg side: the table, the consumer group whose offsets its snapshots record, and the
// schema its columns are taken from (the current one until useSchemaOf picks a snapshot's).
type lakeTable struct {
	tbl        *table.Table
	offsetsKey string
	schema     *ice.Schema
}

func openLake(ctx context.Context, cfg *Config) (*lakeTable, error) {
	cat, err := catalogx.Open(ctx, cfg.CatalogName, cfg.CatalogProps)
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: %w", err)
	}
	ident := catalog.ToIdentifier(cfg.IcebergTable)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, fmt.Errorf("iceberg: loading %s: %w", cfg.IcebergTable, err)
	}
	l := &lakeTable{tbl: tbl, schema: tbl.Schema()}
	if cfg.IcebergGroup != "" {
		l.offsetsKey = icetable.OffsetsSummaryKey(cfg.IcebergGroup)
	} else if keys := icetable.OffsetsSummaryKeys(tbl, tbl.CurrentSnapshot()); len(keys) == 1 {
		l.offsetsKey = keys[0]
	} else if len(keys) > 1 {
		return nil, fmt.Errorf("iceberg: %s holds the offsets of several consumer groups (%s): set %s",
			cfg.IcebergTable, strings.Join(keys, ", "), KeyIcebergGroup)
	}
	return l, nil
}

// offsetsAt returns the Kafka next offsets recorded as of snap.
func (l *lakeTable) offsetsAt(snap *table.Snapshot) (map[tp]int64, error) {
	if l.offsetsKey == "" || snap == nil {
		return map[tp]int64{}, nil
	}
	o, _, err := icetable.SnapshotOffsets(l.tbl, snap, l.offsetsKey)
	return o, err
}

// useSchemaOf makes the schema snap was written with the one columns are taken from: a scan of snap can
// select only its columns (one added later is not in its files, one dropped later is). It reports whether
// that schema is not the table's current one.
func (l *lakeTable) useSchemaOf(snap *table.Snapshot) bool {
	l.schema = l.tbl.Schema()
	if snap == nil || snap.SchemaID == nil || *snap.SchemaID == l.schema.ID {
		return false
	}
	for _, sc := range l.tbl.Metadata().Schemas() {
		if sc.ID == *snap.SchemaID {
			l.schema = sc
			return true
		}
	}
	return false // a schema the metadata no longer lists: the current one, as iceberg-go's scan takes it
}

// identifierFields are the table's identifier field names.
func (l *lakeTable) identifierFields() []string {
	sc := l.schema
	var out []string
	for _, id := range sc.IdentifierFieldIDs {
		if f, ok := sc.FindFieldByID(id); ok {
			out = append(out, f.Name)
		}
	}
	return out
}

func (l *lakeTable) field(name string) (ice.NestedField, bool) {
	return l.schema.FindFieldByName(name)
}
