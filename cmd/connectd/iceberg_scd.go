package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/connectd/connectd/api"
	"github.com/connectd/connectd/connect"
	iceberg "github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/scd"
	"github.com/connectd/connectd/internal/worker"
)

const icebergSCDUsage = `usage: connectd iceberg scd [flags] [connector.properties] [key=value ...]

Materializes SCD Type 2 tables from Iceberg history tables (the sink's raw CDC history, or an
append table with a key and a source version): one row per version of a key with valid_from,
valid_to (the next version's valid_from), is_current, source_version and record_hash. Each run
reads only the history added since the position kept in the SCD table's snapshot summary and
rewrites the rows of the keys it touches; a rerun or a run after a crash neither skips nor doubles
a version. The catalog comes from the connector's iceberg.catalog.* keys, the tables and options
from iceberg.tables.scd.* (flags override them). Flags:`

// runIcebergSCD returns the process exit code: 0 done, 1 a table failed, 2 bad usage.
func runIcebergSCD(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("iceberg scd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tables := fs.String("tables", "", "comma-separated history tables (namespace.name); default: "+scd.KeyTables)
	target := fs.String("target", "", "the SCD table (with one history table); default: <history>"+scd.DefaultTargetSuffix+" or iceberg.table.<history>."+scd.TableKeyTarget)
	attrs := fs.String("attributes", "", "comma-separated attribute columns; default: "+scd.KeyAttributes+", else the whole payload in one column")
	skip := fs.Bool("skip-unchanged", false, "skip versions whose attributes equal the previous version's (default: "+scd.KeySkipUnchanged+")")
	markers := fs.Bool("delete-markers", false, "keep a row per delete with is_deleted=true (default: "+scd.KeyDeleteMarkers+")")
	format := fs.String("format", "text", "output: text or json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, icebergSCDUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintln(stderr, "connectd iceberg scd: -format must be text or json")
		return 2
	}
	p, err := loadJobProps(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "connectd iceberg scd:", err)
		return 2
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "tables":
			p[scd.KeyTables] = *tables
		case "attributes":
			p[scd.KeyAttributes] = *attrs
		case "skip-unchanged":
			p[scd.KeySkipUnchanged] = fmt.Sprint(*skip)
		case "delete-markers":
			p[scd.KeyDeleteMarkers] = fmt.Sprint(*markers)
		}
	})
	if *target != "" {
		names := splitComma(p[scd.KeyTables])
		if len(names) != 1 {
			fmt.Fprintln(stderr, "connectd iceberg scd: -target needs exactly one history table")
			return 2
		}
		p["iceberg.table."+names[0]+"."+scd.TableKeyTarget] = *target
	}
	results, err := materializeSCD(ctx, p, func(r scdResult, err error) {
		if *format == "text" {
			printSCDReport(stdout, r.Report, err)
		}
	})
	var ce *api.SCDConfigError
	switch {
	case errors.As(err, &ce):
		fmt.Fprintln(stderr, "connectd iceberg scd:", ce.Message)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "connectd iceberg scd:", err)
		return 1
	}
	code := 0
	for _, r := range results {
		if r.Error != "" {
			code = 1
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(results)
	}
	return code
}

// scdResult is one SCD table's run, as the command's JSON and the REST endpoint answer it.
type scdResult struct {
	scd.Report
	Error string `json:"error,omitempty"`
}

// materializeSCD runs every SCD table of a connector's properties once, calling each after every table; an
// *api.SCDConfigError when the properties name no SCD table or no catalog.
func materializeSCD(ctx context.Context, p map[string]string, each func(scdResult, error)) ([]scdResult, error) {
	cfg, err := scd.ParseConfig(p)
	if err != nil {
		return nil, &api.SCDConfigError{Message: err.Error()}
	}
	catProps := connect.WithPrefix(p, iceberg.KeyCatalogPfx)
	if len(cfg.Tables) == 0 || len(catProps) == 0 {
		return nil, &api.SCDConfigError{Message: "needs the catalog (iceberg.catalog.*) and the history tables (-tables or " + scd.KeyTables + ")"}
	}
	cat, err := catalogx.Open(ctx, p[iceberg.KeyCatalogName], catProps)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	results := make([]scdResult, 0, len(cfg.Tables))
	for _, o := range cfg.Tables {
		r, err := scd.Run(ctx, cat, o)
		res := scdResult{Report: r}
		if err != nil {
			res.Error = err.Error()
		}
		if each != nil {
			each(res, err)
		}
		results = append(results, res)
	}
	return results, nil
}

// scdEndpoint runs a connector's SCD tables for POST /connectd/connectors/{connector}/scd, with the config
// provider references of its config resolved as a task would see them.
type scdEndpoint struct{ cfg *worker.Config }

func (e scdEndpoint) MaterializeSCD(ctx context.Context, props map[string]string) (any, error) {
	if e.cfg.Providers != nil {
		resolved, err := e.cfg.Providers.Transform(props)
		if err != nil {
			return nil, fmt.Errorf("resolving config provider references: %w", err)
		}
		props = resolved
	}
	return materializeSCD(ctx, props, nil)
}

func printSCDReport(w io.Writer, r scd.Report, err error) {
	switch {
	case err != nil:
		fmt.Fprintf(w, "%s -> %s: error: %v\n", r.History, r.Target, err)
	case r.UpToDate:
		fmt.Fprintf(w, "%s -> %s: up to date (history snapshot %d)\n", r.History, r.Target, r.To.SnapshotID)
	default:
		fmt.Fprintf(w, "%s -> %s: %d new history rows, %d keys rewritten (%d rows read, %d rows written, %d data + %d delete files), history snapshot %d, snapshot %d, %.1fs\n",
			r.History, r.Target, r.NewRows, r.Keys, r.RowsRead, r.RowsWritten, r.DataFiles, r.DeleteFiles, r.To.SnapshotID, r.SnapshotID, r.Seconds)
	}
}
