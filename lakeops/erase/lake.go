package erase

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
)

// Roles of the Iceberg tables an erase reaches.
const (
	RoleCurrent = "current"
	RoleDeletes = "deletes"
	RoleHistory = "history"
	RoleSCD     = "scd"
)

// SummaryErase is the snapshot summary key of an erase's delete commit: the number of keys (never the
// keys themselves, which would be a copy of them).
const SummaryErase = "connectd.erase.keys"

// TableErasure is what an erase did to one Iceberg table.
type TableErasure struct {
	Table string `json:"table"`
	Role  string `json:"role"`
	// Match is the column(s) the keys were matched on.
	Match string `json:"match"`
	// RowsDeleted are the live rows of the keys the delete removed.
	RowsDeleted      int64 `json:"rows_deleted"`
	DeleteSnapshotID int64 `json:"delete_snapshot_id,omitempty"`
	// HeldBefore are the files that held a key before the erase, FilesRemoved those of them now gone
	// from storage.
	HeldBefore   []FileHit           `json:"held_before"`
	FilesRemoved []string            `json:"files_removed"`
	Maintenance  *maintenance.Report `json:"maintenance,omitempty"`
	// Remaining are the files that still hold a key, read after the erase; FilesRead how many files of
	// the table's location that read covered.
	Remaining []FileHit `json:"remaining"`
	FilesRead int       `json:"files_read"`
	Seconds   float64   `json:"seconds"`
	Error     string    `json:"error,omitempty"`
}

// eraseTable removes the rows matching filter from the table and every copy of them from its files: a
// delete of the live rows, then maintenance (manifests rewritten, the files with deletes compacted, every
// snapshot but the new head expired, the files only they referenced deleted), then removal of the files
// that held a key and that no snapshot references any more. Files that held a key but no snapshot
// referenced before the erase either (a commit in flight) are left and reported.
func eraseTable(ctx context.Context, cat catalog.Catalog, name, role, match string, filter ice.BooleanExpression, nd needles, nkeys int) *TableErasure {
	start := time.Now()
	te := &TableErasure{Table: name, Role: role, Match: match, HeldBefore: []FileHit{}, FilesRemoved: []string{}, Remaining: []FileHit{}}
	if err := te.run(ctx, cat, filter, nd, nkeys); err != nil {
		te.Error = err.Error()
	}
	te.Seconds = time.Since(start).Seconds()
	return te
}

func (te *TableErasure) run(ctx context.Context, cat catalog.Catalog, filter ice.BooleanExpression, nd needles, nkeys int) error {
	ident := catalog.ToIdentifier(te.Table)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("loading %s: %w", te.Table, err)
	}
	if te.HeldBefore, _, err = scanLocation(ctx, tbl, nd); err != nil {
		return err
	}
	if tbl.CurrentSnapshot() != nil {
		if te.RowsDeleted, err = icetable.CountRows(ctx, tbl, filter); err != nil {
			return err
		}
	}
	if te.RowsDeleted > 0 {
		// the delete carries the head's offsets: the sink resumes from them, and without them snapshot
		// expiry would keep every ancestor up to the one carrying them, with the files of the erased rows
		props := icetable.OffsetsSummary(tbl, tbl.CurrentSnapshot())
		props[SummaryErase] = fmt.Sprint(nkeys)
		nt, err := tbl.Delete(ctx, filter, props)
		if err != nil {
			return fmt.Errorf("deleting the keys' rows of %s: %w", te.Table, err)
		}
		if s := nt.CurrentSnapshot(); s != nil {
			te.DeleteSnapshotID = s.SnapshotID
		}
	}
	if tbl.CurrentSnapshot() != nil {
		pol := maintenance.Policy{Expire: maintenance.ExpireOptions{RetainLast: 1, MaxAge: time.Millisecond}}
		do := maintenance.Actions{RewriteManifests: true, Compact: true, ExpireSnapshots: true}
		rep, err := maintenance.Run(ctx, cat, ident, pol, do)
		te.Maintenance = rep
		if err != nil {
			return fmt.Errorf("maintenance of %s: %w", te.Table, err)
		}
	}
	if tbl, err = cat.LoadTable(ctx, ident); err != nil {
		return fmt.Errorf("loading %s: %w", te.Table, err)
	}
	refs, _, err := references(ctx, tbl)
	if err != nil {
		return err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	for _, h := range te.HeldBefore {
		if h.Reach != "unreferenced" && !refs[normPath(h.Path)] {
			if err := fsys.Remove(h.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", h.Path, err)
			}
		}
		if f, err := fsys.Open(h.Path); err == nil {
			_ = f.Close()
		} else if errors.Is(err, fs.ErrNotExist) {
			te.FilesRemoved = append(te.FilesRemoved, h.Path)
		}
	}
	te.Remaining, te.FilesRead, err = scanLocation(ctx, tbl, nd)
	return err
}
