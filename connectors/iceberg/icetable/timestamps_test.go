package icetable_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icerow"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// instant is the value every case of the timestamp mapping writes: nanoseconds set, so that each
// column shows the precision it keeps.
var instant = time.Date(2026, 5, 17, 10, 11, 12, 345678912, time.UTC)

// timestampCase is one row of the sink's timestamp mapping (docs/guides/iceberg-sink.md, Types).
type timestampCase struct {
	column string
	schema *connect.Schema
	value  any // the Connect value of instant in this logical type
	// the Iceberg type of an auto-created column and the value read back, on format v2 and v3 tables
	want, wantV3 string
	back, backV3 time.Time
	comment      string
}

func timestampCases() []timestampCase {
	named := func(b *connect.SchemaBuilder, name string) *connect.Schema {
		return b.Name(name).Optional().MustBuild()
	}
	ms, us := instant.Truncate(time.Millisecond), instant.Truncate(time.Microsecond)
	return []timestampCase{
		{"connect_ts", connect.TimestampBuilder().Optional().MustBuild(), ms, "timestamptz", "timestamptz", ms, ms,
			"org.apache.kafka.connect.data.Timestamp: an instant, as the Apache sink maps it"},
		{"dbz_ts", named(connect.Int64Builder(), "io.debezium.time.Timestamp"), instant.UnixMilli(), "timestamp", "timestamp", ms, ms,
			"TIMESTAMP WITHOUT TIME ZONE (precision ≤ 3): epoch millis of the wall clock"},
		{"dbz_micro_ts", named(connect.Int64Builder(), "io.debezium.time.MicroTimestamp"), instant.UnixMicro(), "timestamp", "timestamp", us, us,
			"TIMESTAMP WITHOUT TIME ZONE (precision ≤ 6)"},
		{"dbz_nano_ts", named(connect.Int64Builder(), "io.debezium.time.NanoTimestamp"), instant.UnixNano(), "timestamp", "timestamp_ns", us, instant,
			"TIMESTAMP WITHOUT TIME ZONE (precision > 6): nanoseconds on format v3, truncated to microseconds before"},
		{"dbz_zoned_ts", named(connect.StringBuilder(), "io.debezium.time.ZonedTimestamp"), instant.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano),
			"timestamptz", "timestamptz", us, us, "TIMESTAMP WITH TIME ZONE: an ISO-8601 string with its offset, kept as the instant"},
	}
}

func timestampRecord(t *testing.T, cases []timestampCase) (icerow.Row, *ice.StructType) {
	b := connect.StructBuilder().Name("ts").Field("id", connect.Int64Builder().MustBuild())
	for _, c := range cases {
		b = b.Field(c.column, c.schema)
	}
	sc := b.MustBuild()
	s := connect.NewStruct(sc)
	s.Put("id", int64(1))
	for _, c := range cases {
		s.Put(c.column, c.value)
	}
	row, st, err := icerow.NewSchemaCache().RecordValue(sc, s)
	require.NoError(t, err)
	return row, st
}

func columnTypes(tbl *table.Table) map[string]string {
	types := map[string]string{}
	for _, f := range tbl.Schema().Fields() {
		types[f.Name] = f.Type.String()
	}
	return types
}

// TestTimestampMapping pins the sink's timestamp mapping: each Connect and Debezium timestamp type,
// the Iceberg type of the column it creates on a format v2 and a format v3 table, and its value
// read back.
func TestTimestampMapping(t *testing.T) {
	cases := timestampCases()
	for _, version := range []int{2, 3} {
		t.Run(fmt.Sprintf("format-v%d", version), func(t *testing.T) {
			ctx := context.Background()
			w := &icetable.Writer{Cat: sqliteCatalog(t), Ident: table.Identifier{"db", "ts"}, Opts: icetable.TableOptions{
				AutoCreate: true, AutoCreateProps: map[string]string{"format-version": fmt.Sprint(version)},
				OffsetsKey: icetable.OffsetsSummaryKey("connect-test"),
			}}
			row, st := timestampRecord(t, cases)
			tp := icetable.TP{Topic: "t"}
			_, err := w.Commit(ctx, []icetable.Rec{{Op: icerow.OpInsert, Row: row, Schema: st, TP: tp}}, icetable.Offsets{tp: 1}, nil)
			require.NoError(t, err)
			tbl, err := w.Cat.LoadTable(ctx, w.Ident)
			require.NoError(t, err)
			require.Equal(t, version, tbl.Metadata().Version())
			types := columnTypes(tbl)
			rows := scanRows(t, tbl)
			require.Len(t, rows, 1)
			for _, c := range cases {
				want, back := c.want, c.back
				if version >= 3 {
					want, back = c.wantV3, c.backV3
				}
				require.Equal(t, want, types[c.column], "%s (%s)", c.column, c.comment)
				require.Equal(t, back, rows[0][c.column], "%s (%s)", c.column, c.comment)
			}
			t.Run("duckdb", func(t *testing.T) {
				var sel, want []string
				for _, c := range cases {
					back := c.back
					if version >= 3 {
						back = c.backV3
					}
					sel = append(sel, fmt.Sprintf("epoch_ns(%s)", c.column))
					want = append(want, fmt.Sprint(back.UnixNano()))
				}
				got := duckRows(t, tbl.MetadataLocation(), "SELECT "+strings.Join(sel, ", ")+" FROM t")
				require.Equal(t, []string{strings.Join(want, "|")}, got)
			})
		})
	}
}

// A table whose timestamp columns were created with other timestamp types (timestamptz for every
// timestamp, as the sink once mapped them, or timestamp for Connect's Timestamp) keeps its column
// types and takes the values of every timestamp type: no schema change, the same instants.
func TestTimestampIntoExistingColumnOfOtherType(t *testing.T) {
	cases := timestampCases()
	for _, colType := range []ice.Type{ice.PrimitiveTypes.TimestampTz, ice.PrimitiveTypes.Timestamp} {
		t.Run(colType.String(), func(t *testing.T) {
			ctx := context.Background()
			cat := sqliteCatalog(t)
			fields := []ice.NestedField{{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true}}
			for i, c := range cases {
				fields = append(fields, ice.NestedField{ID: i + 2, Name: c.column, Type: colType})
			}
			_, err := icetable.CreateTable(ctx, cat, table.Identifier{"db", "ts"}, &ice.StructType{FieldList: fields}, icetable.TableOptions{})
			require.NoError(t, err)
			w := &icetable.Writer{Cat: cat, Ident: table.Identifier{"db", "ts"}, Opts: icetable.TableOptions{
				EvolveSchema: true, OffsetsKey: icetable.OffsetsSummaryKey("connect-test"),
			}}
			row, st := timestampRecord(t, cases)
			tp := icetable.TP{Topic: "t"}
			_, err = w.Commit(ctx, []icetable.Rec{{Op: icerow.OpInsert, Row: row, Schema: st, TP: tp}}, icetable.Offsets{tp: 1}, nil)
			require.NoError(t, err)
			tbl, err := cat.LoadTable(ctx, w.Ident)
			require.NoError(t, err)
			require.Equal(t, 0, tbl.Metadata().CurrentSchema().ID, "no schema change")
			types := columnTypes(tbl)
			rows := scanRows(t, tbl)
			require.Len(t, rows, 1)
			for _, c := range cases {
				require.Equal(t, colType.String(), types[c.column], c.column)
				require.Equal(t, c.back, rows[0][c.column], "%s (%s)", c.column, c.comment)
			}
		})
	}
}
