package maintenance

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/conflict"
)

// ManifestResult reports one manifest rewrite.
type ManifestResult struct {
	ManifestsBefore int `json:"manifests_before"`
	ManifestsAfter  int `json:"manifests_after"`
	Rewritten       int `json:"rewritten"`
	Added           int `json:"added"`
}

// RewriteManifests merges the small data manifests of branch's head (every sink commit adds
// one) into target-size ones, in a `replace` snapshot that changes no file: query planning then
// reads a few manifests instead of one per commit. Delete manifests stay as they are (compaction
// removes the delete files). The snapshot carries the sink's summary entries of the head it
// replaces (sinkSummary), so the head keeps them.
func RewriteManifests(ctx context.Context, cat catalog.Catalog, ident table.Identifier, branch string) (ManifestResult, error) {
	var res ManifestResult
	if branch == "" {
		branch = table.MainBranch
	}
	for attempt := 0; ; attempt++ {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return res, fmt.Errorf("loading %s: %w", name(ident), err)
		}
		if res.ManifestsBefore, err = manifestCount(ctx, tbl, branch); err != nil {
			return res, err
		}
		res.ManifestsAfter = res.ManifestsBefore
		props := sinkSummary(tbl, branchHead(tbl, branch))
		props[SummaryMaintenance] = "rewrite-manifests"
		tx, err := withSummary(tbl, cat, props).NewTransactionOnBranchWithError(branch)
		if err != nil {
			return res, err
		}
		if err := tx.AssertRefSnapshotID(branch); err != nil {
			return res, err
		}
		out, err := tx.RewriteManifests(ctx)
		if err != nil {
			return res, fmt.Errorf("rewriting manifests of %s: %w", name(ident), err)
		}
		if out.IsNoOp() {
			return res, nil
		}
		ntbl, err := tx.Commit(ctx)
		if err = conflict.Of(err); err != nil {
			if attempt < 3 && errors.Is(err, conflict.ErrHeadMoved) {
				continue
			}
			return res, fmt.Errorf("committing the manifest rewrite of %s: %w", name(ident), err)
		}
		res.Rewritten, res.Added = len(out.RewrittenManifests), len(out.AddedManifests)
		res.ManifestsAfter, err = manifestCount(ctx, ntbl, branch)
		return res, err
	}
}

func manifestCount(ctx context.Context, tbl *table.Table, branch string) (int, error) {
	snap := branchHead(tbl, branch)
	if snap == nil {
		return 0, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	ms, err := snap.Manifests(fs)
	if err != nil {
		return 0, fmt.Errorf("reading manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	return len(ms), nil
}
