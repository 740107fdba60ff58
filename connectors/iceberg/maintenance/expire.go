package maintenance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/conflict"
)

// ExpireOptions says which snapshots to keep.
type ExpireOptions struct {
	// RetainLast keeps at least this many snapshots of each branch, whatever their age; 0 means 1.
	RetainLast int
	// MaxAge expires older snapshots beyond RetainLast; 0 takes the table's
	// history.expire.max-snapshot-age-ms (5 days by default).
	MaxAge time.Duration
	// Grace keeps every snapshot that was a branch's head less than this long ago, whatever
	// MaxAge says: a sink round or a query that loaded it may still be reading its manifests.
	// 0 keeps none for it (the connector's policy defaults to DefaultExpireGrace).
	Grace time.Duration
	// KeepFiles leaves the files of expired snapshots in storage (orphan removal takes them later);
	// by default they are deleted once the expiry is committed.
	KeepFiles bool
	// CommitRetries after a concurrent commit; 0 means 3.
	CommitRetries int
}

// ExpireResult reports one expiry.
type ExpireResult struct {
	SnapshotsBefore int `json:"snapshots_before"`
	SnapshotsAfter  int `json:"snapshots_after"`
	// ProtectedDepth is how many ancestors of a branch head were kept for the sink's offsets.
	ProtectedDepth int `json:"protected_depth"`
	// GraceDepth is how many ancestors of a branch head were kept because they were its head
	// within the grace age.
	GraceDepth int `json:"grace_depth,omitempty"`
}

// DefaultExpireGrace is the grace of the connector's and the command's expiry: above the
// usual commit interval, so that a round's loaded head outlives the round.
const DefaultExpireGrace = 5 * time.Minute

// ExpireSnapshots expires old snapshots of ident, never the latest snapshot of a branch that
// carries a consumer group's offsets (kafka.connect.offsets.<group>): the sink reads its offsets
// from the nearest ancestor of the head carrying them, so every snapshot up to the deepest such
// ancestor is kept. Without it a restarted sink would find no offsets and re-deliver everything.
func ExpireSnapshots(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts ExpireOptions) (ExpireResult, error) {
	var res ExpireResult
	if opts.RetainLast <= 0 {
		opts.RetainLast = 1
	}
	if opts.CommitRetries <= 0 {
		opts.CommitRetries = 3
	}
	for attempt := 0; ; attempt++ {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return res, fmt.Errorf("loading %s: %w", name(ident), err)
		}
		meta := tbl.Metadata()
		res.SnapshotsBefore = len(meta.Snapshots())
		keep := opts.RetainLast
		res.ProtectedDepth, res.GraceDepth = 0, 0
		for refName, ref := range meta.Refs() {
			if ref.SnapshotRefType != table.BranchRef {
				continue
			}
			head := tbl.SnapshotByName(refName)
			if d := offsetsDepth(tbl, head); d+1 > keep {
				keep = d + 1
				res.ProtectedDepth = d
			}
			if opts.Grace > 0 {
				if d := recentDepth(tbl, head, time.Now().Add(-opts.Grace)); d+1 > keep {
					keep = d + 1
					res.GraceDepth = d
				}
			}
			if ref.MinSnapshotsToKeep != nil && *ref.MinSnapshotsToKeep < keep {
				// the ref's own retention wins over the options: it could expire the offsets
				return res, fmt.Errorf("%s: branch %s keeps only %d snapshots, its offsets need %d", name(ident), refName, *ref.MinSnapshotsToKeep, keep)
			}
		}
		tx := tbl.NewTransaction()
		expOpts := []table.ExpireSnapshotsOpt{table.WithRetainLast(keep), table.WithPostCommit(!opts.KeepFiles)}
		if opts.MaxAge > 0 {
			expOpts = append(expOpts, table.WithOlderThan(opts.MaxAge))
		}
		if err := tx.ExpireSnapshots(expOpts...); err != nil {
			return res, fmt.Errorf("expiring snapshots of %s: %w", name(ident), err)
		}
		ntbl, err := tx.Commit(ctx)
		if err != nil && ntbl != nil && onlyNotExist(err) {
			// committed: iceberg-go then also removes the files that the DELETED entries of the
			// expired manifests name, which the expiry that expired their previous snapshot
			// already removed
			err = nil
		}
		if err = conflict.Of(err); err != nil {
			if attempt < opts.CommitRetries && errors.Is(err, conflict.ErrHeadMoved) {
				continue
			}
			return res, fmt.Errorf("committing snapshot expiry of %s: %w", name(ident), err)
		}
		res.SnapshotsAfter = len(ntbl.Metadata().Snapshots())
		return res, nil
	}
}

// onlyNotExist reports whether every error joined in err is a missing file.
func onlyNotExist(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !onlyNotExist(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	return errors.Is(err, fs.ErrNotExist)
}

// recentDepth returns how many ancestors back from head (0: head itself) the oldest snapshot
// that was still the head at since is: each ancestor stopped being the head when its child was
// committed.
func recentDepth(tbl *table.Table, head *table.Snapshot, since time.Time) int {
	depth := 0
	for cur := head; cur != nil && cur.ParentSnapshotID != nil; depth++ {
		if cur.TimestampMs < since.UnixMilli() {
			break // its parent stopped being the head before since
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
		if cur == nil {
			break
		}
	}
	return depth
}
