package reconcile

import (
	"context"

	"github.com/connectd/connectd/connectors/clickhouse"
)

// ClickHouse is a native-protocol connection with the ClickHouse sink's connection settings, for the
// commands built on this package's configuration (erase, restore drills).
type ClickHouse struct{ c *chConn }

// DialClickHouse connects with cfg; clientName is shown in the server's query log.
func DialClickHouse(ctx context.Context, cfg *clickhouse.Config, clientName string) (*ClickHouse, error) {
	c, err := dialClickHouse(ctx, cfg, clientName)
	if err != nil {
		return nil, err
	}
	return &ClickHouse{c: c}, nil
}

// Exec runs a statement without result.
func (c *ClickHouse) Exec(ctx context.Context, sql string) error { return c.c.exec(ctx, sql) }

// Rows runs a query whose n result columns are each cast to Nullable(String) by the caller and returns
// its rows (NULL as "").
func (c *ClickHouse) Rows(ctx context.Context, sql string, n int) ([][]string, error) {
	return c.c.rows(ctx, sql, n)
}

// Columns returns the table's column names and types, in order.
func (c *ClickHouse) Columns(ctx context.Context, db, table string) ([]string, map[string]string, error) {
	t, err := c.c.describe(ctx, db, table)
	if err != nil {
		return nil, nil, err
	}
	return t.columns, t.types, nil
}

// Close closes the connection.
func (c *ClickHouse) Close() error { return c.c.Close() }

// QuoteIdent quotes a ClickHouse identifier.
func QuoteIdent(s string) string { return quoteIdent(s) }

// QuoteString quotes a ClickHouse string literal.
func QuoteString(s string) string { return quoteString(s) }
