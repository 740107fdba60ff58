package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/ch-go"
)

// insert sends one block as one INSERT, retrying retriable failures with the same token.
func (t *Task) insert(ctx context.Context, b *block, into, token string) error {
	body, input := b.input(into)
	for _, c := range input {
		if err := prepare(c.Data.(column)); err != nil {
			return err
		}
	}
	settings := []ch.Setting{{Key: "insert_deduplication_token", Value: token, Important: true}}
	for _, s := range t.cfg.insertSettings() {
		settings = append(settings, ch.Setting{Key: s.Key, Value: s.Value, Important: true})
	}
	deadline := time.Now().Add(t.cfg.RetryTimeout)
	var err error
	for attempt := 0; ; attempt++ {
		err = t.pool.do(ctx, func(c *ch.Client) error {
			qctx, cancel := context.WithTimeout(ctx, t.cfg.InsertTimeout)
			defer cancel()
			return c.Do(qctx, ch.Query{Body: body, Input: input, Settings: settings})
		})
		if err == nil {
			t.mu.Lock()
			t.written.rows += int64(b.rows)
			t.written.blocks++
			t.mu.Unlock()
			return nil
		}
		if ex, ok := ch.AsException(err); ok && (ex.Code == 16 || ex.Code == 47 || ex.Code == 53) {
			// NO_SUCH_COLUMN_IN_TABLE / UNKNOWN_IDENTIFIER / TYPE_MISMATCH: the table changed under us.
			t.tables.invalidate(b.tbl.db, b.tbl.name)
		}
		if !isRetriable(err) || attempt+1 >= max(t.cfg.RetryCount, 1) || time.Now().After(deadline) {
			break
		}
		t.log.Warn("insert failed; retrying", "table", b.tbl.db+"."+b.tbl.name, "token", token, "attempt", attempt+1, "err", err)
		select {
		case <-time.After(backoff(attempt)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("clickhouse: insert into %s.%s (token %s): %w", b.tbl.db, b.tbl.name, token, err)
}
