package restoredrill

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// write writes the record as restore-drill-<table>-<UTC time>.json and .md into dir.
func (r *Record) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, "restore-drill-"+r.Source.IcebergTable+"-"+r.StartedAt.Format("20060102T150405.000Z"))
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", append(js, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	r.WriteMarkdown(&md)
	if err := os.WriteFile(base+".md", []byte(md.String()), 0o644); err != nil {
		return err
	}
	r.JSONPath, r.MarkdownPath = base+".json", base+".md"
	return nil
}

// WriteText writes a short summary for a terminal.
func (r *Record) WriteText(w io.Writer) {
	fmt.Fprintf(w, "restore drill of %s: %s (%.1fs)\n", r.Source.IcebergTable, r.Verdict, r.Seconds)
	fmt.Fprintf(w, "restored snapshot %d of %s into %s, rebuilt into %s\n", r.Source.SnapshotID, r.Source.IcebergTable, r.Restored.IcebergTable, r.Restored.ClickHouseTable)
	fmt.Fprintf(w, "rows: source %d, restored %d, rebuilt %d; row checksum %s vs %s\n", r.Contents.Source.Rows, r.Contents.Restored.Rows,
		r.RebuiltRows, r.Contents.Source.RowChecksum, r.Contents.Restored.RowChecksum)
	for _, reason := range r.Reasons {
		fmt.Fprintf(w, "reason: %s\n", reason)
	}
	if r.JSONPath != "" {
		fmt.Fprintf(w, "evidence: %s, %s\n", r.JSONPath, r.MarkdownPath)
	}
}

// WriteMarkdown writes the evidence record for people.
func (r *Record) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "# Restore drill of %s: %s\n\n", r.Source.IcebergTable, r.Verdict)
	fmt.Fprintf(w, "Started %s, took %.1f s.\n\n", r.StartedAt.Format("2006-01-02 15:04:05 UTC"), r.Seconds)
	if len(r.Reasons) > 0 {
		fmt.Fprintln(w, "## Why it failed")
		fmt.Fprintln(w)
		for _, reason := range r.Reasons {
			fmt.Fprintf(w, "- %s\n", reason)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "## What was restored, from where, to where")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| | source | restored |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| Iceberg table | `%s` | `%s` |\n", r.Source.IcebergTable, r.Restored.IcebergTable)
	fmt.Fprintf(w, "| metadata file | `%s` | `%s` |\n", r.Source.MetadataLocation, r.Restored.MetadataLocation)
	fmt.Fprintf(w, "| snapshot | %d (%s) | %d |\n", r.Source.SnapshotID, r.Source.SnapshotTime.Format("2006-01-02 15:04:05 UTC"), r.Restored.SnapshotID)
	fmt.Fprintf(w, "| data / delete files | %d / %d | %d / %d |\n", r.Source.DataFiles, r.Source.DeleteFiles, r.Restored.DataFiles, r.Restored.DeleteFiles)
	fmt.Fprintf(w, "| ClickHouse table | `%s` | `%s` |\n", r.Source.ClickHouseTable, r.Restored.ClickHouseTable)
	fmt.Fprintf(w, "| rows | %d | %d (rebuilt into ClickHouse: %d) |\n", r.Contents.Source.Rows, r.Contents.Restored.Rows, r.RebuiltRows)
	fmt.Fprintf(w, "| key checksum | %s | %s |\n", r.Contents.Source.KeyChecksum, r.Contents.Restored.KeyChecksum)
	fmt.Fprintf(w, "| row checksum | %s | %s |\n\n", r.Contents.Source.RowChecksum, r.Contents.Restored.RowChecksum)
	for _, f := range r.Contents.MissingFiles {
		fmt.Fprintf(w, "Missing in the restored copy: `%s`\n\n", f)
	}
	fmt.Fprintln(w, "## Steps")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| step | seconds | error |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "| %s | %.2f | %s |\n", s.Name, s.Seconds, mdCell(s.Error))
	}
	fmt.Fprintln(w)
	if len(r.Reconcile) > 0 {
		fmt.Fprintln(w, "## Reconcile")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| Iceberg | ClickHouse | status | cut snapshot | consistent | Iceberg rows | ClickHouse rows | mismatched |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
		for _, c := range r.Reconcile {
			status := c.Status
			if c.Error != "" {
				status = "error: " + mdCell(c.Error)
			}
			fmt.Fprintf(w, "| `%s` | `%s` | %s | %d | %v | %d | %d | %d |\n", c.Iceberg, c.ClickHouse, status, c.CutSnapshotID, c.Consistent, c.IcebergRows, c.ClickHouseRows, c.Mismatched)
		}
		fmt.Fprintln(w)
	}
	if len(r.Queries) > 0 {
		fmt.Fprintln(w, "## Key queries")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| query | source rows | restored rows | source checksum | restored checksum | match |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|")
		for _, q := range r.Queries {
			fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %v |\n", q.Name, q.SourceRows, q.RestoredRows, q.SourceChecksum, q.RestoredChecksum, q.Match)
		}
		fmt.Fprintln(w)
		for _, q := range r.Queries {
			fmt.Fprintf(w, "`%s`: `%s`\n\n", q.Name, q.SQL)
		}
	}
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
