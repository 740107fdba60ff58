package iceberg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/catalogx"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// debeziumJSON renders an event as a schemaless Debezium JSON value (JsonConverter with
// schemas.enable=false) and its key.
func debeziumJSON(e cdcEvent, offset int64) (key, value []byte) {
	row := map[string]any{"id": e.ID}
	if !e.KeyOnly {
		row["name"] = e.Name
		row["region"] = []string{"eu", "us", "ap", "sa"}[e.Day]
		row["version"] = e.Version
	}
	v := map[string]any{"op": e.Op, "ts_ms": 1700000000000 + offset,
		"source": map[string]any{"connector": "postgresql", "name": "db", "db": "shop", "schema": "public", "table": "customers",
			"ts_ms": 1700000000000 + offset, "lsn": 1000 + offset, "txId": 500 + offset/10}}
	if e.Op == "d" {
		v["before"], v["after"] = row, nil
	} else {
		v["before"], v["after"] = nil, row
	}
	key, _ = json.Marshal(map[string]any{"id": e.ID})
	value, _ = json.Marshal(v)
	return key, value
}

// TestE2ESIGKILL runs the connectd binary (standalone) on the real broker: a Debezium JSON CDC
// stream goes to an upsert table (partitioned by region, which keys change) and a raw history
// table; the worker is SIGKILLed 6 times, every other time inside a table commit (files and
// table metadata written, the catalog row not yet updated: killInsideCommit), the others at
// random points. The
// independent reader then sees exactly the expected current state, and the history table
// holds exactly as many rows as records were produced (each Kafka offset once).
func TestE2ESIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ice-cdc")
	const parts = 3
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
	dir := t.TempDir()
	name := "ice-kill"
	port := workerproc.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=%s
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=200
`, addr, url)), 0o644))
	catDB := filepath.Join(dir, "catalog.db")
	wh := filepath.Join(dir, "warehouse")
	cprops := filepath.Join(dir, "iceberg.properties")
	require.NoError(t, os.WriteFile(cprops, []byte(fmt.Sprintf(`name=%s
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max=2
topics=%s
consumer.override.max.poll.records=150
consumer.override.session.timeout.ms=6000
consumer.override.heartbeat.interval.ms=1000
iceberg.tables=shop.customers,shop.customers_history
iceberg.tables.auto-create-enabled=true
iceberg.tables.default-id-columns=id
iceberg.table.shop.customers.partition-by=region
iceberg.table.shop.customers_history.raw-cdc=true
iceberg.catalog.type=sql
iceberg.catalog.uri=jdbc:sqlite:%s
iceberg.catalog.warehouse=%s
iceberg.control.commit.interval-ms=250
`, name, topic, catDB, wh)), 0o644))

	events, want := cdcStream(21, 6000, 300, parts)
	var next [parts]int64
	produce := func(evs []cdcEvent) {
		var msgs []*kgo.Record
		for _, e := range evs {
			p := int32(e.ID % parts)
			k, v := debeziumJSON(e, next[p])
			next[p]++
			msgs = append(msgs, &kgo.Record{Topic: topic, Partition: p, Key: k, Value: v})
		}
		kafkatest.ProducePartitioned(t, addr, topic, msgs...)
	}

	// committed reports the table offsets (what the history and state tables hold)
	props := map[string]string{"name": name, iceberg.KeyTables: "x.y", "iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:" + catDB, "iceberg.catalog.warehouse": wh}
	scfg, err := iceberg.ParseConfig(props)
	require.NoError(t, err)
	tableOffsets := func(tbl string) icetable.Offsets {
		cat, err := catalogx.Open(context.Background(), scfg.CatalogName, scfg.CatalogProps)
		if err != nil {
			return nil
		}
		defer func() {
			if c, ok := cat.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		}()
		tb, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(tbl))
		if err != nil {
			return nil
		}
		o, _ := icetable.CommittedOffsets(tb, "", icetable.OffsetsSummaryKey("connect-"+name))
		return o
	}
	caughtUp := func(tbl string) bool {
		o := tableOffsets(tbl)
		for p := int32(0); p < parts; p++ {
			if o[icetable.TP{Topic: topic, Partition: p}] < next[p] {
				return false
			}
		}
		return true
	}

	rng := rand.New(rand.NewSource(99))
	kills, insideCommit := 0, 0
	const incarnations = 6
	chunk := len(events) / (incarnations + 1)
	var lastOffsets icetable.Offsets
	for kills < incarnations {
		// new data for every incarnation; before a kill inside a commit, part of it is held back and
		// produced once the lock is about to be taken, so that a commit is still to come then
		evs, held := events[kills*chunk:(kills+1)*chunk], []cdcEvent(nil)
		if kills%2 == 0 {
			evs, held = evs[:len(evs)*2/3], evs[len(evs)*2/3:]
		}
		produce(evs)
		w := workerproc.Start(t, "standalone", wprops, cprops)
		workerproc.WaitHealthy(t, url, 60*time.Second)
		// wait until this incarnation has committed something new, then kill at a random point
		start := time.Now()
		progressed := false
		for time.Since(start) < 60*time.Second && !progressed {
			o := tableOffsets("shop.customers_history")
			if fmt.Sprint(o) != fmt.Sprint(lastOffsets) {
				lastOffsets, progressed = o, true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("incarnation %d: progressed=%v after %v, offsets %v", kills, progressed, time.Since(start).Round(time.Millisecond), lastOffsets)
		if !progressed {
			l := w.Log()
			t.Logf("worker log tail: %s", l[max(0, len(l)-5000):])
		}
		time.Sleep(time.Duration(rng.Intn(700)) * time.Millisecond)
		sigkill := func() { require.NoError(t, w.Cmd.Process.Signal(syscall.SIGKILL)) }
		if kills%2 == 0 {
			// every other kill lands inside a commit: files and table metadata written, the
			// catalog not yet pointing at them (a round starts every 250 ms)
			produce(held)
			killed := false
			for try := 0; try < 5 && !killed; try++ {
				killed = killInsideCommit(t, catDB, wh, 5*time.Second, sigkill)
			}
			require.True(t, killed, "incarnation %d: no commit reached the catalog", kills)
			insideCommit++
		} else {
			sigkill()
		}
		<-w.Exited()
		kills++
	}
	produce(events[kills*chunk:])
	w := workerproc.Start(t, "standalone", wprops, cprops)
	workerproc.WaitHealthy(t, url, 60*time.Second)
	require.Eventually(t, func() bool { return caughtUp("shop.customers_history") && caughtUp("shop.customers") },
		120*time.Second, 200*time.Millisecond, "tables never caught up")
	require.NoError(t, w.Cmd.Process.Signal(syscall.SIGTERM))
	<-w.Exited()

	cat, err := catalogx.Open(context.Background(), scfg.CatalogName, scfg.CatalogProps)
	require.NoError(t, err)
	st, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers"))
	require.NoError(t, err)
	ht, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers_history"))
	require.NoError(t, err)
	require.Equal(t, wantRows(want), duckRows(t, st.MetadataLocation(), "SELECT id, name, version FROM t"))
	require.Empty(t, duckRows(t, st.MetadataLocation(), "SELECT id FROM t GROUP BY id HAVING count(*) > 1"))
	total := next[0] + next[1] + next[2]
	require.Equal(t, int64(len(events)), total)
	require.Equal(t, []string{fmt.Sprintf("%d|%d", total, total)},
		duckRows(t, ht.MetadataLocation(), "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t"))
	// files written but never committed (kills inside a commit, between files and catalog)
	orphans := 0
	for _, tb := range []*table.Table{st, ht} {
		res, err := tb.DeleteOrphanFiles(context.Background(), table.WithDryRun(true), table.WithFilesOlderThan(time.Nanosecond))
		if err == nil {
			for _, f := range res.OrphanFileLocations {
				if strings.HasSuffix(f, ".parquet") {
					orphans++
				}
			}
		}
	}
	t.Logf("kills=%d (%d inside a commit) records=%d snapshots(state)=%d orphaned data/delete files (kills mid-commit)=%d", kills, insideCommit, total, len(st.Metadata().Snapshots()), orphans)
}

// TestE2ECatalogOutage: the SQL catalog lives in PostgreSQL (Debian's server); the database is
// stopped for 30 s mid-stream while records keep arriving. The task keeps running (no manual
// restart), retries, and after the database is back every record is in the tables exactly once.
func TestE2ECatalogOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e")
	}
	pg := icebergtest.StartPostgres(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ice-outage")
	const parts = 2
	kafkatest.CreateTopic(t, addr, topic, parts, nil)
	dir := t.TempDir()
	name := "ice-outage"
	port := workerproc.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=%s
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=200
`, addr, url)), 0o644))
	wh := filepath.Join(dir, "warehouse")
	cprops := filepath.Join(dir, "iceberg.properties")
	require.NoError(t, os.WriteFile(cprops, []byte(fmt.Sprintf(`name=%s
connector.class=io.tabular.iceberg.connect.IcebergSinkConnector
tasks.max=2
topics=%s
consumer.override.session.timeout.ms=6000
iceberg.tables=shop.customers,shop.customers_history
iceberg.tables.auto-create-enabled=true
iceberg.tables.default-id-columns=id
iceberg.table.shop.customers.partition-by=region
iceberg.table.shop.customers_history.raw-cdc=true
iceberg.catalog.catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog
iceberg.catalog.uri=%s
iceberg.catalog.jdbc.user=postgres
iceberg.catalog.warehouse=%s
iceberg.control.commit.interval-ms=300
iceberg.control.commit.retry-backoff-ms=1000
`, name, topic, pg.JDBCURI(), wh)), 0o644))

	events, want := cdcStream(33, 3000, 200, parts)
	var next [parts]int64
	produce := func(evs []cdcEvent) {
		var msgs []*kgo.Record
		for _, e := range evs {
			p := int32(e.ID % parts)
			k, v := debeziumJSON(e, next[p])
			next[p]++
			msgs = append(msgs, &kgo.Record{Topic: topic, Partition: p, Key: k, Value: v})
		}
		kafkatest.ProducePartitioned(t, addr, topic, msgs...)
	}
	scfg, err := iceberg.ParseConfig(map[string]string{"name": name, iceberg.KeyTables: "x.y", "iceberg.catalog.uri": pg.JDBCURI(),
		"iceberg.catalog.jdbc.user": "postgres", "iceberg.catalog.warehouse": wh})
	require.NoError(t, err)
	offsetsOf := func(tbl string) icetable.Offsets {
		cat, err := catalogx.Open(context.Background(), scfg.CatalogName, scfg.CatalogProps)
		if err != nil {
			return nil
		}
		defer func() {
			if c, ok := cat.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		}()
		tb, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(tbl))
		if err != nil {
			return nil
		}
		o, _ := icetable.CommittedOffsets(tb, "", icetable.OffsetsSummaryKey("connect-"+name))
		return o
	}
	caughtUp := func(tbl string) bool {
		o := offsetsOf(tbl)
		for p := int32(0); p < parts; p++ {
			if o[icetable.TP{Topic: topic, Partition: p}] < next[p] {
				return false
			}
		}
		return true
	}
	status := func() string {
		resp, err := http.Get(url + "/connectors/" + name + "/status")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		var st struct {
			Connector struct{ State string }   `json:"connector"`
			Tasks     []struct{ State string } `json:"tasks"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&st)
		s := st.Connector.State
		for _, tk := range st.Tasks {
			s += "," + tk.State
		}
		return s
	}

	w := workerproc.Start(t, "standalone", wprops, cprops)
	workerproc.WaitHealthy(t, url, 60*time.Second)
	third := len(events) / 3
	produce(events[:third])
	require.Eventually(t, func() bool { return caughtUp("shop.customers_history") }, 60*time.Second, 100*time.Millisecond)

	pg.Stop(t)
	produce(events[third : 2*third])
	time.Sleep(30 * time.Second)
	require.Equal(t, "RUNNING,RUNNING,RUNNING", status(), "tasks must survive the outage")
	pg.Start(t)
	produce(events[2*third:])
	require.Eventually(t, func() bool { return caughtUp("shop.customers_history") && caughtUp("shop.customers") },
		90*time.Second, 200*time.Millisecond, "tables never caught up after the catalog came back")
	require.Equal(t, "RUNNING,RUNNING,RUNNING", status())
	require.NoError(t, w.Cmd.Process.Signal(syscall.SIGTERM))
	<-w.Exited()
	require.Contains(t, w.Log(), "iceberg commit round failed", "the outage must have been noticed")

	cat, err := catalogx.Open(context.Background(), scfg.CatalogName, scfg.CatalogProps)
	require.NoError(t, err)
	st, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers"))
	require.NoError(t, err)
	ht, err := cat.LoadTable(context.Background(), catalog.ToIdentifier("shop.customers_history"))
	require.NoError(t, err)
	require.Equal(t, wantRows(want), duckRows(t, st.MetadataLocation(), "SELECT id, name, version FROM t"))
	total := next[0] + next[1]
	require.Equal(t, []string{fmt.Sprintf("%d|%d", total, total)},
		duckRows(t, ht.MetadataLocation(), "SELECT count(*), count(DISTINCT (kafka_partition, kafka_offset)) FROM t"))
}

// TestE2ESchemaChangeAndRouting: through the connectd binary on the real broker, JSON records
// with Connect schemas are routed by a field with per-table regexes into two auto-created
// tables; mid-stream the schema gains an optional field and widens an int to a long. The
// tables evolve, earlier rows read the new column as null, each record lands in the right table.
func TestE2ESchemaChangeAndRouting(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e")
	}
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.UniqueName(t, "ice-evolve")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	dir := t.TempDir()
	name := "ice-evolve"
	port := workerproc.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=%s
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=true
offset.flush.interval.ms=200
`, addr, url)), 0o644))
	catDB := filepath.Join(dir, "catalog.db")
	wh := filepath.Join(dir, "warehouse")
	cprops := filepath.Join(dir, "iceberg.properties")
	require.NoError(t, os.WriteFile(cprops, []byte(fmt.Sprintf(`name=%s
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max=1
topics=%s
iceberg.tables=db.orders,db.refunds
iceberg.tables.route-field=kind
iceberg.table.db.orders.route-regex=order(ed)?
iceberg.table.db.refunds.route-regex=refund
iceberg.table.db.orders.partition-by=bucket(id,4)
iceberg.tables.auto-create-enabled=true
iceberg.tables.evolve-schema-enabled=true
iceberg.catalog.type=sql
iceberg.catalog.uri=jdbc:sqlite:%s
iceberg.catalog.warehouse=%s
iceberg.control.commit.interval-ms=300
`, name, topic, catDB, wh)), 0o644))
	field := func(name, typ string, optional bool) map[string]any {
		return map[string]any{"field": name, "type": typ, "optional": optional}
	}
	v1 := map[string]any{"type": "struct", "name": "Order", "fields": []any{field("id", "int64", false), field("kind", "string", false), field("qty", "int32", false)}}
	v2 := map[string]any{"type": "struct", "name": "Order", "fields": []any{field("id", "int64", false), field("kind", "string", false),
		field("qty", "int64", false), field("email", "string", true)}}
	kinds := []string{"order", "ordered", "refund", "other"}
	var msgs []*kgo.Record
	want := map[string]int{}
	for i := 0; i < 400; i++ {
		kind := kinds[i%len(kinds)]
		var env map[string]any
		if i < 200 {
			env = map[string]any{"schema": v1, "payload": map[string]any{"id": i, "kind": kind, "qty": i}}
		} else {
			env = map[string]any{"schema": v2, "payload": map[string]any{"id": i, "kind": kind, "qty": int64(1)<<40 + int64(i), "email": fmt.Sprintf("u%d@x", i)}}
		}
		b, _ := json.Marshal(env)
		msgs = append(msgs, &kgo.Record{Value: b})
		switch kind {
		case "order", "ordered":
			want["db.orders"]++
		case "refund":
			want["db.refunds"]++
		}
	}
	kafkatest.Produce(t, addr, topic, msgs[:200]...)
	w := workerproc.Start(t, "standalone", wprops, cprops)
	workerproc.WaitHealthy(t, url, 60*time.Second)
	props := map[string]string{"name": name, iceberg.KeyTables: "x.y", "iceberg.catalog.type": "sql", "iceberg.catalog.uri": "jdbc:sqlite:" + catDB, "iceberg.catalog.warehouse": wh}
	scfg, err := iceberg.ParseConfig(props)
	require.NoError(t, err)
	cat, err := catalogx.Open(context.Background(), scfg.CatalogName, scfg.CatalogProps)
	require.NoError(t, err)
	offsetOf := func(tbl string) int64 {
		tb, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(tbl))
		if err != nil {
			return -1
		}
		o, _ := icetable.CommittedOffsets(tb, "", icetable.OffsetsSummaryKey("connect-"+name))
		return o[icetable.TP{Topic: topic, Partition: 0}]
	}
	require.Eventually(t, func() bool { return offsetOf("db.orders") >= 199 && offsetOf("db.refunds") >= 199 }, 60*time.Second, 100*time.Millisecond)
	kafkatest.Produce(t, addr, topic, msgs[200:]...)
	require.Eventually(t, func() bool { return offsetOf("db.orders") >= 399 && offsetOf("db.refunds") >= 399 }, 60*time.Second, 100*time.Millisecond)
	require.NoError(t, w.Cmd.Process.Signal(syscall.SIGTERM))
	<-w.Exited()

	for tbl, n := range want {
		tb, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(tbl))
		require.NoError(t, err)
		qty, _ := tb.Schema().FindFieldByName("qty")
		require.Equal(t, "long", qty.Type.String(), tbl)
		email, ok := tb.Schema().FindFieldByName("email")
		require.True(t, ok, tbl)
		require.False(t, email.Required)
		got := duckRows(t, tb.MetadataLocation(), "SELECT count(*), count(email), min(CASE WHEN id < 200 THEN (email IS NULL)::INT END), max(qty) > 1099511627776 FROM t")
		require.Equal(t, []string{fmt.Sprintf("%d|%d|1|true", n, n/2)}, got, tbl)
		kinds := duckRows(t, tb.MetadataLocation(), "SELECT DISTINCT kind FROM t")
		if tbl == "db.orders" {
			require.Equal(t, []string{"order", "ordered"}, kinds)
		} else {
			require.Equal(t, []string{"refund"}, kinds)
		}
	}
	_, err = cat.LoadTable(context.Background(), catalog.ToIdentifier("db.other"))
	require.Error(t, err)
}
