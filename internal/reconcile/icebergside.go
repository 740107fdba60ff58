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

// lakeTable is the Iceberg side: the table and the consumer group whose offsets its snapshots record.
type lakeTable struct {
	tbl        *table.Table
	offsetsKey string
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
	l := &lakeTable{tbl: tbl}
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

// identifierFields are the table's identifier field names.
func (l *lakeTable) identifierFields() []string {
	sc := l.tbl.Schema()
	var out []string
	for _, id := range sc.IdentifierFieldIDs {
		if f, ok := sc.FindFieldByID(id); ok {
			out = append(out, f.Name)
		}
	}
	return out
}

func (l *lakeTable) field(name string) (ice.NestedField, bool) {
	return l.tbl.Schema().FindFieldByName(name)
}
