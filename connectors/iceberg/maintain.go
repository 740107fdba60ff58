package iceberg

// Table maintenance inside the connector (iceberg.tables.maintenance.interval-ms): the process
// that commits runs package maintenance on each of the connector's tables between its commit
// rounds. Running it on the commit loop itself keeps one maintainer per table and never overlaps
// it with this connector's own round on the table; the library stays correct next to commits of
// other processes (a zombie, a second committer) on its own.

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
)

// MaintainTable maintains one table on branch ("" is main) and says what the table looks like
// afterwards. An error leaves the table as consistent as before; what was done is in the result.
type MaintainTable func(ctx context.Context, cat catalog.Catalog, ident table.Identifier, branch string) (MaintenanceResult, error)

// MaintenanceResult is what one maintenance of a table did and left.
type MaintenanceResult struct {
	// The live files of the branch head afterwards.
	DataFiles, DeleteFiles int
	DataBytes, DeleteBytes int64
	Snapshots              int
	// Compacted and ManifestsRewritten tell whether the action committed a snapshot.
	Compacted, ManifestsRewritten bool
	SnapshotsExpired              int
	OrphansRemoved                int
	// Measured is false when the run failed before it read the table afterwards.
	Measured bool
}

// maintainer schedules the maintenance of one coordinator's tables.
type maintainer struct {
	run   MaintainTable
	every time.Duration
	next  time.Time // the commit loop's own: no lock

	mu     sync.Mutex // tables is read by the metrics collector
	tables map[string]*tableMaintenance
}

// tableMaintenance is one table's maintenance as the metrics report it.
type tableMaintenance struct {
	Runs, Failures                int64
	Compactions, ManifestRewrites int64
	SnapshotsExpired, Orphans     int64
	Last                          time.Time // end of the last successful run
	State                         MaintenanceResult
}

func newMaintainer(cfg *SinkConfig) *maintainer {
	if cfg.maintain == nil {
		return nil
	}
	return &maintainer{run: cfg.maintain, every: cfg.MaintenanceInterval, tables: map[string]*tableMaintenance{},
		next: time.Now().Add(cfg.MaintenanceInterval)}
}

// maintainDue runs the maintenance of every table when the interval has passed. The caller is
// the commit loop between two rounds (commit.Options.AfterRound).
func (c *coordinator) maintainDue(ctx context.Context) {
	m := c.maint
	if m == nil || time.Now().Before(m.next) {
		return
	}
	defer func() { m.next = time.Now().Add(m.every) }() // a long run does not run again at once
	cat, err := c.tables.Catalog(ctx)
	if err != nil {
		c.log.Warn("iceberg table maintenance skipped; tried again next interval", "err", err)
		return
	}
	for _, name := range c.maintainedTables() {
		if ctx.Err() != nil {
			return
		}
		res, err := m.run(ctx, cat, catalog.ToIdentifier(name), c.cfg.TableOptions(name).CommitBranch)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue // not created yet, or dropped
		}
		c.tables.Reload(name) // the next round plans on the head maintenance committed, not a fenced one
		m.record(name, res, err)
		if err != nil {
			c.log.Warn("iceberg table maintenance failed; tried again next interval", "table", name, "err", err)
		}
	}
}

// maintainedTables are the configured tables and those this coordinator has committed to
// (dynamic routing).
func (c *coordinator) maintainedTables() []string {
	seen := map[string]bool{}
	for _, n := range c.cfg.Tables {
		seen[n] = true
	}
	for _, n := range c.tables.Written() {
		seen[n] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (m *maintainer) record(name string, res MaintenanceResult, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	tm := m.tables[name]
	if tm == nil {
		tm = &tableMaintenance{}
		m.tables[name] = tm
	}
	tm.Runs++
	if res.Compacted {
		tm.Compactions++
	}
	if res.ManifestsRewritten {
		tm.ManifestRewrites++
	}
	tm.SnapshotsExpired += int64(res.SnapshotsExpired)
	tm.Orphans += int64(res.OrphansRemoved)
	if res.Measured {
		tm.State = res
	}
	if err != nil {
		tm.Failures++
		return
	}
	tm.Last = time.Now()
}

// stats copies the per-table counters.
func (m *maintainer) stats() map[string]tableMaintenance {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]tableMaintenance, len(m.tables))
	for n, tm := range m.tables {
		out[n] = *tm
	}
	return out
}

// connectorMaintenance is the connector's view of maintenance.Run: the policy and actions of its properties,
// the table's commit branch, and the numbers its metrics report.
func connectorMaintenance(props map[string]string) (MaintainTable, error) {
	pol, err := maintenance.ParsePolicy(props)
	if err != nil {
		return nil, err
	}
	do, err := maintenance.ParseActions(props[KeyMaintenanceActions])
	if err != nil {
		return nil, &connect.ConfigError{Name: KeyMaintenanceActions, Value: props[KeyMaintenanceActions], Message: err.Error()}
	}
	return func(ctx context.Context, cat catalog.Catalog, ident table.Identifier, branch string) (MaintenanceResult, error) {
		p, err := pol.ForTable(props, strings.Join(ident, "."))
		if err != nil {
			return MaintenanceResult{}, err
		}
		p.Compact.Branch = branch
		r, err := maintenance.Run(ctx, cat, ident, p, do)
		var res MaintenanceResult
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
