package erase

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/lakeops/reconcile"
)

// ClickHouseErasure is what an erase did to the ClickHouse table.
type ClickHouseErasure struct {
	Table string `json:"table"`
	// RowsBefore are the stored rows of the keys (every version and delete row, not only FINAL's).
	RowsBefore int64  `json:"rows_before"`
	Mutation   string `json:"mutation"`
	// RowsAfter are the rows of the keys any active part still holds (a read without FINAL).
	RowsAfter int64 `json:"rows_after"`
	// PartsRewritten is the number of active parts the mutation rewrote.
	PartsRewritten int64 `json:"parts_rewritten"`
	// OutdatedParts are the parts replaced by the mutation still on disk: no query reads them; the server
	// removes them after the table's old_parts_lifetime.
	OutdatedParts int64 `json:"outdated_parts"`
	// DetachedParts of the table are not read by queries either, but an ATTACH brings them back.
	DetachedParts int64   `json:"detached_parts"`
	Seconds       float64 `json:"seconds"`
	Error         string  `json:"error,omitempty"`
}

func eraseClickHouse(ctx context.Context, cfg *Config, keyCols []string, keys []Key) *ClickHouseErasure {
	start := time.Now()
	e := &ClickHouseErasure{Table: cfg.CH.Database + "." + cfg.CHTable}
	if err := e.run(ctx, cfg, keyCols, keys); err != nil {
		e.Error = err.Error()
	}
	e.Seconds = time.Since(start).Seconds()
	return e
}

func (e *ClickHouseErasure) run(ctx context.Context, cfg *Config, keyCols []string, keys []Key) error {
	ch, err := reconcile.DialClickHouse(ctx, cfg.CH, "connectd-erase")
	if err != nil {
		return err
	}
	defer ch.Close()
	db, name := cfg.CH.Database, cfg.CHTable
	_, types, err := ch.Columns(ctx, db, name)
	if err != nil {
		return err
	}
	where, err := chWhere(types, keyCols, keys)
	if err != nil {
		return err
	}
	tbl := reconcile.QuoteIdent(db) + "." + reconcile.QuoteIdent(name)
	count := func() (int64, error) {
		rows, err := ch.Rows(ctx, "SELECT CAST(toString(count()) AS Nullable(String)) FROM "+tbl+" WHERE "+where, 1)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(rows[0][0], 10, 64)
	}
	parts := func(cond string) (int64, error) {
		rows, err := ch.Rows(ctx, "SELECT CAST(toString(count()) AS Nullable(String)) FROM "+cond, 1)
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(rows[0][0], 10, 64)
	}
	if e.RowsBefore, err = count(); err != nil {
		return err
	}
	filter := "database = " + reconcile.QuoteString(db) + " AND table = " + reconcile.QuoteString(name)
	activeBefore, err := parts("system.parts WHERE active AND " + filter)
	if err != nil {
		return err
	}
	outdatedBefore, err := parts("system.parts WHERE NOT active AND " + filter)
	if err != nil {
		return err
	}
	if e.RowsBefore > 0 {
		e.Mutation = "ALTER TABLE " + tbl + " DELETE WHERE " + where + " SETTINGS mutations_sync = 2"
		if err := ch.Exec(ctx, e.Mutation); err != nil {
			return err
		}
		e.Mutation = "ALTER TABLE " + tbl + " DELETE WHERE <the keys> SETTINGS mutations_sync = 2"
	}
	if e.RowsAfter, err = count(); err != nil {
		return err
	}
	if e.OutdatedParts, err = parts("system.parts WHERE NOT active AND " + filter); err != nil {
		return err
	}
	if e.RowsBefore > 0 {
		e.PartsRewritten = max(activeBefore, e.OutdatedParts-outdatedBefore)
	}
	if e.DetachedParts, err = parts("system.detached_parts WHERE " + filter); err != nil {
		return err
	}
	return nil
}

// chWhere is the ClickHouse condition matching the keys: numbers unquoted for numeric columns, strings
// quoted otherwise.
func chWhere(types map[string]string, keyCols []string, keys []Key) (string, error) {
	lit := func(col, v string) (string, error) {
		t, ok := types[col]
		if !ok {
			return "", fmt.Errorf("clickhouse: the table has no key column %s", col)
		}
		if strings.Contains(t, "Int") || strings.Contains(t, "Float") || strings.Contains(t, "Decimal") {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return "", fmt.Errorf("clickhouse: %s=%q is not a number (%s)", col, v, t)
			}
			return v, nil
		}
		return reconcile.QuoteString(v), nil
	}
	var tuples []string
	for _, k := range keys {
		var vals []string
		for _, c := range keyCols {
			l, err := lit(c, k.Values[c])
			if err != nil {
				return "", err
			}
			vals = append(vals, l)
		}
		tuples = append(tuples, "("+strings.Join(vals, ", ")+")")
	}
	cols := make([]string, len(keyCols))
	for i, c := range keyCols {
		cols[i] = reconcile.QuoteIdent(c)
	}
	return "(" + strings.Join(cols, ", ") + ") IN (" + strings.Join(tuples, ", ") + ")", nil
}
