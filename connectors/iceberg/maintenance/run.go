package maintenance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// Actions selects what Run does.
type Actions struct {
	RewriteManifests, Compact, ExpireSnapshots, RemoveOrphans bool
}

// AllActions is every action.
var AllActions = Actions{RewriteManifests: true, Compact: true, ExpireSnapshots: true, RemoveOrphans: true}

// Report is what Run did to one table.
type Report struct {
	Table      string           `json:"table"`
	Before     FileStats        `json:"before"`
	After      FileStats        `json:"after"`
	Retention  *RetentionResult `json:"retention,omitempty"`
	Manifests  *ManifestResult  `json:"manifests,omitempty"`
	Compaction *CompactResult   `json:"compaction,omitempty"`
	Expiry     *ExpireResult    `json:"expiry,omitempty"`
	// Deletes is the expiry of <table>__deletes rows older than the policy's horizon.
	Deletes *DeletesExpiryResult `json:"deletes_expiry,omitempty"`
	Orphans *OrphanResult        `json:"orphans,omitempty"`
	// Companion is the maintenance of <table>__deletes, when the table has one.
	Companion *Report `json:"companion,omitempty"`
	Seconds   float64 `json:"seconds"`
	Error     string  `json:"error,omitempty"`
}

// Run maintains one table: the policy's retention is applied first (always, whatever the actions),
// then manifests are rewritten, then compaction, snapshot expiry
// (with the deletes horizon of its <table>__deletes) and orphan removal; every snapshot an action
// commits carries the sink's summary entries of the head it replaces. It stops at the first
// action that fails; the report holds what was done and the error. Then the table's
// <table>__deletes, when it has one, is maintained the same way (Report.Companion).
func Run(ctx context.Context, cat catalog.Catalog, ident table.Identifier, pol Policy, do Actions) (*Report, error) {
	r, err := runOne(ctx, cat, ident, pol, do)
	if err != nil || strings.HasSuffix(ident[len(ident)-1], icetable.TombstoneSuffix) {
		return r, err
	}
	cpol := pol
	cpol.DeletesHorizon = 0
	cpol.Retention = RetentionOptions{} // its rows are aged out by the deletes horizon
	c, err := runOne(ctx, cat, icetable.TombstoneIdent(ident), cpol, do)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return r, nil
	}
	r.Companion = c
	if err != nil {
		r.Error = err.Error()
	}
	return r, err
}

func runOne(ctx context.Context, cat catalog.Catalog, ident table.Identifier, pol Policy, do Actions) (*Report, error) {
	r := &Report{Table: name(ident)}
	start := time.Now()
	err := run(ctx, cat, ident, pol, do, r)
	r.Seconds = time.Since(start).Seconds()
	if err != nil {
		r.Error = err.Error()
	}
	return r, err
}

func run(ctx context.Context, cat catalog.Catalog, ident table.Identifier, pol Policy, do Actions, r *Report) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("loading %s: %w", name(ident), err)
	}
	branch := pol.Compact.Branch
	if r.Before, err = Stats(ctx, tbl, branch); err != nil {
		return err
	}
	if pol.Retention.Enabled() {
		res, err := ApplyRetention(ctx, cat, ident, pol.Retention, time.Now())
		r.Retention = &res
		if err != nil {
			return err
		}
	}
	if do.RewriteManifests {
		res, err := RewriteManifests(ctx, cat, ident, branch)
		r.Manifests = &res
		if err != nil {
			return err
		}
	}
	if do.Compact {
		res, err := Compact(ctx, cat, ident, pol.Compact)
		r.Compaction = &res
		if err != nil {
			return err
		}
	}
	if do.ExpireSnapshots {
		res, err := ExpireSnapshots(ctx, cat, ident, pol.Expire)
		r.Expiry = &res
		if err != nil {
			return err
		}
		if pol.DeletesHorizon > 0 {
			dres, err := ExpireDeletes(ctx, cat, ident, pol.Compact.Branch, time.Now().Add(-pol.DeletesHorizon))
			r.Deletes = &dres
			if err != nil {
				return err
			}
		}
	}
	if do.RemoveOrphans {
		res, err := RemoveOrphanFiles(ctx, cat, ident, pol.Orphans)
		r.Orphans = &res
		if err != nil {
			return err
		}
	}
	if tbl, err = cat.LoadTable(ctx, ident); err != nil {
		return fmt.Errorf("loading %s: %w", name(ident), err)
	}
	r.After, err = Stats(ctx, tbl, branch)
	return err
}
