package erase

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/kafka"
)

// Verdicts of an erase.
const (
	VerdictErased     = "erased"     // no file, part or row any reader of the reached copies can read holds a key
	VerdictIncomplete = "incomplete" // a reached copy still holds a key, or a step failed
)

// Record is what an erase removed where, what still holds a key and what it could not reach.
type Record struct {
	Verdict    string             `json:"verdict"`
	StartedAt  time.Time          `json:"started_at"`
	Seconds    float64            `json:"seconds"`
	KeyColumns []string           `json:"key_columns"`
	Keys       []string           `json:"keys"`
	Iceberg    []*TableErasure    `json:"iceberg"`
	ClickHouse *ClickHouseErasure `json:"clickhouse,omitempty"`
	// Unreached are the copies erase cannot remove, each with what the operator must do.
	Unreached []Unreached `json:"unreached"`
	Problems  []string    `json:"problems,omitempty"`
}

// Unreached is a copy out of erase's reach.
type Unreached struct {
	Where  string `json:"where"`
	Why    string `json:"why"`
	Action string `json:"action"`
}

// Run erases the keys from every table of the configuration and verifies the result by reading the files.
func Run(ctx context.Context, cfg *Config, keys []Key) (*Record, error) {
	start := time.Now()
	cat, err := catalogx.Open(ctx, cfg.CatalogName, cfg.CatalogProps)
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: %w", err)
	}
	cur, err := cat.LoadTable(ctx, catalog.ToIdentifier(cfg.IcebergTable))
	if err != nil {
		return nil, fmt.Errorf("iceberg: loading %s: %w", cfg.IcebergTable, err)
	}
	sc := cur.Schema()
	keyCols := cfg.KeyColumns
	if len(keyCols) == 0 {
		for _, id := range sc.IdentifierFieldIDs {
			if f, ok := sc.FindFieldByID(id); ok {
				keyCols = append(keyCols, f.Name)
			}
		}
	}
	if len(keyCols) == 0 {
		return nil, fmt.Errorf("key.columns is required: %s has no identifier fields", cfg.IcebergTable)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no keys to erase")
	}
	for i, k := range keys {
		for _, c := range keyCols {
			if _, ok := k.Values[c]; !ok {
				return nil, fmt.Errorf("key %d has no value for key column %s", i+1, c)
			}
		}
	}
	rec := &Record{StartedAt: start.UTC(), KeyColumns: keyCols, Iceberg: []*TableErasure{}, Unreached: []Unreached{}}
	nd := make(needles, len(keys))
	for i, k := range keys {
		rec.Keys = append(rec.Keys, k.Text(keyCols))
		for _, c := range keyCols {
			nd[i] = append(nd[i], newMatcher(k.Values[c]))
		}
	}
	byKey, err := keyFilter(sc, keyCols, keys)
	if err != nil {
		return nil, fmt.Errorf("iceberg: %s: %w", cfg.IcebergTable, err)
	}
	match := strings.Join(keyCols, ",")
	rec.Iceberg = append(rec.Iceberg, eraseTable(ctx, cat, cfg.IcebergTable, RoleCurrent, match, byKey, nd, len(keys)))

	deletes := cfg.DeletesTable
	if deletes == "" {
		deletes = cfg.IcebergTable + icetable.TombstoneSuffix
		if ok, err := cat.CheckTableExists(ctx, catalog.ToIdentifier(deletes)); err != nil || !ok {
			deletes = ""
		}
	}
	if deletes != "" && deletes != "none" {
		rec.Iceberg = append(rec.Iceberg, eraseTable(ctx, cat, deletes, RoleDeletes, match, byKey, nd, len(keys)))
	}
	for _, h := range cfg.HistoryTables {
		f, err := historyFilter(sc, keyCols, keys)
		if err != nil {
			return nil, err
		}
		rec.Iceberg = append(rec.Iceberg, eraseTable(ctx, cat, h, RoleHistory, "primary_key", f, nd, len(keys)))
	}
	for _, s := range cfg.SCDTables {
		te := &TableErasure{Table: s, Role: RoleSCD, Match: cfg.SCDKeyColumn}
		t, err := cat.LoadTable(ctx, catalog.ToIdentifier(s))
		if err != nil {
			te.Error = fmt.Sprintf("loading %s: %v", s, err)
			rec.Iceberg = append(rec.Iceberg, te)
			continue
		}
		f, err := scdFilter(t.Schema(), sc, cfg.SCDKeyColumn, keyCols, keys)
		if err != nil {
			te.Error = err.Error()
			rec.Iceberg = append(rec.Iceberg, te)
			continue
		}
		rec.Iceberg = append(rec.Iceberg, eraseTable(ctx, cat, s, RoleSCD, te.Match, f, nd, len(keys)))
	}
	if !cfg.SkipCH {
		rec.ClickHouse = eraseClickHouse(ctx, cfg, keyCols, keys)
	}
	rec.Unreached = unreached(ctx, cfg)
	rec.verdict()
	rec.Seconds = time.Since(start).Seconds()
	return rec, nil
}

func (r *Record) verdict() {
	for _, t := range r.Iceberg {
		if t.Error != "" {
			r.Problems = append(r.Problems, fmt.Sprintf("iceberg %s: %s", t.Table, t.Error))
		}
		for _, h := range t.Remaining {
			r.Problems = append(r.Problems, fmt.Sprintf("iceberg %s: %s (%s) still holds a key", t.Table, h.Path, h.Reach))
		}
	}
	if c := r.ClickHouse; c != nil {
		if c.Error != "" {
			r.Problems = append(r.Problems, "clickhouse "+c.Table+": "+c.Error)
		} else if c.RowsAfter > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("clickhouse %s: %d rows of the keys still in active parts", c.Table, c.RowsAfter))
		}
	}
	r.Verdict = VerdictErased
	if len(r.Problems) > 0 {
		r.Verdict = VerdictIncomplete
	}
}

// unreached lists the copies out of reach: the topics feeding the tables (with their retention when
// Kafka is configured), backups, the outdated and detached ClickHouse parts.
func unreached(ctx context.Context, cfg *Config) []Unreached {
	var out []Unreached
	topics := append([]string{}, cfg.Topics...)
	if len(topics) == 0 {
		topics = topicsOf(ctx, cfg)
	}
	conf := map[string]map[string]string{}
	var kerr error
	if cfg.KafkaBootstrap != "" && len(topics) > 0 {
		conf, kerr = topicConfigs(ctx, cfg.KafkaBootstrap, topics)
	}
	for _, t := range topics {
		u := Unreached{Where: "kafka topic " + t, Why: "the topic's records of the keys stay until the broker removes them"}
		c := conf[t]
		switch {
		case strings.Contains(c["cleanup.policy"], "compact") && !strings.Contains(c["cleanup.policy"], "delete"):
			u.Action = "compacted topic: make sure a tombstone (null value) of each key was produced after its last record; compaction removes the older records (min.compaction.lag.ms " + c["min.compaction.lag.ms"] + ", delete.retention.ms " + c["delete.retention.ms"] + " for the tombstone itself)"
		case c["retention.ms"] != "":
			u.Action = "records age out after retention.ms=" + c["retention.ms"] + " (cleanup.policy=" + c["cleanup.policy"] + "); to remove them sooner, delete the records up to the partitions' current end offsets (kafka-delete-records.sh) once every consumer has read them"
		default:
			u.Action = "check the topic's cleanup.policy and retention.ms: records age out after retention, or are compacted away after a tombstone of the key; kafka-delete-records.sh removes them sooner"
		}
		out = append(out, u)
	}
	if kerr != nil {
		out = append(out, Unreached{Where: "kafka", Why: "the topics' configuration could not be read: " + kerr.Error(), Action: "check retention.ms and cleanup.policy of the topics by hand"})
	}
	out = append(out,
		Unreached{Where: "backups of the Iceberg warehouse and ClickHouse BACKUPs", Why: "copies outside the tables' locations and parts",
			Action: "expire the backups taken before this erase, or run connectd erase again on every restore of them (restore drills' spare copies included)"},
		Unreached{Where: "the source database and downstream consumers of the topics", Why: "not written by connectd", Action: "erase the keys there with their own tools"},
	)
	return out
}

// topicsOf are the topics whose offsets the current table's head records.
func topicsOf(ctx context.Context, cfg *Config) []string {
	cat, err := catalogx.Open(ctx, cfg.CatalogName, cfg.CatalogProps)
	if err != nil {
		return nil
	}
	tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier(cfg.IcebergTable))
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, k := range icetable.OffsetsSummaryKeys(tbl, tbl.CurrentSnapshot()) {
		o, _, err := icetable.SnapshotOffsets(tbl, tbl.CurrentSnapshot(), k)
		if err != nil {
			continue
		}
		for tp := range o {
			seen[tp.Topic] = true
		}
	}
	var out []string
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

func topicConfigs(ctx context.Context, bootstrap string, topics []string) (map[string]map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cl, err := kafka.Open(ctx, map[string]string{"bootstrap.servers": bootstrap, "client.id": "connectd-erase"})
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	rcs, err := kadm.NewClient(cl).DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		m := map[string]string{}
		for _, c := range rc.Configs {
			if c.Value != nil {
				m[c.Key] = *c.Value
			}
		}
		out[rc.Name] = m
	}
	return out, nil
}

// WriteText writes the record for a terminal.
func (r *Record) WriteText(w io.Writer) {
	fmt.Fprintf(w, "erase of %d key(s) (%s): %s\n", len(r.Keys), strings.Join(r.KeyColumns, ","), strings.ToUpper(r.Verdict))
	for _, t := range r.Iceberg {
		fmt.Fprintf(w, "iceberg %s (%s, matched on %s): %d live rows deleted, %d files held a key, %d removed from storage, %d files read after: %d still hold a key\n",
			t.Table, t.Role, t.Match, t.RowsDeleted, len(t.HeldBefore), len(t.FilesRemoved), t.FilesRead, len(t.Remaining))
		if m := t.Maintenance; m != nil {
			fmt.Fprintf(w, "  maintenance: snapshots %d -> %d, data files %d -> %d, delete files %d -> %d\n",
				m.Before.Snapshots, m.After.Snapshots, m.Before.DataFiles, m.After.DataFiles, m.Before.DeleteFiles, m.After.DeleteFiles)
		}
		for _, h := range t.Remaining {
			fmt.Fprintf(w, "  still holds a key: %s (%s)\n", h.Path, h.Reach)
		}
		if t.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", t.Error)
		}
	}
	if c := r.ClickHouse; c != nil {
		fmt.Fprintf(w, "clickhouse %s: %d stored rows of the keys before, %d after (active parts, no FINAL); %d parts rewritten, %d outdated parts awaiting removal by the server (not read by queries), %d detached parts\n",
			c.Table, c.RowsBefore, c.RowsAfter, c.PartsRewritten, c.OutdatedParts, c.DetachedParts)
		if c.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", c.Error)
		}
	}
	fmt.Fprintln(w, "not reached (operator action needed):")
	for _, u := range r.Unreached {
		fmt.Fprintf(w, "  %s: %s.\n    action: %s\n", u.Where, u.Why, u.Action)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
}

// IdentifierColumns are the identifier fields of the configured Iceberg table: the key columns when
// key.columns is not set.
func IdentifierColumns(ctx context.Context, cfg *Config) ([]string, error) {
	cat, err := catalogx.Open(ctx, cfg.CatalogName, cfg.CatalogProps)
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: %w", err)
	}
	tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier(cfg.IcebergTable))
	if err != nil {
		return nil, fmt.Errorf("iceberg: loading %s: %w", cfg.IcebergTable, err)
	}
	sc := tbl.Schema()
	var out []string
	for _, id := range sc.IdentifierFieldIDs {
		if f, ok := sc.FindFieldByID(id); ok {
			out = append(out, f.Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("key.columns is required: %s has no identifier fields", cfg.IcebergTable)
	}
	return out, nil
}
