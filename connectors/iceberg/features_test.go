package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/transforms"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

// TestExampleConfigsAccepted: the example configs of the Apache docs and the Tabular README
// are accepted unchanged (plugin lookup by either class name, parse, validate, catalog props).
func TestExampleConfigsAccepted(t *testing.T) {
	reg := connect.NewRegistry(Plugins(), transforms.Plugins())
	files, err := filepath.Glob(filepath.Join(icebergtest.RepoRoot(), "testdata", "iceberg", "configs", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 10)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			var doc struct {
				Name   string            `json:"name"`
				Config map[string]string `json:"config"`
			}
			require.NoError(t, json.Unmarshal(b, &doc))
			props := map[string]string{"name": doc.Name}
			for k, v := range doc.Config {
				props[k] = v
			}
			p, ok := reg.LookupType(props["connector.class"], connect.PluginSink)
			require.True(t, ok, "plugin %s", props["connector.class"])
			conn := p.New().(connect.SinkConnector)
			for _, cv := range conn.ConfigDef().Validate(props) {
				require.Empty(t, cv.Errors, cv.Name)
			}
			require.Empty(t, conn.(connect.ConfigValidator).Validate(props))
			require.NoError(t, conn.Start(props))
			tcs, err := conn.TaskConfigs(2)
			require.NoError(t, err)
			require.Len(t, tcs, 2)
			cfg, err := ParseConfig(tcs[0])
			require.NoError(t, err)
			cp, err := catalogx.Props(cfg.CatalogProps)
			require.NoError(t, err)
			require.NotEmpty(t, cp["type"])
			require.NoError(t, conn.Stop())
		})
	}
	// the Tabular class name resolves to the same plugin
	a, _ := reg.Lookup(ApacheClass)
	b, _ := reg.Lookup(TabularClass)
	require.Same(t, a, b)
	for _, c := range []string{transforms.DebeziumTransformClass, transforms.KafkaMetadataTransformClass} {
		_, ok := reg.LookupType(c, connect.PluginTransformation)
		require.True(t, ok, c)
	}
}

func TestConfigErrors(t *testing.T) {
	base := map[string]string{"name": "x", "iceberg.catalog.type": "rest", "iceberg.catalog.uri": "http://x"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		props map[string]string
		err   string
	}{
		{with(), "Must specify table name(s)"},
		{with(KeyTables, "a.b", KeyDynamicEnabled, "true", KeyRouteField, "f"), "Cannot specify both"},
		{with(KeyDynamicEnabled, "true"), "Must specify a route field"},
		{map[string]string{"name": "x", KeyTables: "a.b"}, "Catalog properties are required"},
		{with(KeyTables, "a.b", "iceberg.table.a.b.route-regex", "("), "route-regex"},
	} {
		_, err := ParseConfig(tc.props)
		require.ErrorContains(t, err, tc.err)
	}
	cfg, err := ParseConfig(with(KeyTables, "a.b", "iceberg.table.a.b.id-columns", "k1, k2", "iceberg.table.a.b.partition-by", "day(ts), bucket(k1,16)",
		KeyDefaultIDColumns, "id", "iceberg.table.a.b.commit-branch", "br", KeyWritePropsPfx+"write.parquet.compression-codec", "zstd"))
	require.NoError(t, err)
	o := cfg.TableOptions("a.b")
	require.Equal(t, []string{"k1", "k2"}, o.IDColumns)
	require.Equal(t, []string{"day(ts)", "bucket(k1,16)"}, o.PartitionBy)
	require.Equal(t, "br", o.CommitBranch)
	require.Equal(t, "zstd", o.WriteProps["write.parquet.compression-codec"])
	require.Equal(t, "connect-x", cfg.GroupID)
	require.Equal(t, []string{"id"}, cfg.TableOptions("c.d").IDColumns)
}

func TestIdentifierFieldValidation(t *testing.T) {
	sc := ice.NewSchema(0,
		ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
		ice.NestedField{ID: 2, Name: "f", Type: ice.PrimitiveTypes.Float64, Required: true},
		ice.NestedField{ID: 3, Name: "opt", Type: ice.PrimitiveTypes.String},
	)
	require.NoError(t, icetable.ValidateIdentifierFields(sc, []string{"id"}))
	require.ErrorContains(t, icetable.ValidateIdentifierFields(sc, []string{"f"}), "floating point")
	require.ErrorContains(t, icetable.ValidateIdentifierFields(sc, []string{"opt"}), "required")
	require.ErrorContains(t, icetable.ValidateIdentifierFields(sc, []string{"nope"}), "not found")
	// auto-create makes optional id columns required, and rejects floating ones
	cat := sqliteCatalog(t)
	st := &ice.StructType{FieldList: []ice.NestedField{{ID: 1, Name: "f", Type: ice.PrimitiveTypes.Float64}}}
	_, err := icetable.CreateTable(context.Background(), cat, catalog.ToIdentifier("db.bad"), st, icetable.TableOptions{IDColumns: []string{"f"}})
	require.ErrorContains(t, err, "floating point")
}

func jsonRecord(topic string, off int64, v map[string]any) *connect.SinkRecord {
	return &connect.SinkRecord{Topic: topic, Value: v, Offset: off, Timestamp: 1700000000000,
		OriginalTopic: topic, OriginalOffset: off}
}

// TestRoutingAndAutoCreate: static routing by regex on a field, dynamic routing by field;
// auto-created tables carry the configured partition spec and identifier fields and open in
// the independent reader.
func TestRoutingAndAutoCreate(t *testing.T) {
	t.Run("static-regex", func(t *testing.T) {
		props, _ := sinkProps(t, map[string]string{
			KeyTables:     "default.events_list,default.events_create",
			KeyRouteField: "type",
			"iceberg.table.default.events_list.route-regex":    "list",
			"iceberg.table.default.events_create.route-regex":  "create|make",
			"iceberg.table.default.events_list.partition-by":   "hour(ts)",
			"iceberg.table.default.events_create.partition-by": "bucket(id,16),truncate(payload,4)",
			"iceberg.table.default.events_create.id-columns":   "id",
		})
		task, _ := startTask(t, props)
		var recs []*connect.SinkRecord
		want := map[string]int{}
		types := []string{"list", "create", "make", "other", "listing"}
		for i := 0; i < 100; i++ {
			typ := types[i%len(types)]
			recs = append(recs, jsonRecord("events", int64(i), map[string]any{"id": fmt.Sprintf("id-%d", i), "type": typ,
				"ts": time.Date(2026, 1, 1, i%24, 0, 0, 0, time.UTC).Format(time.RFC3339), "payload": fmt.Sprintf("p%03d", i)}))
			switch typ {
			case "list":
				want["default.events_list"]++
			case "create", "make":
				want["default.events_create"]++
			}
		}
		// ts arrives as a string in schemaless JSON: the table gets a string column, so use a
		// typed record for the hour(ts) table via Connect schema below instead.
		for _, r := range recs {
			m := r.Value.(map[string]any)
			ts, _ := time.Parse(time.RFC3339, m["ts"].(string))
			m["ts"] = ts
		}
		require.NoError(t, task.Put(context.Background(), recs))
		require.True(t, task.coord.CommitNow(context.Background()))
		require.NoError(t, task.Stop())
		for name, n := range want {
			cat, meta := loadTable(t, props, name)
			got := duckRows(t, meta, "SELECT count(*), count(DISTINCT type) FROM t")
			distinct := 1
			if name == "default.events_create" {
				distinct = 2
			}
			require.Equal(t, []string{fmt.Sprintf("%d|%d", n, distinct)}, got, name)
			tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(name))
			require.NoError(t, err)
			spec := tbl.Spec()
			if name == "default.events_list" {
				require.Equal(t, 1, spec.NumFields())
				require.Equal(t, "hour", spec.Field(0).Transform.String())
				require.Empty(t, tbl.Schema().IdentifierFieldIDs)
			} else {
				require.Equal(t, 2, spec.NumFields())
				require.Equal(t, "bucket[16]", spec.Field(0).Transform.String())
				require.Equal(t, "truncate[4]", spec.Field(1).Transform.String())
				f, _ := tbl.Schema().FindFieldByName("id")
				require.Equal(t, []int{f.ID}, tbl.Schema().IdentifierFieldIDs)
				require.True(t, f.Required)
			}
		}
	})
	t.Run("dynamic", func(t *testing.T) {
		props, _ := sinkProps(t, map[string]string{
			KeyDynamicEnabled:     "true",
			KeyRouteField:         "meta.db_table",
			KeyDefaultPartitionBy: "region",
		})
		task, _ := startTask(t, props)
		var recs []*connect.SinkRecord
		for i := 0; i < 60; i++ {
			recs = append(recs, jsonRecord("events", int64(i), map[string]any{"n": int64(i), "region": []string{"eu", "us"}[i%2],
				"meta": map[string]any{"db_table": []string{"Dyn.A", "dyn.b", "dyn.c"}[i%3]}}))
		}
		require.NoError(t, task.Put(context.Background(), recs))
		require.True(t, task.coord.CommitNow(context.Background()))
		require.NoError(t, task.Stop())
		for _, name := range []string{"dyn.a", "dyn.b", "dyn.c"} {
			cat, meta := loadTable(t, props, name)
			require.Equal(t, []string{"20|2"}, duckRows(t, meta, "SELECT count(*), count(DISTINCT region) FROM t"), name)
			tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(name))
			require.NoError(t, err)
			spec := tbl.Spec()
			require.Equal(t, "identity", spec.Field(0).Transform.String())
		}
	})
}

// TestEvolutionWritesNarrowerValues: with schema evolution on, a schemaless record whose number is
// integral where the table's column is a double is written into it (as the JVM sink converts values
// to the column's type), for append and upsert tables alike: no DLQ report, no failed round.
func TestEvolutionWritesNarrowerValues(t *testing.T) {
	for _, mode := range []map[string]string{
		{},
		{KeyDefaultIDColumns: "id", KeyUpsertModeEnabled: "true"},
	} {
		conf := map[string]string{KeyTables: "shop.prices", KeyEvolveSchemaEnabled: "true"}
		for k, v := range mode {
			conf[k] = v
		}
		props, _ := sinkProps(t, conf)
		task, dctx := startDLQTask(t, props)
		ctx := context.Background()
		require.NoError(t, task.Put(ctx, []*connect.SinkRecord{jsonRecord("prices", 0, map[string]any{"id": "a", "amount": 1.5})}))
		require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
		require.NoError(t, task.Put(ctx, []*connect.SinkRecord{jsonRecord("prices", 1, map[string]any{"id": "b", "amount": int64(2)})}))
		require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
		require.NoError(t, task.Stop())
		require.Empty(t, dctx.reported, "mode %v", mode)
		_, meta := loadTable(t, props, "shop.prices")
		require.Equal(t, []string{"a|1.5", "b|2.0"}, duckRows(t, meta, "SELECT id, amount FROM t ORDER BY id"), "mode %v", mode)
	}
}

// TestSchemaEvolution: a new optional field and an int field widened to long mid-stream (plus
// float->double, a required column becoming optional, and a new nested struct field) evolve
// the table; earlier rows read the new columns as null.
func TestSchemaEvolution(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{
		KeyTables:              "shop.orders",
		KeyEvolveSchemaEnabled: "true",
	})
	v1 := connect.StructBuilder().Name("orders").
		Field("id", connect.Int64Builder().MustBuild()).
		Field("qty", connect.Int32Builder().MustBuild()).
		Field("price", connect.Float32Builder().MustBuild()).
		Field("note", connect.StringBuilder().MustBuild()).
		Field("addr", connect.StructBuilder().Field("city", connect.StringBuilder().Optional().MustBuild()).Optional().MustBuild()).
		MustBuild()
	addr2 := connect.StructBuilder().Field("city", connect.StringBuilder().Optional().MustBuild()).
		Field("zip", connect.StringBuilder().Optional().MustBuild()).Optional().MustBuild()
	v2 := connect.StructBuilder().Name("orders").
		Field("id", connect.Int64Builder().MustBuild()).
		Field("qty", connect.Int64Builder().MustBuild()).
		Field("price", connect.Float64Builder().MustBuild()).
		Field("note", connect.StringBuilder().Optional().MustBuild()).
		Field("addr", addr2).
		Field("email", connect.StringBuilder().Optional().MustBuild()).
		MustBuild()
	task, _ := startTask(t, props)
	var recs []*connect.SinkRecord
	for i := 0; i < 10; i++ {
		s := connect.NewStruct(v1)
		s.PutIndex(0, int64(i))
		s.PutIndex(1, int32(i))
		s.PutIndex(2, float32(1.5))
		s.PutIndex(3, "n")
		a := connect.NewStruct(v1.Fields()[4].Schema)
		a.PutIndex(0, "c")
		s.PutIndex(4, a)
		recs = append(recs, &connect.SinkRecord{Topic: "orders", ValueSchema: v1, Value: s, Offset: int64(i), OriginalTopic: "orders", OriginalOffset: int64(i)})
	}
	require.NoError(t, task.Put(context.Background(), recs))
	require.True(t, task.coord.CommitNow(context.Background()))
	recs = nil
	for i := 10; i < 20; i++ {
		s := connect.NewStruct(v2)
		s.PutIndex(0, int64(i))
		s.PutIndex(1, int64(1)<<40+int64(i))
		s.PutIndex(2, 2.25)
		a := connect.NewStruct(addr2)
		a.PutIndex(0, "c2")
		a.PutIndex(1, "z")
		s.PutIndex(4, a)
		s.PutIndex(5, fmt.Sprintf("u%d@x", i))
		recs = append(recs, &connect.SinkRecord{Topic: "orders", ValueSchema: v2, Value: s, Offset: int64(i), OriginalTopic: "orders", OriginalOffset: int64(i)})
	}
	// mixed: v1 records after v2 still write (narrower types are fine)
	s := connect.NewStruct(v1)
	s.PutIndex(0, int64(99))
	s.PutIndex(1, int32(7))
	s.PutIndex(2, float32(0.5))
	s.PutIndex(3, "late")
	recs = append(recs, &connect.SinkRecord{Topic: "orders", ValueSchema: v1, Value: s, Offset: 20, OriginalTopic: "orders", OriginalOffset: 20})
	require.NoError(t, task.Put(context.Background(), recs))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.NoError(t, task.Stop())

	cat, meta := loadTable(t, props, "shop.orders")
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.orders"))
	require.NoError(t, err)
	sc := tbl.Schema()
	qty, _ := sc.FindFieldByName("qty")
	require.Equal(t, ice.PrimitiveTypes.Int64, qty.Type)
	price, _ := sc.FindFieldByName("price")
	require.Equal(t, ice.PrimitiveTypes.Float64, price.Type)
	note, _ := sc.FindFieldByName("note")
	require.False(t, note.Required)
	_, ok := sc.FindFieldByName("addr.zip")
	require.True(t, ok)
	email, ok := sc.FindFieldByName("email")
	require.True(t, ok)
	require.False(t, email.Required)

	got := duckRows(t, meta, "SELECT id, qty, email IS NULL, addr.zip IS NULL FROM t WHERE id IN (0, 9, 10, 19, 99)")
	require.Equal(t, []string{
		"0|0|true|true", "10|1099511627786|false|false", "19|1099511627795|false|false", "99|7|true|true", "9|9|true|true",
	}, got)
	require.Equal(t, []string{"21"}, duckRows(t, meta, "SELECT count(*) FROM t"))
}

// TestSMTs checks DebeziumTransform and KafkaMetadataTransform outputs, with and without schemas.
func TestSMTs(t *testing.T) {
	e := cdcEvent{Op: "u", ID: 5, Name: "x", Version: 2}
	r := cdcRecord(e, "cdc.shop.customers", 1, 42)
	dt := &transforms.DebeziumTransform{}
	require.NoError(t, dt.Configure(map[string]string{"cdc.target.pattern": "lake.{db}_{table}"}))
	out, err := dt.Apply(r)
	require.NoError(t, err)
	v := out.Value.(*connect.Struct)
	require.Equal(t, int64(5), v.Get("id"))
	cdc := v.Get("_cdc").(*connect.Struct)
	require.Equal(t, "U", cdc.Get("op"))
	require.Equal(t, int64(42), cdc.Get("offset"))
	require.Equal(t, "public.customers", cdc.Get("source"))
	require.Equal(t, "lake.public_customers", cdc.Get("target"))
	require.Equal(t, int64(5), cdc.Get("key").(*connect.Struct).Get("id"))

	del := cdcRecord(cdcEvent{Op: "d", ID: 6, KeyOnly: true}, "t", 0, 1)
	out, err = dt.Apply(del)
	require.NoError(t, err)
	require.Equal(t, "D", out.Value.(*connect.Struct).Get("_cdc").(*connect.Struct).Get("op"))
	require.Equal(t, int64(6), out.Value.(*connect.Struct).Get("id"))

	sl := &connect.SinkRecord{Topic: "t", Offset: 3, Value: map[string]any{"op": "c", "after": map[string]any{"id": 1},
		"source": map[string]any{"db": "shop", "table": "t"}, "ts_ms": int64(5)}}
	out, err = dt.Apply(sl)
	require.NoError(t, err)
	m := out.Value.(map[string]any)
	require.Equal(t, 1, m["id"])
	require.Equal(t, "I", m["_cdc"].(map[string]any)["op"])
	require.Equal(t, "lake.shop_t", m["_cdc"].(map[string]any)["target"])

	km := &transforms.KafkaMetadataTransform{}
	require.NoError(t, km.Configure(map[string]string{"external_field": "cluster,prod"}))
	out, err = km.Apply(r)
	require.NoError(t, err)
	v = out.Value.(*connect.Struct)
	require.Equal(t, "cdc.shop.customers", v.Get("_kafka_metadata_topic"))
	require.Equal(t, int32(1), v.Get("_kafka_metadata_partition"))
	require.Equal(t, int64(42), v.Get("_kafka_metadata_offset"))
	require.Equal(t, "prod", v.Get("_kafka_metadata_cluster"))
	require.NoError(t, km.Configure(map[string]string{"nested": "true", "field_name": "kafka"}))
	out, err = km.Apply(sl)
	require.NoError(t, err)
	require.Equal(t, int64(3), out.Value.(map[string]any)["kafka"].(map[string]any)["offset"])
}

// TestSMTChainIntoUpsertTable: DebeziumTransform + cdc-field _cdc.op routed by _cdc.target,
// the Apache docs' CDC setup, into an auto-created upsert table.
func TestSMTChainIntoUpsertTable(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{
		KeyDynamicEnabled:   "true",
		KeyRouteField:       "_cdc.target",
		KeyCDCField:         "_cdc.op",
		KeyDefaultIDColumns: "id",
	})
	task, _ := startTask(t, props)
	dt := &transforms.DebeziumTransform{}
	require.NoError(t, dt.Configure(map[string]string{"cdc.target.pattern": "lake.{table}"}))
	events, want := cdcStream(5, 800, 60, 1)
	var recs []*connect.SinkRecord
	for i, e := range events {
		r, err := dt.Apply(cdcRecord(e, "cdc", 0, int64(i)))
		require.NoError(t, err)
		recs = append(recs, r)
	}
	require.NoError(t, task.Put(context.Background(), recs[:400]))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.NoError(t, task.Put(context.Background(), recs[400:]))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.NoError(t, task.Stop())
	_, meta := loadTable(t, props, "lake.customers")
	require.Equal(t, wantRows(want), duckRows(t, meta, "SELECT id, name, version FROM t"))
}

// TestS3Warehouse: data and metadata on a real S3-compatible server (moto, a separate
// process), read back by DuckDB over S3.
func TestS3Warehouse(t *testing.T) {
	s3 := icebergtest.StartS3(t, "lake")
	props, _ := sinkProps(t, map[string]string{
		KeyTables:                              "shop.customers",
		KeyDefaultIDColumns:                    "id",
		KeyUpsertModeEnabled:                   "true",
		"iceberg.catalog.warehouse":            "s3://lake/wh",
		"iceberg.catalog.io-impl":              "org.apache.iceberg.aws.s3.S3FileIO",
		"iceberg.catalog.s3.endpoint":          s3.Endpoint,
		"iceberg.catalog.s3.access-key-id":     s3.Key,
		"iceberg.catalog.s3.secret-access-key": s3.Secret,
		"iceberg.catalog.s3.path-style-access": "true",
		"iceberg.catalog.client.region":        s3.Region,
	})
	task, _ := startTask(t, props)
	events, want := cdcStream(9, 600, 50, 1)
	var recs []*connect.SinkRecord
	for i, e := range events {
		recs = append(recs, cdcRecord(e, "cdc", 0, int64(i)))
	}
	require.NoError(t, task.Put(context.Background(), recs[:300]))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.NoError(t, task.Put(context.Background(), recs[300:]))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.NoError(t, task.Stop())
	_, meta := loadTable(t, props, "shop.customers")
	require.Contains(t, meta, "s3://lake/wh/")
	res := icebergtest.Read(t, meta, "SELECT id, name, version FROM t", s3)
	var got []string
	for _, r := range res.Rows {
		got = append(got, fmt.Sprintf("%v|%v|%v", r[0], r[1], r[2]))
	}
	sort.Strings(got)
	require.Equal(t, wantRows(want), got)
}

func TestCaseInsensitiveColumns(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.ci", KeySchemaCaseInsens: "true", KeyEvolveSchemaEnabled: "true"})
	task, _ := startTask(t, props)
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{
		jsonRecord("t", 0, map[string]any{"Id": int64(1), "Name": "a"}),
	}))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{
		jsonRecord("t", 1, map[string]any{"ID": int64(2), "NAME": "b", "extra": "x"}),
	}))
	require.True(t, task.coord.CommitNow(context.Background()))
	require.NoError(t, task.Stop())
	_, meta := loadTable(t, props, "db.ci")
	require.Equal(t, []string{"1|a|<nil>", "2|b|x"}, duckRows(t, meta, "SELECT \"Id\", \"Name\", extra FROM t"))
}

// TestRESTCatalog: the sink against a real Iceberg REST catalog server (Apache Iceberg's
// RESTCatalogServer, Java): auto-create with identifier fields, upserts over two commits,
// read back by DuckDB from the metadata the server wrote.
func TestRESTCatalog(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	dir := t.TempDir()
	uri := icebergtest.StartRESTCatalog(t, dir)
	props, _ := sinkProps(t, map[string]string{
		KeyTables:                   "shop.customers",
		KeyDefaultIDColumns:         "id",
		KeyDefaultPartitionBy:       "bucket(id,4)",
		"iceberg.catalog.type":      "rest",
		"iceberg.catalog.uri":       uri,
		"iceberg.catalog.warehouse": "",
	})
	delete(props, "iceberg.catalog.catalog-impl")
	delete(props, "iceberg.catalog.warehouse")
	task, _ := startTask(t, props)
	events, want := cdcStream(13, 800, 80, 1)
	var recs []*connect.SinkRecord
	for i, e := range events {
		recs = append(recs, cdcRecord(e, "cdc", 0, int64(i)))
	}
	require.NoError(t, task.Put(context.Background(), recs[:400]))
	require.True(t, task.coord.CommitNow(context.Background()), task.coord.stats().LastError)
	require.NoError(t, task.Put(context.Background(), recs[400:]))
	require.True(t, task.coord.CommitNow(context.Background()), task.coord.stats().LastError)
	require.NoError(t, task.Stop())
	cat, meta := loadTable(t, props, "shop.customers")
	require.Equal(t, wantRows(want), duckRows(t, meta, "SELECT id, name, version FROM t"))
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers"))
	require.NoError(t, err)
	require.Len(t, tbl.Schema().IdentifierFieldIDs, 1)
	offs, err := icetable.CommittedOffsets(tbl, "", icetable.OffsetsSummaryKey("connect-"+props["name"]))
	require.NoError(t, err)
	require.Equal(t, int64(len(events)), offs[icetable.TP{Topic: "cdc", Partition: 0}])
}

func TestMissingStaticTableFailsTask(t *testing.T) {
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.nope", KeyAutoCreateEnabled: "false"})
	task, _ := startTask(t, props)
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{jsonRecord("t", 0, map[string]any{"a": int64(1)})}))
	require.False(t, task.coord.CommitNow(context.Background()))
	err := task.Put(context.Background(), []*connect.SinkRecord{jsonRecord("t", 1, map[string]any{"a": int64(2)})})
	require.ErrorContains(t, err, "db.nope")
	require.NoError(t, task.Stop())
}

// TestTypeMapping: Connect logical types and Debezium's time/decimal types map to the right
// Iceberg types and values (read back by DuckDB).
func TestTypeMapping(t *testing.T) {
	named := func(b *connect.SchemaBuilder, name string) *connect.Schema {
		return b.Name(name).Optional().MustBuild()
	}
	sc := connect.StructBuilder().Name("types").
		Field("id", connect.Int64Builder().MustBuild()).
		Field("dec", connect.DecimalBuilder(2).Optional().MustBuild()).
		Field("d", connect.DateBuilder().Optional().MustBuild()).
		Field("tm", connect.TimeBuilder().Optional().MustBuild()).
		Field("ts", connect.TimestampBuilder().Optional().MustBuild()).
		Field("dbz_date", named(connect.Int32Builder(), "io.debezium.time.Date")).
		Field("dbz_micro_ts", named(connect.Int64Builder(), "io.debezium.time.MicroTimestamp")).
		Field("dbz_ts", named(connect.Int64Builder(), "io.debezium.time.Timestamp")).
		Field("dbz_nano_ts", named(connect.Int64Builder(), "io.debezium.time.NanoTimestamp")).
		Field("dbz_zoned", named(connect.StringBuilder(), "io.debezium.time.ZonedTimestamp")).
		Field("dbz_micro_time", named(connect.Int64Builder(), "io.debezium.time.MicroTime")).
		Field("small", connect.Int16Builder().Optional().MustBuild()).
		Field("f", connect.Float32Builder().Optional().MustBuild()).
		Field("b", connect.BoolBuilder().Optional().MustBuild()).
		Field("bytes", connect.BytesBuilder().Optional().MustBuild()).
		Field("tags", connect.ArrayBuilder(connect.StringBuilder().MustBuild()).Optional().MustBuild()).
		Field("attrs", connect.MapBuilder(connect.StringBuilder().MustBuild(), connect.Int32Builder().MustBuild()).Optional().MustBuild()).
		MustBuild()
	ts := time.Date(2026, 5, 17, 10, 11, 12, 345678000, time.UTC)
	s := connect.NewStruct(sc)
	vals := []any{int64(1), connect.NewDecimal(12345, 2), time.Date(2026, 5, 17, 0, 0, 0, 0, time.UTC),
		time.Date(1970, 1, 1, 10, 11, 12, 0, time.UTC), ts.Truncate(time.Millisecond),
		int32(20590), ts.UnixMicro(), ts.UnixMilli(), ts.UnixNano(), "2026-05-17T10:11:12.345678Z", int64(36672345678),
		int16(7), float32(1.5), true, []byte{1, 2}, []any{"x", "y"}, map[any]any{"k": int32(3)}}
	for i, v := range vals {
		s.PutIndex(i, v)
	}
	props, _ := sinkProps(t, map[string]string{KeyTables: "db.types"})
	task, _ := startTask(t, props)
	require.NoError(t, task.Put(context.Background(), []*connect.SinkRecord{{Topic: "t", ValueSchema: sc, Value: s, OriginalTopic: "t"}}))
	require.True(t, task.coord.CommitNow(context.Background()), task.coord.stats().LastError)
	require.NoError(t, task.Stop())
	cat, meta := loadTable(t, props, "db.types")
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("db.types"))
	require.NoError(t, err)
	types := map[string]string{}
	for _, f := range tbl.Schema().Fields() {
		types[f.Name] = f.Type.String()
	}
	require.Equal(t, map[string]string{"id": "long", "dec": "decimal(38, 2)", "d": "date", "tm": "time", "ts": "timestamptz",
		"dbz_date": "date", "dbz_micro_ts": "timestamp", "dbz_ts": "timestamp", "dbz_nano_ts": "timestamp", "dbz_zoned": "timestamptz",
		"dbz_micro_time": "time", "small": "int", "f": "float", "b": "boolean", "bytes": "binary", "tags": "list<string>",
		"attrs": "map<string, int>"}, types)
	got := duckRows(t, meta, `SELECT dec::VARCHAR, d::VARCHAR, tm::VARCHAR, epoch_us(ts), dbz_date::VARCHAR, epoch_us(dbz_micro_ts),
		epoch_us(dbz_ts), epoch_us(dbz_nano_ts), epoch_us(dbz_zoned), dbz_micro_time::VARCHAR, small, f, b, tags[2], attrs['k'] FROM t`)
	us := ts.UnixMicro()
	ms := ts.Truncate(time.Millisecond).UnixMicro()
	require.Equal(t, []string{fmt.Sprintf("123.45|2026-05-17|10:11:12|%d|2026-05-17|%d|%d|%d|%d|10:11:12.345678|7|1.5|true|y|3", ms, us, ms, us, us)}, got)
}
