package maintenance

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connect"
	iceberg "github.com/connectd/connectd/connectors/iceberg"
)

// The connector runs this package between its commit rounds when
// iceberg.tables.maintenance.interval-ms is set; linking the package is what enables it.
func init() {
	iceberg.RegisterMaintenance(connectorMaintenance)
}

// Action names of iceberg.tables.maintenance.actions, the flags of `connectd iceberg maintain`.
const (
	ActionRewriteManifests = "rewrite-manifests"
	ActionCompact          = "compact"
	ActionExpireSnapshots  = "expire-snapshots"
	ActionRemoveOrphans    = "remove-orphans"
)

// ParseActions reads a comma-separated list of action names; an empty list is every action.
func ParseActions(s string) (Actions, error) {
	var a Actions
	for _, n := range strings.Split(s, ",") {
		switch strings.TrimSpace(n) {
		case "":
		case ActionRewriteManifests:
			a.RewriteManifests = true
		case ActionCompact:
			a.Compact = true
		case ActionExpireSnapshots:
			a.ExpireSnapshots = true
		case ActionRemoveOrphans:
			a.RemoveOrphans = true
		default:
			return a, fmt.Errorf("unknown action %q (one of %s, %s, %s, %s)", strings.TrimSpace(n),
				ActionRewriteManifests, ActionCompact, ActionExpireSnapshots, ActionRemoveOrphans)
		}
	}
	if a == (Actions{}) {
		return AllActions, nil
	}
	return a, nil
}

// connectorMaintenance is the connector's view of Run: the policy and actions of its properties,
// the table's commit branch, and the numbers its metrics report.
func connectorMaintenance(props map[string]string) (iceberg.MaintainTable, error) {
	pol, err := ParsePolicy(props)
	if err != nil {
		return nil, err
	}
	do, err := ParseActions(props[iceberg.KeyMaintenanceActions])
	if err != nil {
		return nil, &connect.ConfigError{Name: iceberg.KeyMaintenanceActions, Value: props[iceberg.KeyMaintenanceActions], Message: err.Error()}
	}
	return func(ctx context.Context, cat catalog.Catalog, ident table.Identifier, branch string) (iceberg.MaintenanceResult, error) {
		p := pol
		p.Compact.Branch = branch
		r, err := Run(ctx, cat, ident, p, do)
		var res iceberg.MaintenanceResult
		if r.Manifests != nil {
			res.ManifestsRewritten = r.Manifests.Rewritten > 0
		}
		if r.Compaction != nil {
			res.Compacted = r.Compaction.SnapshotID != 0
		}
		if r.Expiry != nil {
			res.SnapshotsExpired = max(r.Expiry.SnapshotsBefore-r.Expiry.SnapshotsAfter, 0)
		}
		if r.Orphans != nil {
			res.OrphansRemoved = r.Orphans.Removed
		}
		if err == nil {
			a := r.After
			res.Measured = true
			res.DataFiles, res.DeleteFiles, res.DataBytes, res.DeleteBytes, res.Snapshots =
				a.DataFiles, a.DeleteFiles, a.DataBytes, a.DeleteBytes, a.Snapshots
		}
		return res, err
	}, nil
}
