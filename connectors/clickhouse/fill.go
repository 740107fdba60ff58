package clickhouse

import (
	"context"

	"github.com/connectd/connectd/connect"
)

// fill adds records to the block until it is full, or with whole all of recs; errant records go to the
// error reporter. It returns the number of records consumed (written or reported).
//
// A redone in-doubt block is whole: its token names the records of the first attempt, and its rows may
// differ from that attempt's (a tombstone resolves against the table, which may hold the first attempt by
// now), so a block cut by size could end elsewhere, get another token and land next to the first attempt.
//
// In CDC mode it also returns the walk of the block's keys, whose markers must be written before the block.
func (t *Task) fill(ctx context.Context, b *block, tp connect.TopicPartition, recs []*connect.SinkRecord, whole bool) (int, *deleteWalk, error) {
	var (
		keys *keyTracker
		walk *deleteWalk
	)
	if t.cfg.DebeziumCDC && b.deletedIdx >= 0 {
		if hasTombstone(recs) {
			keys = newKeyTracker(b.tbl, t.cfg.versionColumn(b.tbl))
		}
		walk = &deleteWalk{keys: map[string]*walkKey{}, start: map[string]bool{}, read: map[string]struct{}{}}
	}
	_, first := coords(recs[0])
	n := 0
	for ; n < len(recs); n++ {
		if !whole && (b.rows >= t.cfg.BatchMaxRows || (b.rows > 0 && b.rows%256 == 0 && b.size() >= t.cfg.BatchMaxBytes)) {
			break
		}
		if walk != nil && n == len(walk.ids) {
			// Markers are read for the records a block takes at most, unless records that add no row
			// (skipped or errant) let it take more.
			end := len(recs)
			if !whole {
				end = min(end, n+t.cfg.BatchMaxRows-b.rows)
			}
			if err := t.readMarkers(ctx, b.tbl, tp, first, walk, recs[n:end]); err != nil {
				return 0, nil, err
			}
		}
		rec := recs[n]
		var (
			r    row
			at   any // the version a bare tombstone deletes at
			skip bool
			err  error
			key  string
		)
		if walk != nil {
			key = walk.ids[n]
		}
		switch {
		case rec.Value == nil && keys != nil && key != "" && walk.afterDelete(key):
			skip = true // the companion of the delete before it, stale or not
		case rec.Value == nil && keys != nil:
			r, at, skip, err = t.tombstone(ctx, b.tbl, keys, rec)
		default:
			r, skip, err = t.extract(rec, b.tbl)
		}
		if err == nil && !skip {
			if err = b.add(&r); err == nil {
				switch {
				case keys != nil && rec.Value == nil:
					keys.observeAt(rec.Key, at, true)
				case keys != nil:
					keys.observe(rec.Key, &r)
				}
				if walk != nil && key != "" && rec.Value != nil {
					_, off := coords(rec)
					walk.observe(key, off, r.deleted)
				}
			}
		}
		if err != nil {
			if connect.IsDataError(err) {
				err = t.report(ctx, rec, b.tbl, err)
			}
			if err != nil {
				return 0, nil, err
			}
		}
	}
	return n, walk, nil
}

// readMarkers adds the keys of recs, the next records of the block, to the walk, with their markers as
// they stand before the block's first offset.
func (t *Task) readMarkers(ctx context.Context, tbl *tableInfo, tp connect.TopicPartition, first int64, w *deleteWalk, recs []*connect.SinkRecord) error {
	var ids []string
	for _, rec := range recs {
		id := ""
		if fields, err := keyFields(rec.Key, tbl); err == nil {
			id = markerKey(fields)
		} // else: reported when the record is written, if it is a tombstone
		w.ids = append(w.ids, id)
		if _, known := w.read[id]; id != "" && !known {
			w.read[id] = struct{}{}
			ids = append(ids, id)
		}
	}
	open, err := t.markers.open(ctx, tbl, tp.Topic, tp.Partition, first, ids)
	for id := range open {
		w.start[id] = true
	}
	return err
}

func (t *Task) report(ctx context.Context, rec *connect.SinkRecord, tbl *tableInfo, cause error) error {
	tp, off := coords(rec)
	err := connect.DataErrorf("clickhouse: record %s@%d cannot be written to %s.%s: %v", tp, off, tbl.db, tbl.name, cause)
	var rep connect.ErrantRecordReporter
	if t.Ctx != nil {
		rep = t.Ctx.ErrantRecordReporter()
	}
	if rep == nil {
		return err
	}
	t.repMu.Lock()
	defer t.repMu.Unlock()
	if rerr := rep.Report(ctx, rec, err); rerr != nil {
		return rerr
	}
	t.written.errant++ // under repMu
	return nil
}
