package maintenance

import (
	"context"
	"maps"
	"reflect"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// summaryCatalog commits through cat and adds props to the summary of every snapshot a commit
// adds: iceberg-go's manifest rewrite takes no snapshot properties, and its snapshot must carry
// the sink's entries like every other maintenance snapshot.
type summaryCatalog struct {
	table.CatalogIO
	props map[string]string
}

func (c summaryCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	for _, u := range updates {
		if s := addedSnapshot(u); s != nil {
			if s.Summary == nil {
				s.Summary = &table.Summary{}
			}
			props := maps.Clone(s.Summary.Properties)
			if props == nil {
				props = ice.Properties{}
			}
			for k, v := range c.props {
				if _, own := props[k]; !own {
					props[k] = v
				}
			}
			s.Summary.Properties = props
		}
	}
	return c.CatalogIO.CommitTable(ctx, ident, reqs, updates)
}

// addedSnapshot returns the snapshot of an add-snapshot update (its type is iceberg-go's own).
func addedSnapshot(u table.Update) *table.Snapshot {
	if u.Action() != table.UpdateAddSnapshot {
		return nil
	}
	v := reflect.ValueOf(u)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Snapshot")
	if !f.IsValid() || !f.CanInterface() {
		return nil
	}
	s, _ := f.Interface().(*table.Snapshot)
	return s
}

// withSummary returns tbl committing through cat with props added to the summary of the
// snapshots it commits.
func withSummary(tbl *table.Table, cat table.CatalogIO, props map[string]string) *table.Table {
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, summaryCatalog{CatalogIO: cat, props: props})
}
