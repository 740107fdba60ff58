package maintenance

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// DefaultOrphanAge is how old an unreferenced file must be before it is removed, as in Iceberg's
// DeleteOrphanFiles action: a file written by a commit still in flight (a sink round, a
// compaction, another writer) is not referenced yet and must survive until that commit lands.
const DefaultOrphanAge = 72 * time.Hour

// MinOrphanAge is the smallest age accepted: no commit of the sink takes that long.
const MinOrphanAge = time.Hour

// OrphanOptions tunes orphan removal.
type OrphanOptions struct {
	// OlderThan is the safety age; 0 means DefaultOrphanAge, below MinOrphanAge is refused.
	OlderThan time.Duration
	// DryRun lists the orphans without removing them.
	DryRun bool
}

// OrphanResult reports one orphan removal.
type OrphanResult struct {
	Orphans []string `json:"orphans,omitempty"`
	Removed int      `json:"removed"`
	Bytes   int64    `json:"bytes"`
}

// RemoveOrphanFiles removes the files under ident's location that no snapshot, manifest or
// metadata file of the table references and that are older than the safety age.
func RemoveOrphanFiles(ctx context.Context, cat catalog.Catalog, ident table.Identifier, opts OrphanOptions) (OrphanResult, error) {
	var res OrphanResult
	if opts.OlderThan == 0 {
		opts.OlderThan = DefaultOrphanAge
	}
	if opts.OlderThan < MinOrphanAge {
		return res, fmt.Errorf("orphan file age %s is below the minimum %s: files of commits in flight would be removed", opts.OlderThan, MinOrphanAge)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return res, fmt.Errorf("loading %s: %w", name(ident), err)
	}
	out, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(opts.OlderThan), table.WithDryRun(opts.DryRun))
	if err != nil {
		return res, fmt.Errorf("removing orphan files of %s: %w", name(ident), err)
	}
	res.Orphans = out.OrphanFileLocations
	res.Removed = len(out.DeletedFiles)
	res.Bytes = out.TotalSizeBytes
	return res, nil
}
