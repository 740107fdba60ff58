package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// evolve adds columns for record fields the table lacks (auto.evolve), using the record schemas of recs
// (schemaless records carry no types and are not evolved). It reports whether the table changed.
func (t *Task) evolve(ctx context.Context, tbl *tableInfo, recs []*connect.SinkRecord) (bool, error) {
	seen := map[*connect.Schema]bool{}
	var adds []string
	added := map[string]bool{}
	for _, rec := range recs {
		r, skip, _, err := t.image(rec)
		if err != nil || skip {
			continue
		}
		st, ok := r.value.(*connect.Struct)
		if !ok || seen[st.Schema()] {
			continue
		}
		seen[st.Schema()] = true
		for _, f := range st.Schema().Fields() {
			if _, ok := tbl.byName[f.Name]; ok || added[f.Name] {
				continue
			}
			typ, err := chTypeOf(f.Schema)
			if err != nil {
				return false, fmt.Errorf("clickhouse: auto.evolve of %s.%s: field %s: %w", tbl.db, tbl.name, f.Name, err)
			}
			if !strings.HasPrefix(typ, "Nullable(") && f.Schema.Type != connect.TypeArray && f.Schema.Type != connect.TypeMap && f.Schema.Type != connect.TypeStruct {
				// Rows written before the column existed read as its default; older records lack it.
				typ = "Nullable(" + typ + ")"
			}
			added[f.Name] = true
			adds = append(adds, "ADD COLUMN IF NOT EXISTS "+quoteIdent(f.Name)+" "+typ)
		}
	}
	if len(adds) == 0 {
		return false, nil
	}
	ddl := "ALTER TABLE " + tbl.qualified() + " " + strings.Join(adds, ", ")
	t.log.Info("evolving table", "ddl", ddl)
	if err := t.pool.exec(ctx, ddl); err != nil {
		return false, fmt.Errorf("clickhouse: auto.evolve: %w", err)
	}
	t.tables.invalidate(tbl.db, tbl.name)
	return true, nil
}
