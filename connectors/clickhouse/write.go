package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/connectd/connectd/connect"
)

// flush writes the buffers of the given partitions, in parallel.
func (t *Task) flush(ctx context.Context, tps []connect.TopicPartition) error {
	if len(tps) == 0 {
		return nil
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.cfg.PoolSize)
	for _, tp := range tps {
		t.mu.Lock()
		pb := t.buf[tp]
		var recs []*connect.SinkRecord
		if pb != nil {
			recs = pb.recs
		}
		t.mu.Unlock()
		if len(recs) == 0 {
			continue
		}
		g.Go(func() error { return t.flushPartition(gctx, tp, recs) })
	}
	err := g.Wait()
	if err != nil && isRetriable(err) && !connect.IsDataError(err) && ctx.Err() == nil {
		return t.failed(err)
	}
	if err == nil {
		t.failures.succeeded()
	}
	return err
}

// consumed removes the first n buffered records of tp, which are written (or deliberately skipped).
func (t *Task) consumed(tp connect.TopicPartition, n int, next int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pb := t.buf[tp]
	if pb == nil {
		return
	}
	pb.recs = pb.recs[n:]
	if len(pb.recs) == 0 {
		pb.recs = nil
	}
	t.inserted[tp] = next
}

// flushPartition writes recs (the buffered records of tp, in offset order) block by block.
func (t *Task) flushPartition(ctx context.Context, tp connect.TopicPartition, recs []*connect.SinkRecord) error {
	for len(recs) > 0 {
		n, err := t.writeNext(ctx, tp, recs)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil // exactly-once: waiting for more records of an in-doubt range
		}
		recs = recs[n:]
	}
	return nil
}

// writeNext writes the next block from the head of recs and returns how many records it consumed.
func (t *Task) writeNext(ctx context.Context, tp connect.TopicPartition, recs []*connect.SinkRecord) (int, error) {
	db, table := t.cfg.tableFor(recs[0].Topic)
	tbl, err := t.tables.get(ctx, t.pool, db, table)
	var nt *errNoTable
	if errors.As(err, &nt) {
		if t.cfg.AutoCreate {
			if err = t.createTable(ctx, db, table, recs); err == nil {
				tbl, err = t.tables.get(ctx, t.pool, db, table)
			}
		} else if t.cfg.SuppressTableExistence {
			n := sameTableRun(t.cfg, recs)
			t.log.Warn("table does not exist; skipping records", "table", db+"."+table, "records", n)
			_, last := coords(recs[n-1])
			t.consumed(tp, n, last+1)
			return n, nil
		} else {
			return 0, fmt.Errorf("%w (set %s=true to skip, or %s=true to create it)", err, keySuppressTableExists, keyAutoCreate)
		}
	}
	if err != nil {
		return 0, err
	}
	run := recs[:sameTableRun(t.cfg, recs)]
	if t.cfg.AutoEvolve {
		changed, err := t.evolve(ctx, tbl, run)
		if err != nil {
			return 0, err
		}
		if changed {
			if tbl, err = t.tables.get(ctx, t.pool, db, table); err != nil {
				return 0, err
			}
		}
	}

	var key, staging string
	limit := len(run)
	redo := false
	if t.state != nil {
		key = t.state.key(tbl, tp.Topic, tp.Partition)
		if !tbl.dedupWindow() {
			staging = stagingName(tbl, tp)
			t.mu.Lock()
			if !t.warned[db+"."+table] {
				t.warned[db+"."+table] = true
				t.log.Info("exactlyOnce: the table has no deduplication window; blocks go through a staging table and MOVE PARTITION",
					"table", db+"."+table, "engine", tbl.engine)
			}
			t.mu.Unlock()
		}
		st, err := t.state.get(ctx, key)
		if err != nil {
			return 0, err
		}
		if st.state == stateStaged {
			// Crashed between staging and AFTER: finish the move; nothing of the block is redone.
			if err := t.moveStaged(ctx, tbl, stagingName(tbl, tp)); err != nil {
				return 0, err
			}
			st.state = stateAfter
			if err := t.state.set(ctx, key, st); err != nil {
				return 0, err
			}
		}
		// Drop what is known to be written.
		skip := 0
		for skip < len(run) {
			_, off := coords(run[skip])
			if (st.state == stateAfter && off <= st.max) || (st.state == stateBefore && off < st.min) {
				skip++
				continue
			}
			break
		}
		if skip > 0 {
			_, off := coords(run[skip-1])
			t.consumed(tp, skip, off+1)
			return skip, nil
		}
		if _, off := coords(run[0]); st.state == stateBefore && off > st.max {
			// The in-doubt range is behind: its replay wrote no row (below), so what its first attempt wrote stands.
			st.state = stateAfter
			if err := t.state.set(ctx, key, st); err != nil {
				return 0, err
			}
		}
		if st.state == stateBefore {
			// In doubt: redo exactly [min,max] as one block, once all of it is here.
			redo = true
			limit = 0
			for limit < len(run) {
				_, off := coords(run[limit])
				if off > st.max {
					break
				}
				limit++
			}
			_, lastOff := coords(run[limit-1])
			if lastOff < st.max && limit == len(run) {
				return 0, nil // wait for the rest of the range
			}
		}
	}

	b, err := t.takeBlock(tbl)
	if err != nil {
		return 0, err
	}
	defer t.giveBlock(b)
	n, walk, err := t.fill(ctx, b, tp, run[:limit], redo)
	if err != nil {
		return 0, err
	}
	_, first := coords(run[0])
	_, last := coords(run[n-1])
	if walk != nil {
		if err := t.markers.write(ctx, tbl, tp.Topic, tp.Partition, walk.markers()); err != nil {
			return 0, err
		}
	}
	if b.rows > 0 {
		token := fmt.Sprintf("%s-%d-%d-%d", tp.Topic, tp.Partition, first, last)
		switch {
		case t.state == nil:
			if err := t.insert(ctx, b, tbl.qualified(), token); err != nil {
				return 0, err
			}
		case staging == "":
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateBefore}); err != nil {
				return 0, err
			}
			if err := t.insert(ctx, b, tbl.qualified(), token); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateAfter}); err != nil {
				return 0, err
			}
		default:
			if err := t.ensureStaging(ctx, tbl, staging); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateBefore}); err != nil {
				return 0, err
			}
			stq := quoteIdent(tbl.db) + "." + quoteIdent(staging)
			if err := t.pool.exec(ctx, "TRUNCATE TABLE "+stq); err != nil {
				return 0, err
			}
			if err := t.insert(ctx, b, stq, token); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateStaged}); err != nil {
				return 0, err
			}
			if err := t.moveStaged(ctx, tbl, staging); err != nil {
				return 0, err
			}
			if err := t.state.set(ctx, key, partState{min: first, max: last, state: stateAfter}); err != nil {
				return 0, err
			}
		}
	}
	t.consumed(tp, n, last+1)
	return n, nil
}

// sameTableRun is the length of the head of recs that goes to the same table.
func sameTableRun(cfg *Config, recs []*connect.SinkRecord) int {
	db, table := cfg.tableFor(recs[0].Topic)
	n := 1
	for n < len(recs) {
		if recs[n].Topic != recs[0].Topic {
			if d, tb := cfg.tableFor(recs[n].Topic); d != db || tb != table {
				break
			}
		}
		n++
	}
	return n
}
