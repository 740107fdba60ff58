package maintenance

import (
	"fmt"
	"strings"
)

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
