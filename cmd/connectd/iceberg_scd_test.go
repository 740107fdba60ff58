package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/scd"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestIcebergSCDCommand runs `connectd iceberg scd` on the connector's properties over a raw CDC
// history: the first run builds the SCD table, a rerun is up to date, a late older version and a
// delete appended later rewrite only their key, and the JSON report says what each run did.
func TestIcebergSCDCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	catProps := map[string]string{
		"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
		"uri":          "jdbc:sqlite:" + filepath.Join(dir, "catalog.db"),
		"warehouse":    filepath.Join(dir, "warehouse"),
	}
	cat, err := catalogx.Open(ctx, "iceberg", catProps)
	require.NoError(t, err)
	hist := table.Identifier{"inventory", "customers_history"}
	w := &icetable.Writer{Cat: cat, Ident: hist, Opts: icetable.TableOptions{AutoCreate: true}}
	tp := icetable.TP{Topic: "pg.inventory.customers", Partition: 0}
	off := int64(0)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lsn := func(s string) int { n, _ := strconv.Atoi(s); return n }
	appendEvents := func(evs ...[3]any) { // key, lsn (valid from lsn minutes after base), name ("" deletes)
		var recs []icetable.Rec
		for _, e := range evs {
			row := icerow.Row{"primary_key": `{"id":` + e[0].(string) + `}`, "source_version": e[1].(string),
				"source_timestamp": base.Add(time.Duration(lsn(e[1].(string))) * time.Minute),
				"kafka_topic":      tp.Topic, "kafka_partition": int32(0), "kafka_offset": off, "operation": "u"}
			if e[2] == "" {
				row["operation"] = "d"
			} else {
				row["after_payload"] = `{"id":` + e[0].(string) + `,"name":"` + e[2].(string) + `"}`
			}
			recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Row: row, Schema: icerow.RawCDCSchema, TP: tp, Offset: off})
			off++
		}
		_, err := w.Commit(ctx, recs, icetable.Offsets{tp: off}, nil)
		require.NoError(t, err)
	}
	appendEvents([3]any{"1", "100", "ann"}, [3]any{"2", "200", "bob"}, [3]any{"1", "900", "anna"})

	propsFile := filepath.Join(dir, "iceberg-sink.properties")
	text := "name=scd\nconnector.class=org.apache.iceberg.connect.IcebergSinkConnector\ntopics=" + tp.Topic + "\n" +
		"iceberg.tables=inventory.customers_history\niceberg.table.inventory.customers_history.raw-cdc=true\n" +
		scd.KeyTables + "=inventory.customers_history\n" + scd.KeyAttributes + "=name\n"
	for k, v := range catProps {
		text += "iceberg.catalog." + k + "=" + v + "\n"
	}
	require.NoError(t, os.WriteFile(propsFile, []byte(text), 0o644))
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runIceberg(ctx, append([]string{"scd"}, args...), &stdout, &stderr)
		t.Logf("connectd iceberg scd %s:\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
		return code, stdout.String()
	}
	rows := func() []string {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"inventory", "customers_history_scd"})
		require.NoError(t, err)
		var out []string
		for _, r := range icebergtest.ScanRows(t, tbl) {
			to := "-"
			if v, ok := r["valid_to"].(time.Time); ok {
				to = v.Format("15:04")
			}
			out = append(out, r["business_key"].(string)+" "+r["source_version"].(string)+" "+
				r["valid_from"].(time.Time).Format("15:04")+"-"+to+" "+map[bool]string{true: "current", false: "closed"}[r["is_current"].(bool)]+
				" "+r["name"].(string))
		}
		sort.Strings(out)
		return out
	}

	code, out := run(propsFile)
	require.Equal(t, 0, code)
	require.Contains(t, out, "inventory.customers_history -> inventory.customers_history_scd: 3 new history rows, 2 keys rewritten")
	require.Equal(t, []string{
		`{"id":1} 100 01:40-15:00 closed ann`,
		`{"id":1} 900 15:00-- current anna`,
		`{"id":2} 200 03:20-- current bob`,
	}, rows())

	code, out = run(propsFile)
	require.Equal(t, 0, code)
	require.Contains(t, out, "up to date")

	// a late version of key 1 between 100 and 900, and a delete of key 2
	appendEvents([3]any{"1", "500", "annie"}, [3]any{"2", "600", ""})
	code, out = run("-format", "json", propsFile)
	require.Equal(t, 0, code)
	var reps []scd.Report
	require.NoError(t, json.Unmarshal([]byte(out), &reps))
	require.Len(t, reps, 1)
	require.Equal(t, 2, reps[0].NewRows)
	require.Equal(t, 2, reps[0].Keys)
	require.Equal(t, 5, reps[0].RowsRead)
	require.Equal(t, 1, reps[0].DataFiles)
	require.Equal(t, 1, reps[0].DeleteFiles)
	require.Equal(t, []string{
		`{"id":1} 100 01:40-08:20 closed ann`,
		`{"id":1} 500 08:20-15:00 closed annie`,
		`{"id":1} 900 15:00-- current anna`,
		`{"id":2} 200 03:20-10:00 closed bob`,
	}, rows())

	code, _ = run("-tables", "inventory.nope", propsFile)
	require.Equal(t, 1, code)
	code, _ = run("-format", "yaml", propsFile)
	require.Equal(t, 2, code)
}
