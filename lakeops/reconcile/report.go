package reconcile

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Status of a reconcile run.
const (
	StatusClean = "clean" // the layers agree at the cut
	StatusDrift = "drift" // rows differ at the cut
	StatusLag   = "lag"   // no drift, but one layer is behind by more than lag.tolerance.records
)

// Exit codes of `connectd reconcile`.
const (
	ExitClean = 0
	ExitDrift = 1
	ExitError = 2
	ExitLag   = 3
)

// Report is the result of one reconcile run (the JSON output).
type Report struct {
	Status          string    `json:"status"`
	IcebergTable    string    `json:"iceberg_table"`
	ClickHouseTable string    `json:"clickhouse_table"`
	KeyColumns      []string  `json:"key_columns"`
	Columns         []mapping `json:"columns"`
	// OnlyIceberg and OnlyClickHouse are the columns one layer has at the cut and the other has not (the
	// version and deleted-flag columns and excluded ones aside): not compared.
	OnlyIceberg    []string    `json:"only_iceberg_columns,omitempty"`
	OnlyClickHouse []string    `json:"only_clickhouse_columns,omitempty"`
	Version        VersionInfo `json:"version"`
	Cut            Cut         `json:"cut"`
	Iceberg        LayerTotals `json:"iceberg"`
	ClickHouse     LayerTotals `json:"clickhouse"`
	Buckets        []Bucket    `json:"buckets"`
	// MismatchedRows counts the keys that differ, by kind; Mismatches lists the first max.keys in key order.
	MismatchedRows int            `json:"mismatched_rows"`
	MismatchCounts map[string]int `json:"mismatch_counts"`
	Mismatches     []Mismatch     `json:"mismatches"`
	// InFlightKeys were touched by records one layer holds and the other does not yet; they are left out.
	InFlightKeys int       `json:"in_flight_keys"`
	Notes        []string  `json:"notes,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	Seconds      float64   `json:"seconds"`
}

// VersionInfo names the source version column of each layer.
type VersionInfo struct {
	Iceberg    string `json:"iceberg,omitempty"`
	ClickHouse string `json:"clickhouse,omitempty"`
	Compared   bool   `json:"compared"`
}

// ExitCode is the process exit code for the report.
func (r *Report) ExitCode() int {
	switch r.Status {
	case StatusDrift:
		return ExitDrift
	case StatusLag:
		return ExitLag
	}
	return ExitClean
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "reconcile %s (Iceberg) vs %s (ClickHouse): %s\n", r.IcebergTable, r.ClickHouseTable, strings.ToUpper(r.Status))
	fmt.Fprintf(w, "cut: snapshot %d, consistent=%v (%s)\n", r.Cut.SnapshotID, r.Cut.Consistent, r.Cut.Reason)
	if r.Cut.LaggingLayer != "" {
		fmt.Fprintf(w, "lag: %s behind by %d records\n", r.Cut.LaggingLayer, r.Cut.LagRecords)
	}
	for _, p := range r.Cut.Partitions {
		fl := ""
		if p.InFlight {
			fl = " (block in flight)"
		}
		fmt.Fprintf(w, "  %s/%d: iceberg %d, clickhouse %d, compared at %d, lag %d%s\n", p.Topic, p.Partition, p.IcebergNext, p.ClickHouseNext, p.CutNext, p.Lag, fl)
	}
	fmt.Fprintf(w, "%-12s %10s %18s %18s %s\n", "layer", "rows", "key checksum", "row checksum", "max version")
	fmt.Fprintf(w, "%-12s %10d %18s %18s %s\n", "iceberg", r.Iceberg.Rows, r.Iceberg.KeyChecksum, r.Iceberg.RowChecksum, r.Iceberg.MaxVersion)
	fmt.Fprintf(w, "%-12s %10d %18s %18s %s\n", "clickhouse", r.ClickHouse.Rows, r.ClickHouse.KeyChecksum, r.ClickHouse.RowChecksum, r.ClickHouse.MaxVersion)
	bad := 0
	for _, b := range r.Buckets {
		if !b.Match {
			bad++
		}
	}
	fmt.Fprintf(w, "buckets: %d, differing: %d\n", len(r.Buckets), bad)
	for _, b := range r.Buckets {
		if !b.Match {
			fmt.Fprintf(w, "  %s: rows %d vs %d, max version %s vs %s\n", b.Bucket, b.Iceberg.Rows, b.ClickHouse.Rows, b.Iceberg.MaxVersion, b.ClickHouse.MaxVersion)
		}
	}
	if r.InFlightKeys > 0 {
		fmt.Fprintf(w, "in-flight keys left out: %d\n", r.InFlightKeys)
	}
	fmt.Fprintf(w, "mismatched rows: %d (missing in ClickHouse %d, extra in ClickHouse %d, different %d)\n", r.MismatchedRows,
		r.MismatchCounts[MissingInClickHouse], r.MismatchCounts[ExtraInClickHouse], r.MismatchCounts[Different])
	for _, m := range r.Mismatches {
		if len(m.Columns) > 0 {
			fmt.Fprintf(w, "  %-22s %q columns %s\n", m.Kind, m.Key, strings.Join(m.Columns, ","))
		} else {
			fmt.Fprintf(w, "  %-22s %q\n", m.Kind, m.Key)
		}
	}
	if n := r.MismatchedRows - len(r.Mismatches); n > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", n)
	}
	for _, c := range r.Columns {
		if c.Skipped != "" {
			fmt.Fprintf(w, "column %s not compared: %s\n", c.Name, c.Skipped)
		}
	}
	if len(r.OnlyIceberg) > 0 {
		fmt.Fprintf(w, "columns only in Iceberg at the cut (not compared): %s\n", strings.Join(r.OnlyIceberg, ", "))
	}
	if len(r.OnlyClickHouse) > 0 {
		fmt.Fprintf(w, "columns only in ClickHouse at the cut (not compared): %s\n", strings.Join(r.OnlyClickHouse, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
