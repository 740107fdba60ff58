package clickhouse

import (
	"context"
	"fmt"
	"sync"
)

// ownTable is a table the sink keeps for itself in the target database (the exactly-once state, the
// tombstone markers): created on first use, ON CLUSTER when keeperOnCluster is set; a failed creation is
// tried again on the next use.
type ownTable struct {
	cfg  *Config
	pool *pool
	name string // quoted db.table
	what string // for errors: "exactly-once state table", "the delete marker table"
	ddl  string // the columns and engine after CREATE TABLE IF NOT EXISTS <name>

	once    sync.Once
	initErr error
}

func newOwnTable(cfg *Config, p *pool, table, what, ddl string) *ownTable {
	return &ownTable{cfg: cfg, pool: p, name: quoteIdent(cfg.Database) + "." + quoteIdent(table), what: what, ddl: ddl}
}

func (o *ownTable) ensure(ctx context.Context) error {
	o.once.Do(func() {
		onCluster := ""
		if o.cfg.StateOnCluster != "" {
			onCluster = " ON CLUSTER " + quoteIdent(o.cfg.StateOnCluster)
		}
		o.initErr = o.pool.exec(ctx, "CREATE TABLE IF NOT EXISTS "+o.name+onCluster+" "+o.ddl)
	})
	if o.initErr != nil {
		err := o.initErr
		o.once = sync.Once{}
		o.initErr = nil
		return fmt.Errorf("clickhouse: creating %s %s: %w", o.what, o.name, err)
	}
	return nil
}
