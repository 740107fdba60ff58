package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/connectd/connectd/connect"
	iceberg "github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/maintenance"
)

const icebergUsage = `usage: connectd iceberg maintain [flags] [connector.properties] [key=value ...]

Compacts Iceberg tables written by the sink (small files and their equality/position deletes
rewritten into target-size files with the deletes applied), merges small manifests, expires old
snapshots (never the newest one holding the sink's Kafka offsets) and removes orphan files older
than a safety age, on each table and then its <table>__deletes companion. With a retention
(-retention-column and -retention-max-age, or the connector's retention keys) the rows older than
the horizon are deleted first: whole partitions of a time transform of the column dropped, the
other rows deleted; the expiry then removes their files. The catalog comes from the
connector's iceberg.catalog.* keys, the tables from -tables or iceberg.tables. Without an action flag, all four run. Safe while the connector runs: a
compaction that conflicts with a sink commit is retried or abandoned. Flags:`

// runIceberg returns the process exit code: 0 done, 1 a table failed, 2 bad usage.
func runIceberg(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "scd" {
		return runIcebergSCD(ctx, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "maintain" {
		fmt.Fprintln(stderr, "usage: connectd iceberg maintain|scd [flags] [connector.properties] [key=value ...]")
		return 2
	}
	fs := flag.NewFlagSet("iceberg maintain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tables := fs.String("tables", "", "comma-separated tables (namespace.name); default: iceberg.tables of the properties")
	doCompact := fs.Bool("compact", false, "compact data and delete files")
	doManifests := fs.Bool("rewrite-manifests", false, "merge the small data manifests of the head")
	doExpire := fs.Bool("expire-snapshots", false, "expire old snapshots and delete their files")
	doOrphans := fs.Bool("remove-orphans", false, "remove unreferenced files older than -orphan-age")
	branch := fs.String("branch", "", "branch to compact (the sink's commit branch; default main)")
	target := fs.Int64("target-file-size", 0, "target data file size in bytes (default: "+maintenance.KeyTargetFileSize+", else the table's write.target-file-size-bytes)")
	minInput := fs.Int("min-input-files", 2, "small files a partition without deletes needs before it is compacted (default: "+maintenance.KeyMinInputFiles+")")
	retainLast := fs.Int("retain-last", 1, "snapshots to keep per branch whatever their age (default: "+maintenance.KeyRetainLast+")")
	maxAge := fs.Duration("max-snapshot-age", 0, "expire snapshots older than this beyond -retain-last (default: "+maintenance.KeyMaxSnapshotAge+", else the table's history.expire.max-snapshot-age-ms, 5 days)")
	grace := fs.Duration("expire-grace", maintenance.DefaultExpireGrace, "keep the snapshots that were a branch's head this recently, whatever -max-snapshot-age says; 0 keeps none for it (default: "+maintenance.KeyExpireGrace+")")
	orphanAge := fs.Duration("orphan-age", maintenance.DefaultOrphanAge, "only files older than this are orphans, at least 1h (default: "+maintenance.KeyOrphanAge+")")
	retColumn := fs.String("retention-column", "", "delete the rows whose timestamp or date column is older than -retention-max-age, before the other actions (default: "+maintenance.KeyRetentionColumn+", or iceberg.table.<table>.retention.column)")
	retMaxAge := fs.Duration("retention-max-age", 0, "the age of the rows -retention-column deletes (default: "+maintenance.KeyRetentionMaxAge+", or iceberg.table.<table>.retention.max-age-ms)")
	dryRun := fs.Bool("dry-run", false, "list orphan files without removing them")
	format := fs.String("format", "text", "output: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, icebergUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintln(stderr, "connectd iceberg maintain: -format must be text or json")
		return 2
	}
	if !*doCompact && !*doManifests && !*doExpire && !*doOrphans {
		*doCompact, *doManifests, *doExpire, *doOrphans = true, true, true, true
	}
	p, err := loadJobProps(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "connectd iceberg maintain:", err)
		return 2
	}
	names := splitComma(*tables)
	if len(names) == 0 {
		names = splitComma(p[iceberg.KeyTables])
	}
	catProps := connect.WithPrefix(p, iceberg.KeyCatalogPfx)
	if len(names) == 0 || len(catProps) == 0 {
		fmt.Fprintln(stderr, "connectd iceberg maintain: needs the catalog (iceberg.catalog.*) and the tables (-tables or iceberg.tables)")
		return 2
	}
	cat, err := catalogx.Open(ctx, p[iceberg.KeyCatalogName], catProps)
	if err != nil {
		fmt.Fprintln(stderr, "connectd iceberg maintain: catalog:", err)
		return 1
	}
	// the connector's iceberg.tables.maintenance.* keys, then the flags given
	pol, err := maintenance.ParsePolicy(p)
	if err != nil {
		fmt.Fprintln(stderr, "connectd iceberg maintain:", err)
		return 2
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "target-file-size":
			pol.Compact.TargetFileSize = *target
		case "min-input-files":
			pol.Compact.MinInputFiles = *minInput
		case "retain-last":
			pol.Expire.RetainLast = *retainLast
		case "max-snapshot-age":
			pol.Expire.MaxAge = *maxAge
		case "expire-grace":
			pol.Expire.Grace = *grace
		case "orphan-age":
			pol.Orphans.OlderThan = *orphanAge
		}
	})
	pol.Compact.Branch = *branch
	pol.Orphans.DryRun = *dryRun
	code := 0
	var reports []*maintenance.Report
	do := maintenance.Actions{RewriteManifests: *doManifests, Compact: *doCompact, ExpireSnapshots: *doExpire, RemoveOrphans: *doOrphans}
	if (*retColumn == "") != (*retMaxAge <= 0) {
		fmt.Fprintln(stderr, "connectd iceberg maintain: -retention-column and -retention-max-age go together")
		return 2
	}
	for _, name := range names {
		tpol, err := pol.ForTable(p, name)
		if err != nil {
			fmt.Fprintln(stderr, "connectd iceberg maintain:", err)
			return 2
		}
		if *retColumn != "" {
			tpol.Retention = maintenance.RetentionOptions{Column: *retColumn, MaxAge: *retMaxAge}
		}
		r, err := maintenance.Run(ctx, cat, catalog.ToIdentifier(name), tpol, do)
		if err != nil {
			code = 1
		}
		reports = append(reports, r)
		if *format == "text" {
			printMaintainReport(stdout, r)
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(reports)
	}
	return code
}

func printMaintainReport(w io.Writer, r *maintenance.Report) {
	fmt.Fprintf(w, "%s: data files %d -> %d (%s -> %s), delete files %d -> %d (%d -> %d delete rows), snapshots %d -> %d, %.1fs\n",
		r.Table, r.Before.DataFiles, r.After.DataFiles, byteSize(r.Before.DataBytes), byteSize(r.After.DataBytes),
		r.Before.DeleteFiles, r.After.DeleteFiles, r.Before.DeleteRecords, r.After.DeleteRecords,
		r.Before.Snapshots, r.After.Snapshots, r.Seconds)
	if t := r.Retention; t != nil {
		fmt.Fprintf(w, "  retention: %s older than %s: %d partitions dropped (%d data, %d delete files), %d rows deleted\n",
			t.Column, t.Horizon.Format(time.RFC3339), t.PartitionsDropped, t.DataFilesDropped, t.DeleteFilesDropped, t.RowsDeleted)
	}
	if m := r.Manifests; m != nil {
		fmt.Fprintf(w, "  manifests: %d -> %d\n", m.ManifestsBefore, m.ManifestsAfter)
	}
	if c := r.Compaction; c != nil {
		switch {
		case c.Abandoned != "":
			fmt.Fprintf(w, "  compaction: abandoned (%s)\n", c.Abandoned)
		case c.SnapshotID == 0:
			fmt.Fprintln(w, "  compaction: nothing to compact")
		default:
			fmt.Fprintf(w, "  compaction: %d partitions, %d data files (%s) rewritten into %d (%s), %d delete files removed, snapshot %d\n",
				c.Partitions, c.DataFilesRewritten, byteSize(c.BytesBefore), c.DataFilesAdded, byteSize(c.BytesAfter), c.DeleteFilesRemoved, c.SnapshotID)
		}
	}
	if e := r.Expiry; e != nil {
		fmt.Fprintf(w, "  expiry: snapshots %d -> %d", e.SnapshotsBefore, e.SnapshotsAfter)
		if e.ProtectedDepth > 0 {
			fmt.Fprintf(w, " (%d kept for the sink's offsets)", e.ProtectedDepth)
		}
		if e.GraceDepth > 0 {
			fmt.Fprintf(w, " (%d kept: the head within the grace age)", e.GraceDepth)
		}
		fmt.Fprintln(w)
	}
	if o := r.Orphans; o != nil {
		fmt.Fprintf(w, "  orphans: %d found, %d removed (%s)\n", len(o.Orphans), o.Removed, byteSize(o.Bytes))
	}
	if r.Error != "" && (r.Companion == nil || r.Companion.Error != r.Error) {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
	}
	if r.Companion != nil {
		printMaintainReport(w, r.Companion)
	}
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func icebergMain(ctx context.Context) {
	os.Exit(runIceberg(ctx, os.Args[2:], os.Stdout, os.Stderr))
}
