package clickhouse

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// tableInfo is a target table's definition as read from system.columns and system.tables.
type tableInfo struct {
	db, name   string
	engine     string
	columns    []colInfo
	byName     map[string]int
	engineFull string
	versionCol string // ReplacingMergeTree(ver, ...) argument, if any
	deletedCol string // ReplacingMergeTree(ver, is_deleted) argument, if any
	sortingKey string // ORDER BY expression
	fetched    time.Time
}

type colInfo struct {
	name, typ   string
	defaultKind string // "", DEFAULT, MATERIALIZED, ALIAS, EPHEMERAL
}

// insertable reports whether the column may appear in an INSERT.
func (c colInfo) insertable() bool { return c.defaultKind == "" || c.defaultKind == "DEFAULT" }

// dedupWindow reports whether inserts into the table are deduplicated by token: Replicated engines
// always are; a non-replicated MergeTree only with non_replicated_deduplication_window > 0.
func (t *tableInfo) dedupWindow() bool {
	if strings.HasPrefix(t.engine, "Replicated") || strings.HasPrefix(t.engine, "Shared") {
		return true
	}
	m := dedupWindowRe.FindStringSubmatch(t.engineFull)
	return m != nil && m[1] != "0"
}

var dedupWindowRe = regexp.MustCompile(`non_replicated_deduplication_window\s*=\s*(\d+)`)

func (t *tableInfo) qualified() string { return quoteIdent(t.db) + "." + quoteIdent(t.name) }

var rmtArgs = regexp.MustCompile(`ReplacingMergeTree\(\s*([^,()\s]+)\s*(?:,\s*([^,()\s]+)\s*)?\)`)

type tableCache struct {
	mu      sync.Mutex
	tables  map[string]*tableInfo
	refresh time.Duration
}

func newTableCache(refresh time.Duration) *tableCache {
	return &tableCache{tables: map[string]*tableInfo{}, refresh: refresh}
}

func (tc *tableCache) invalidate(db, table string) {
	tc.mu.Lock()
	delete(tc.tables, db+"."+table)
	tc.mu.Unlock()
}

// errNoTable means the table does not exist, or the user may not see it: system.columns lists only
// the columns of tables the user has a grant on.
type errNoTable struct{ db, table, user string }

func (e *errNoTable) Error() string {
	return fmt.Sprintf("clickhouse: table %s.%s does not exist or user %q has no grant on it", e.db, e.table, e.user)
}

func (tc *tableCache) get(ctx context.Context, p *pool, db, table string) (*tableInfo, error) {
	key := db + "." + table
	tc.mu.Lock()
	t, ok := tc.tables[key]
	tc.mu.Unlock()
	if ok && (tc.refresh <= 0 || time.Since(t.fetched) < tc.refresh) {
		return t, nil
	}
	rows, err := p.selectStrings(ctx, fmt.Sprintf(
		"SELECT name, type, default_kind FROM system.columns WHERE database = %s AND table = %s ORDER BY position",
		quoteString(db), quoteString(table)), 3)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: reading columns of %s: %w", key, err)
	}
	if len(rows) == 0 {
		return nil, &errNoTable{db, table, p.cfg.User}
	}
	eng, err := p.selectStrings(ctx, fmt.Sprintf(
		"SELECT engine, engine_full, sorting_key FROM system.tables WHERE database = %s AND name = %s", quoteString(db), quoteString(table)), 3)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: reading engine of %s: %w", key, err)
	}
	t = &tableInfo{db: db, name: table, byName: map[string]int{}, fetched: time.Now()}
	for _, r := range rows {
		t.byName[r[0]] = len(t.columns)
		t.columns = append(t.columns, colInfo{name: r[0], typ: r[1], defaultKind: r[2]})
	}
	if len(eng) > 0 {
		t.engine, t.engineFull, t.sortingKey = eng[0][0], eng[0][1], eng[0][2]
		if m := rmtArgs.FindStringSubmatch(eng[0][1]); m != nil {
			t.versionCol = strings.Trim(m[1], "`\"")
			t.deletedCol = strings.Trim(m[2], "`\"")
		}
	}
	tc.mu.Lock()
	tc.tables[key] = t
	tc.mu.Unlock()
	return t, nil
}
