package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// createTable creates a missing table from the first record's schema (auto.create.tables): a
// ReplacingMergeTree(version, is_deleted) ordered by the record key's fields in CDC mode, a MergeTree
// otherwise, with the hot window's TTL when one is configured.
func (t *Task) createTable(ctx context.Context, db, table string, recs []*connect.SinkRecord) error {
	rec := recs[0]
	var rowSchema *connect.Schema
	var sample any
	for _, r := range recs {
		if r.Value == nil {
			continue
		}
		rec = r
		x, skip, _, err := t.image(r)
		if err != nil || skip {
			continue
		}
		sample = x.value
		if s, ok := x.value.(*connect.Struct); ok {
			rowSchema = s.Schema()
		}
		break
	}
	if sample == nil {
		return fmt.Errorf("clickhouse: cannot create %s.%s: no record with a value", db, table)
	}
	var cols []string
	if rowSchema != nil {
		for _, f := range rowSchema.Fields() {
			typ, err := chTypeOf(f.Schema)
			if err != nil {
				return fmt.Errorf("clickhouse: cannot create %s.%s: field %s: %w", db, table, f.Name, err)
			}
			cols = append(cols, quoteIdent(f.Name)+" "+typ)
		}
	} else {
		entries, _ := asMap(sample)
		for _, e := range entries {
			cols = append(cols, quoteIdent(fmt.Sprint(e.k))+" "+chTypeOfValue(e.v))
		}
	}
	order := t.cfg.AutoCreateOrderBy
	if order == "" {
		var keys []string
		if ks, ok := rec.Key.(*connect.Struct); ok {
			for _, f := range ks.Schema().Fields() {
				keys = append(keys, quoteIdent(f.Name))
			}
		} else if km, ok := rec.Key.(map[string]any); ok {
			entries, _ := asMap(km)
			for _, e := range entries {
				keys = append(keys, quoteIdent(fmt.Sprint(e.k)))
			}
		}
		if len(keys) > 0 {
			order = "(" + strings.Join(keys, ", ") + ")"
		} else {
			order = "tuple()"
		}
	}
	engine := "MergeTree"
	if t.cfg.DebeziumCDC {
		cols = append(cols, quoteIdent(t.cfg.VersionColumn)+" UInt64", quoteIdent(t.cfg.DeletedColumn)+" UInt8")
		engine = fmt.Sprintf("ReplacingMergeTree(%s, %s)", quoteIdent(t.cfg.VersionColumn), quoteIdent(t.cfg.DeletedColumn))
		if order == "tuple()" {
			return fmt.Errorf("clickhouse: cannot create CDC table %s.%s: records have no key (set %s)", db, table, keyAutoCreateOrder)
		}
	}
	ddl := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (%s) ENGINE = %s", quoteIdent(db), quoteIdent(table), strings.Join(cols, ", "), engine)
	if t.cfg.AutoCreatePartitionBy != "" {
		ddl += " PARTITION BY " + t.cfg.AutoCreatePartitionBy
	}
	ddl += " ORDER BY " + order
	if t.cfg.AutoCreateTTL != "" {
		ddl += " TTL " + t.cfg.AutoCreateTTL
	}
	t.log.Info("creating table", "ddl", ddl)
	t.tables.invalidate(db, table)
	return t.pool.exec(ctx, ddl)
}

// chTypeOf maps a Connect schema to a ClickHouse type, as the official sink's docs table.
func chTypeOf(s *connect.Schema) (string, error) {
	base, err := chBaseType(s)
	if err != nil {
		return "", err
	}
	if s.Optional && s.Type != connect.TypeArray && s.Type != connect.TypeMap && s.Type != connect.TypeStruct {
		return "Nullable(" + base + ")", nil
	}
	return base, nil
}

func chBaseType(s *connect.Schema) (string, error) {
	switch s.Name {
	case connect.DecimalName:
		scale, err := connect.DecimalScale(s)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Decimal(38, %d)", scale), nil
	case connect.DateName:
		return "Date32", nil
	case connect.TimeName:
		return "Int64", nil
	case connect.TimestampName:
		return "DateTime64(3, 'UTC')", nil
	}
	switch s.Type {
	case connect.TypeInt8:
		return "Int8", nil
	case connect.TypeInt16:
		return "Int16", nil
	case connect.TypeInt32:
		return "Int32", nil
	case connect.TypeInt64:
		return "Int64", nil
	case connect.TypeFloat32:
		return "Float32", nil
	case connect.TypeFloat64:
		return "Float64", nil
	case connect.TypeBoolean:
		return "Bool", nil
	case connect.TypeString, connect.TypeBytes:
		return "String", nil
	case connect.TypeArray:
		e, err := chTypeOf(s.ValueSchema())
		if err != nil {
			return "", err
		}
		return "Array(" + e + ")", nil
	case connect.TypeMap:
		k, err := chBaseType(s.KeySchema())
		if err != nil {
			return "", err
		}
		v, err := chTypeOf(s.ValueSchema())
		if err != nil {
			return "", err
		}
		return "Map(" + k + ", " + v + ")", nil
	case connect.TypeStruct:
		var parts []string
		for _, f := range s.Fields() {
			ft, err := chTypeOf(f.Schema)
			if err != nil {
				return "", err
			}
			parts = append(parts, quoteIdent(f.Name)+" "+ft)
		}
		return "Tuple(" + strings.Join(parts, ", ") + ")", nil
	}
	return "", fmt.Errorf("no ClickHouse type for %s", s)
}

func chTypeOfValue(v any) string {
	switch v.(type) {
	case bool:
		return "Nullable(Bool)"
	case float64, float32:
		return "Nullable(Float64)"
	case int, int64, int32, int16, int8:
		return "Nullable(Int64)"
	case []any:
		return "Array(String)"
	case map[string]any:
		return "Map(String, String)"
	}
	return "Nullable(String)"
}
