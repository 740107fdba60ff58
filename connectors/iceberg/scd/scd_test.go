package scd

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

func TestCompareVersion(t *testing.T) {
	for _, c := range []struct {
		a, b any
		want int
	}{
		{"9", "10", -1}, // Postgres LSN by value
		{"123456789012345678901234567890", "99", 1},               // Oracle SCN beyond int64
		{"mysql-bin.000042:758:0", "mysql-bin.000042:1000:0", -1}, // MySQL by part
		{"mysql-bin.000042:1000", "mysql-bin.000043:4", -1},
		{"0000000a:00000758:0005", "00000027:00000001:0001", -1}, // SQL Server LSN as hex
		{"1700000000000:2", "1700000000000:10", -1},              // MongoDB ts:ord
		{int64(5), int64(5), 0},
		{"041010", "0510000", -1}, // the sink's normalized envelope versions
	} {
		require.Equal(t, c.want, compareVersion(c.a, c.b), "%v vs %v", c.a, c.b)
		require.Equal(t, -c.want, compareVersion(c.b, c.a), "%v vs %v", c.b, c.a)
	}
}

func at(min int) time.Time { return time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC) }

func TestIntervals(t *testing.T) {
	ev := func(v int, min int, name string) Event {
		return Event{Key: "k", Version: fmt.Sprint(v), ValidFrom: at(min), Attrs: []any{name}}
	}
	del := func(v int, min int) Event {
		return Event{Key: "k", Version: fmt.Sprint(v), ValidFrom: at(min), Deleted: true}
	}
	lines := func(rows []icerow.Row) []string {
		var out []string
		for _, r := range rows {
			to := "-"
			if v, ok := r[ColValidTo].(time.Time); ok {
				to = fmt.Sprint(v.Minute())
			}
			out = append(out, fmt.Sprintf("%v %d-%s %v %v %v", r[ColSourceVersion], r[ColValidFrom].(time.Time).Minute(), to,
				r[ColIsCurrent], r["name"], r[ColIsDeleted]))
		}
		return out
	}
	attrs := []string{"name"}
	// a late older version splits the interval it falls in; a duplicate is one version
	evs := []Event{ev(100, 1, "a"), ev(300, 3, "c"), ev(200, 2, "b"), ev(300, 3, "c")}
	require.Equal(t, []string{"100 1-2 false a <nil>", "200 2-3 false b <nil>", "300 3-- true c <nil>"}, lines(Intervals(evs, attrs, Rules{})))
	// a delete closes the interval; a re-insert opens a new one
	evs = []Event{ev(1, 1, "a"), del(2, 2), ev(3, 3, "a")}
	require.Equal(t, []string{"1 1-2 false a <nil>", "3 3-- true a <nil>"}, lines(Intervals(evs, attrs, Rules{})))
	require.Equal(t, []string{"1 1-2 false a false", "2 2-3 false <nil> true", "3 3-- true a false"},
		lines(Intervals(evs, attrs, Rules{DeleteMarkers: true})))
	// a delete as the last version: no current row
	require.Equal(t, []string{"1 1-2 false a <nil>"}, lines(Intervals(evs[:2], attrs, Rules{})))
	// unchanged versions skipped on request; a late version can make a kept one unchanged
	evs = []Event{ev(1, 1, "a"), ev(2, 2, "a"), ev(3, 3, "b")}
	require.Equal(t, []string{"1 1-3 false a <nil>", "3 3-- true b <nil>"}, lines(Intervals(evs, attrs, Rules{SkipUnchanged: true})))
	evs = append(evs, ev(4, 4, "b"), ev(5, 5, "c"), del(6, 6), del(7, 7))
	require.Equal(t, []string{"1 1-3 false a false", "3 3-5 false b false", "5 5-6 false c false", "6 6-- false <nil> true"},
		lines(Intervals(evs, attrs, Rules{SkipUnchanged: true, DeleteMarkers: true})))
	// the same version delivered twice with different content: the later delivery wins
	a, b := ev(1, 1, "first"), ev(1, 1, "second")
	a.Delivery, b.Delivery = [2]int64{0, 9}, [2]int64{0, 10}
	require.Equal(t, []string{"1 1-- true second <nil>"}, lines(Intervals([]Event{b, a}, attrs, Rules{})))
	// record_hash tells null from empty
	require.NotEqual(t, Hash([]any{nil}), Hash([]any{""}))
	require.NotEqual(t, Hash([]any{"a", "b"}), Hash([]any{"ab", ""}))
}

// TestColumnsHistory: a history table that is not the raw CDC model (an append table with typed key,
// version, time and attribute columns and an op column) is materialized the same way.
func TestColumnsHistory(t *testing.T) {
	ctx := context.Background()
	cat := icebergtest.SQLiteCatalog(t)
	hist := table.Identifier{"db", "prices_log"}
	st := &ice.StructType{FieldList: []ice.NestedField{
		{ID: 1, Name: "sku", Type: ice.PrimitiveTypes.Int64, Required: true},
		{ID: 2, Name: "seq", Type: ice.PrimitiveTypes.Int64, Required: true},
		{ID: 3, Name: "changed_at", Type: ice.PrimitiveTypes.TimestampTz},
		{ID: 4, Name: "op", Type: ice.PrimitiveTypes.String},
		{ID: 5, Name: "price", Type: ice.DecimalTypeOf(10, 2)},
		{ID: 6, Name: "currency", Type: ice.PrimitiveTypes.String},
	}}
	w := &icetable.Writer{Cat: cat, Ident: hist, Opts: icetable.TableOptions{AutoCreate: true}}
	tp := icetable.TP{Topic: "prices", Partition: 0}
	off := int64(0)
	add := func(rows ...icerow.Row) {
		var recs []icetable.Rec
		for _, r := range rows {
			recs = append(recs, icetable.Rec{Op: icerow.OpInsert, Row: r, Schema: st, TP: tp, Offset: off})
			off++
		}
		_, err := w.Commit(ctx, recs, icetable.Offsets{tp: off}, nil)
		require.NoError(t, err)
	}
	price := func(units int64) icerow.Decimal { return icerow.Decimal{Unscaled: big.NewInt(units), Scale: 2} }
	add(icerow.Row{"sku": int64(7), "seq": int64(9), "changed_at": at(9), "op": "u", "price": price(1050), "currency": "EUR"},
		icerow.Row{"sku": int64(7), "seq": int64(12), "changed_at": at(12), "op": "u", "price": price(990), "currency": "EUR"})
	cfg, err := ParseConfig(map[string]string{
		KeyTables: "db.prices_log", KeyKeyColumn: "sku", KeyVersionColumn: "seq", KeyValidFromColumn: "changed_at",
		KeyOpColumn: "op", KeyAttributes: "price,currency", KeySkipUnchanged: "true",
	})
	require.NoError(t, err)
	require.Len(t, cfg.Tables, 1)
	o := cfg.Tables[0]
	require.Equal(t, table.Identifier{"db", "prices_log_scd"}, o.Target)
	rep, err := Run(ctx, cat, o)
	require.NoError(t, err)
	require.Equal(t, 2, rep.RowsWritten)
	// version 10 is late and equal to 9: skipped; 11 deletes; 12 re-inserts
	add(icerow.Row{"sku": int64(7), "seq": int64(10), "changed_at": at(10), "op": "u", "price": price(1050), "currency": "EUR"},
		icerow.Row{"sku": int64(7), "seq": int64(11), "changed_at": at(11), "op": "d"})
	rep, err = Run(ctx, cat, o)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Keys)
	tbl, err := cat.LoadTable(ctx, o.Target)
	require.NoError(t, err)
	var got []string
	for _, r := range icebergtest.ScanRows(t, tbl) {
		to := "-"
		if v, ok := r[ColValidTo].(time.Time); ok {
			to = fmt.Sprint(v.Minute())
		}
		got = append(got, fmt.Sprintf("%v %v %d-%s %v %v %v", r[ColBusinessKey], r[ColSourceVersion], r[ColValidFrom].(time.Time).Minute(), to,
			r[ColIsCurrent], r["price"], r["currency"]))
	}
	sort.Strings(got)
	require.Equal(t, []string{"7 12 12-- true 9.90 EUR", "7 9 9-11 false 10.50 EUR"}, got)
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig(map[string]string{
		KeyTables: "a.h1, a.h2", KeyInterval: "60000", KeyDeleteMarkers: "true",
		"iceberg.table.a.h2.scd-table": "b.dim", "iceberg.table.a.h2.scd-attributes": "x,y",
	})
	require.NoError(t, err)
	require.Equal(t, time.Minute, cfg.Interval)
	require.Len(t, cfg.Tables, 2)
	require.Equal(t, table.Identifier{"a", "h1_scd"}, cfg.Tables[0].Target)
	require.Equal(t, RawCDC, cfg.Tables[0].source())
	require.Equal(t, table.Identifier{"b", "dim"}, cfg.Tables[1].Target)
	require.Equal(t, []string{"x", "y"}, cfg.Tables[1].Attributes)
	require.True(t, cfg.Tables[1].DeleteMarkers)
	for _, bad := range []map[string]string{
		{KeyInterval: "1000"},                                         // no table
		{KeyTables: "a.h", KeyAttributes: "name,valid_to"},            // a reserved name
		{KeyTables: "a.h", KeyTargetSuffix: ""},                       // the history itself
		{KeyTables: "a.h", KeyKeyColumn: "id"},                        // no version column
		{KeyTables: "a.h", KeyKeyColumn: "id", KeyVersionColumn: "v"}, // no payload and no attributes
		{KeyTables: "a.h", KeyTargetFile: "-1"},
	} {
		_, err := ParseConfig(bad)
		require.Error(t, err, "%v", bad)
	}
}
