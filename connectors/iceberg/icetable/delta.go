package icetable

import (
	"context"
	"fmt"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"time"
)

// PlanDelta collapses recs to one final state per key and returns the rows to insert and the
// equality-delete rows. Within a commit the newest version of a key wins (by version column,
// else by Kafka order: recs arrive in offset order per partition); equality deletes only reach
// Rows of earlier snapshots, so two versions of one key must never both be written.
//
// Tombstones (version-less deletes: Debezium's tombstone after a delete, a key-only delete): a
// tombstone whose key's latest versioned event in Kafka order is a delete belongs to that delete,
// won or stale (Debezium writes one right after each delete), and changes nothing. Across commits
// that is known from the live row's StaleDeleteColumn (companion.go). Any other tombstone is bare
// (its delete compacted away, or ExtractNewRecordState turned the delete into it): it deletes the
// Key at the highest version known for it, the highest of those seen in the commit before it, the
// Live row's and the key's last recorded delete, and later records in the commit win only from
// above that version.
//
// With tombstones (tombstones.go), an upsert at or below the key's delete version is dropped,
// and tombs returns the tombstone rows (id columns + version) of the surviving deletes.
func (w *Writer) PlanDelta(ctx context.Context, recs []Rec, ids []string, st *CommitStats) (data, dels []*Rec, tombs []icerow.Row, err error) {
	vc := w.Opts.KeyVersionColumn()
	version := func(r Rec) any {
		switch {
		case vc == "":
			return nil
		case r.Key != nil:
			return r.Key.Version
		}
		return r.Row[vc]
	}
	key := func(r Rec) string {
		if r.Key != nil {
			return r.Key.Key
		}
		return icerow.KeyOf(r.Row, ids)
	}
	vcInTable, lookup, tombsOn := w.planReads(ids)

	// the live rows and recorded deletes of every key of the commit, read before the walk: a tombstone
	// that is its key's first record here belongs to a stale delete of an earlier commit when the live
	// row says so
	var keys []icerow.Row
	if lookup || tombsOn {
		seen := map[string]bool{}
		for _, r := range recs {
			if k := key(r); !seen[k] {
				seen[k] = true
				keys = append(keys, r.Row)
			}
		}
	}
	var current map[string][]icerow.Row
	if lookup && BranchHead(w.Tbl, w.Opts.CommitBranch) != nil {
		current, err = w.lookupCurrent(ctx, ids, keys)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("lookup current rows: %w", err)
		}
	}
	// Read after the table head above, which the commit's compare-and-swap pins
	var deleted map[string]any
	if tombsOn {
		deleted, err = w.loadTombstones(ctx, ids, keys)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("lookup tombstones: %w", err)
		}
	}

	latest := make(map[string]int32, len(recs)) // per key, its place in order and final
	final := make([]Rec, 0, len(recs))          // per key, the record that wins so far
	order := make([]string, 0, len(recs))
	highest := map[string]any{} // per key, the highest version seen in this commit
	bare := map[string]bool{}   // the keys whose final state in the commit is a version-less delete (a bare tombstone)
	// per key, the last bare tombstone in the commit and the highest version seen before it: it deletes at the
	// highest version known for the key, which is only known once the live row is read, so events after it in
	// the commit win only if they are above that
	bareTomb := map[string]Rec{}
	bareAt := map[string]any{}
	// per key, whether its latest versioned event in Kafka order is a delete (won or stale)
	afterDelete := map[string]bool{}
	if vcInTable {
		for k, rows := range current {
			setFlag(afterDelete, k, staleDeleteFlag(rows))
		}
	}
	for _, r := range recs {
		k := key(r)
		v := version(r)
		tomb := r.Op == icerow.OpDelete && v == nil
		if tomb && afterDelete[k] {
			st.Collapsed++ // the companion of the delete before it
			continue
		}
		if !tomb {
			setFlag(afterDelete, k, r.Op == icerow.OpDelete)
		}
		if v != nil {
			if h, ok := highest[k]; !ok || w.Opts.CmpVersion(v, h) > 0 {
				highest[k] = v
			}
		}
		if tomb {
			bareTomb[k], bareAt[k] = r, highest[k]
		}
		pi, ok := latest[k]
		if !ok {
			latest[k] = int32(len(final))
			final = append(final, r)
			setFlag(bare, k, tomb)
			order = append(order, k)
			continue
		}
		prev := final[pi]
		st.Collapsed++
		switch pv := version(prev); {
		case tomb:
			if h := highest[k]; h != nil {
				r.Row = icerow.CloneRow(r.Row)
				r.Row[vc] = h
			}
		case v != nil && pv != nil && w.Opts.CmpVersion(v, pv) < 0:
			// a version-less record (e.g. a key-only delete) falls back to Kafka order
			continue // an older version arriving later (redelivery): keep the newer one
		case r.Op != icerow.OpDelete && prev.Op == icerow.OpDelete && v != nil && pv != nil && w.Opts.CmpVersion(v, pv) == 0:
			continue // a delete wins at its version, as against <table>__deletes
		}
		final[pi] = r
		setFlag(bare, k, tomb)
	}

	names, _, err := w.deleteColumns(ids)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now().UTC()
	// keys whose live row stays but whose StaleDeleteColumn must change: rewritten as they are
	var reflag map[string]bool
	for j, k := range order {
		r := final[j]
		cur := current[k]
		v := version(r)
		flag := vcInTable && afterDelete[k]
		if bt, ok := bareTomb[k]; ok && vcInTable {
			// a bare tombstone deletes at the highest version known for the key: the commit's before it (a
			// stale redelivery may be all the commit saw), the live row's, or its last delete's; what
			// followed it in the commit wins only from above that version
			at := bareAt[k]
			for _, c := range cur {
				if cv := c[vc]; cv != nil && (at == nil || w.Opts.CmpVersion(cv, at) > 0) {
					at = cv
				}
			}
			if dv, ok := deleted[k]; ok && dv != nil && (at == nil || w.Opts.CmpVersion(dv, at) > 0) {
				at = dv
			}
			if bare[k] || (v != nil && at != nil && w.Opts.CmpVersion(v, at) <= 0) {
				r = bt
				r.Row = icerow.CloneRow(bt.Row)
				if at != nil {
					r.Row[vc] = at
				}
				v = at
			}
		}
		if vcInTable && len(cur) > 0 && v != nil && cur[0][vc] != nil && w.Opts.CmpVersion(v, cur[0][vc]) < 0 {
			st.StaleDropped++
			if staleDeleteFlag(cur) != flag {
				if reflag == nil {
					reflag = map[string]bool{}
				}
				reflag[k] = flag
			}
			continue
		}
		if tombsOn && v != nil {
			dv, wasDeleted := deleted[k]
			switch {
			case r.Op != icerow.OpDelete && wasDeleted && w.Opts.CmpVersion(v, dv) <= 0:
				st.StaleDropped++ // superseded by a delete committed earlier: stays deleted
				continue
			case r.Op == icerow.OpDelete && (!wasDeleted || w.Opts.CmpVersion(v, dv) > 0):
				tr := project(r.Row, ids)
				tr[vc] = v
				tr[DeletedAtColumn] = now
				tombs = append(tombs, tr)
			}
		}
		if r.Op != icerow.OpDelete {
			if r.JSON != nil && flag {
				if err := r.decode(); err != nil {
					return nil, nil, nil, err
				}
			}
			if r.JSON == nil { // else Row holds the planned columns only, none of them the mark (keyRows)
				r.Row = withStaleDeleteFlag(r.Row, flag)
			}
		}
		final[j] = r // the plan's records point into final, which stays as it is from here
		if r.Op != icerow.OpDelete {
			data = append(data, &final[j])
		}
		if lookup {
			dels = appendKeyDeletes(dels, cur, names)
			continue
		}
		if r.JSON != nil {
			dels = append(dels, &final[j]) // its delete columns are read from its bytes
			continue
		}
		dels = append(dels, &Rec{Op: icerow.OpDelete, Row: project(r.Row, names)})
	}
	if len(reflag) > 0 {
		rows, err := w.reflagLiveRows(ctx, ids, current, reflag)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, row := range rows {
			data = append(data, &Rec{Op: icerow.OpUpdate, Row: row})
		}
		for k := range reflag {
			dels = appendKeyDeletes(dels, current[k], names)
		}
	}
	for _, r := range data {
		if r.Row[StaleDeleteColumn] != nil {
			if err := w.ensureStaleDeleteColumn(ctx); err != nil {
				return nil, nil, nil, err
			}
			break
		}
	}
	return data, dels, tombs, nil
}

// setFlag sets key k's flag in m, which holds only the keys flagged: most are not.
func setFlag(m map[string]bool, k string, on bool) {
	if on {
		m[k] = true
	} else {
		delete(m, k)
	}
}

// planReads says what planDelta reads besides the records: whether the version column is a table
// column, whether the live rows of the commit's keys are looked up, whether tombstones are kept.
func (w *Writer) planReads(ids []string) (vcInTable, lookup, tombsOn bool) {
	// the committed row's version is only known when the version column is a table column
	if vc := w.Opts.KeyVersionColumn(); vc != "" {
		_, vcInTable = w.Tbl.Schema().FindFieldByName(vc)
	}
	return vcInTable, vcInTable || w.partitionMayMove(ids), w.tombstonesEnabled()
}

// appendKeyDeletes deletes the key wherever it currently lives (its old partition), and in the new
// row's partition too when that differs (a no-op delete is harmless).
func appendKeyDeletes(dels []*Rec, cur []icerow.Row, names []string) []*Rec {
	seen := map[string]bool{}
	for _, c := range cur {
		d := project(c, names)
		pk := icerow.KeyOf(d, names)
		if !seen[pk] {
			seen[pk] = true
			dels = append(dels, &Rec{Op: icerow.OpDelete, Row: d})
		}
	}
	return dels
}
