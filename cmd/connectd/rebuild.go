package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/connectd/connectd/lakeops/reconcile"
)

const rebuildUsage = `usage: connectd rebuild [-progress=auto|on|off] [rebuild.properties] [key=value ...]

Reloads a ClickHouse table from an Iceberg snapshot through the ClickHouse sink's mapping: into a staging table
<table>__rebuild created like the target, then EXCHANGE TABLES (RENAME when the target does not exist).
Running it again after a crash gives the same table. Stop the ClickHouse connector first and afterwards set its
offsets to the printed ones. Keys: those of connectd reconcile, plus rebuild.snapshot-id, rebuild.create.sql,
rebuild.batch.rows, rebuild.window.column/from/to (docs/RECONCILE.md).`

func runRebuild(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rebuild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	progress := fs.String("progress", "auto", "progress and rows/s on stderr: auto (when it is a terminal), on, off")
	fs.Usage = func() { fmt.Fprintln(stderr, rebuildUsage) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	p, err := loadJobProps(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "connectd rebuild:", err)
		return 2
	}
	cfg, err := reconcile.ParseConfig(p)
	if err == nil {
		var opt reconcile.RebuildOptions
		if opt, err = reconcile.ParseRebuildOptions(p); err == nil {
			var prog io.Writer
			if *progress == "on" || (*progress == "auto" && isTerminal(os.Stderr)) {
				prog = stderr
			}
			var res *reconcile.RebuildResult
			if res, err = reconcile.Rebuild(ctx, cfg, opt, prog); err == nil {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				_ = enc.Encode(res)
				return 0
			}
		}
	}
	fmt.Fprintln(stderr, "connectd rebuild:", err)
	return 1
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func rebuildMain(ctx context.Context) {
	os.Exit(runRebuild(ctx, os.Args[2:], os.Stdout, os.Stderr))
}
