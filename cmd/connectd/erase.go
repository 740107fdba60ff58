package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/connectd/connectd/lakeops/erase"
)

const eraseUsage = `usage: connectd erase [-key K ...] [-keys-file FILE] [-format text|json] [-record FILE] [erase.properties] [key=value ...]

Removes the stored values of the keys from the Iceberg current table, its <table>__deletes companion, the
raw history (erase.history.tables) and SCD (erase.scd.tables) tables and the ClickHouse table, then reads
every file of the tables' locations and the ClickHouse parts to verify that none holds them, and prints a
record of what was removed where and what it could not reach. A key is the key column's value, or a JSON
object for a composite key. Stop the sinks of the tables first. Exit code: 0 erased, 1 a copy still holds a
key, 2 error. Keys: those of connectd reconcile, plus erase.history.tables, erase.scd.tables,
erase.scd.key-column, erase.deletes.table, erase.clickhouse.skip (docs/OPERATIONS.md).`

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runErase(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("erase", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var keyArgs stringList
	fs.Var(&keyArgs, "key", "a key to erase (repeatable)")
	keysFile := fs.String("keys-file", "", "a file of keys, one per line")
	format := fs.String("format", "text", "output: text or json")
	recordPath := fs.String("record", "", "also write the JSON record to this file")
	fs.Usage = func() { fmt.Fprintln(stderr, eraseUsage) }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "connectd erase:", err)
		return 2
	}
	p, err := loadJobProps(fs.Args())
	if err != nil {
		return fail(err)
	}
	cfg, err := erase.ParseConfig(p)
	if err != nil {
		fmt.Fprintf(stderr, "connectd erase: %v\n%s\n", err, eraseUsage)
		return 2
	}
	cols := cfg.KeyColumns
	if len(cols) == 0 {
		if cols, err = erase.IdentifierColumns(ctx, cfg); err != nil {
			return fail(err)
		}
	}
	var keys []erase.Key
	for _, a := range keyArgs {
		k, err := erase.ParseKey(a, cols)
		if err != nil {
			return fail(err)
		}
		keys = append(keys, k)
	}
	if *keysFile != "" {
		f, err := os.Open(*keysFile)
		if err != nil {
			return fail(err)
		}
		more, err := erase.ReadKeys(f, cols)
		f.Close()
		if err != nil {
			return fail(fmt.Errorf("%s: %w", *keysFile, err))
		}
		keys = append(keys, more...)
	}
	if len(keys) == 0 {
		return fail(fmt.Errorf("no keys: give -key or -keys-file"))
	}
	rec, err := erase.Run(ctx, cfg, keys)
	if err != nil {
		return fail(err)
	}
	js, _ := json.MarshalIndent(rec, "", "  ")
	if *recordPath != "" {
		if err := os.WriteFile(*recordPath, append(js, '\n'), 0o600); err != nil {
			return fail(err)
		}
	}
	if *format == "json" {
		fmt.Fprintf(stdout, "%s\n", js)
	} else {
		rec.WriteText(stdout)
	}
	if rec.Verdict != erase.VerdictErased {
		return 1
	}
	return 0
}

func eraseMain(ctx context.Context) {
	os.Exit(runErase(ctx, os.Args[2:], os.Stdout, os.Stderr))
}
