package scd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// Schema is the SCD table's schema for the options: business_key, the attributes, valid_from,
// valid_to, is_current, source_version, record_hash (and is_deleted with delete markers).
// business_key and source_version are its identifier fields: one row per version of a key.
func Schema(o Options) *ice.StructType {
	fields := []ice.NestedField{{ID: 1, Name: ColBusinessKey, Type: ice.PrimitiveTypes.String, Required: true}}
	for _, a := range o.attrNames() {
		fields = append(fields, ice.NestedField{ID: len(fields) + 1, Name: a, Type: ice.PrimitiveTypes.String})
	}
	for _, f := range []ice.NestedField{
		{Name: ColValidFrom, Type: ice.PrimitiveTypes.TimestampTz},
		{Name: ColValidTo, Type: ice.PrimitiveTypes.TimestampTz},
		{Name: ColIsCurrent, Type: ice.PrimitiveTypes.Bool, Required: true},
		{Name: ColSourceVersion, Type: ice.PrimitiveTypes.String, Required: true},
		{Name: ColRecordHash, Type: ice.PrimitiveTypes.String},
	} {
		f.ID = len(fields) + 1
		fields = append(fields, f)
	}
	if o.DeleteMarkers {
		fields = append(fields, ice.NestedField{ID: len(fields) + 1, Name: ColIsDeleted, Type: ice.PrimitiveTypes.Bool, Required: true})
	}
	return &ice.StructType{FieldList: fields}
}

// loadOrCreate loads the SCD table, creating it (unpartitioned, format v2) when missing, and
// checks that it has the columns the options write.
func loadOrCreate(ctx context.Context, cat catalog.Catalog, o Options) (*table.Table, error) {
	tbl, err := cat.LoadTable(ctx, o.Target)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		tbl, err = icetable.CreateTable(ctx, cat, o.Target, Schema(o), icetable.TableOptions{IDColumns: []string{ColBusinessKey, ColSourceVersion}})
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			tbl, err = cat.LoadTable(ctx, o.Target)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("scd: %s: %w", strings.Join(o.Target, "."), err)
	}
	var missing []string
	for _, f := range Schema(o).FieldList {
		if _, ok := tbl.Schema().FindFieldByName(f.Name); !ok {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("scd: %s lacks the columns %s of these options (drop it to rebuild it, or add them)",
			strings.Join(o.Target, "."), strings.Join(missing, ", "))
	}
	return tbl, nil
}
