package clickhouse_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters/jsonconv"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// End to end: a real Kafka broker → the connectd binary (standalone worker, this connector) → native
// protocol → the chDB test shim in this process. The worker process is SIGKILLed several times while it
// writes: inside an INSERT before it executes, after the server persisted a block but before the
// acknowledgement, before the AFTER state row, and at a random moment.

func produceEvents(t *testing.T, addr, topic string, parts, perPart int) int {
	base := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	total := parts * perPart
	var msgs []*kgo.Record
	for i := 0; i < total; i++ {
		ts := base.Add(time.Duration(i) * 3 * 24 * time.Hour / time.Duration(total))
		v := fmt.Sprintf(`{"id": %d, "ts": %q, "payload": "event-%d"}`, i+1, ts.Format(time.RFC3339Nano), i+1)
		msgs = append(msgs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: []byte(strconv.Itoa(i)), Value: []byte(v)})
	}
	kafkatest.ProducePartitioned(t, addr, topic, msgs...)
	return total
}

func TestWorkerSIGKILLExactlyOnceEndToEnd(t *testing.T) {
	s, srv := engine(t)
	addr := kafkatest.Bootstrap(t)
	for _, tc := range []struct {
		name    string
		engine  string
		exactly bool
		kills   []string
	}{
		{"exactlyOnce", "MergeTree PARTITION BY toDate(ts) ORDER BY id SETTINGS non_replicated_deduplication_window = 1000", true,
			[]string{"before-insert", "after-insert", "before-after-state"}},
		// No deduplication window: the staging table + MOVE PARTITION path.
		{"exactlyOnce-nowindow", "MergeTree PARTITION BY toDate(ts) ORDER BY id", true,
			[]string{"after-insert", "before-move", "random"}},
		{"atLeastOnce", "ReplacingMergeTree PARTITION BY toDate(ts) ORDER BY id", false,
			[]string{"after-insert", "random"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := chdbtest.Database(t)
			chdbtest.MustExec(t, s, "CREATE TABLE "+db+".events (id UInt64, ts DateTime64(3, 'UTC'), payload String) ENGINE = "+tc.engine)
			topic := kafkatest.UniqueName(t, "ch-e2e")
			kafkatest.CreateTopic(t, addr, topic, 3, nil)
			total := produceEvents(t, addr, topic, 3, 1000)

			dir := t.TempDir()
			wprops := filepath.Join(dir, "worker.properties")
			require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:0
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=300
`, addr)), 0o644))
			cprops := filepath.Join(dir, "clickhouse.properties")
			require.NoError(t, os.WriteFile(cprops, []byte(fmt.Sprintf(`name=ch-e2e-%s
connector.class=com.clickhouse.kafka.connect.ClickHouseSinkConnector
tasks.max=1
topics=%s
topic2TableMap=%s=events
hostname=127.0.0.1
port=%d
database=%s
exactlyOnce=%v
batch.max.rows=40
retryCount=1
consumer.override.max.poll.records=100
consumer.override.session.timeout.ms=6000
consumer.override.heartbeat.interval.ms=1000
`, tc.name, topic, topic, srv.Port(), db, tc.exactly)), 0o644))

			count := func() int {
				out, err := s.Query("SELECT count() FROM "+db+".events", "TabSeparated")
				require.NoError(t, err)
				n, _ := strconv.Atoi(strings.TrimSpace(string(out)))
				return n
			}
			defer srv.SetBeforeInsert(nil)
			defer srv.SetAfterInsert(nil)
			isData := func(q chshim.QueryInfo) bool {
				return strings.Contains(q.Body, "`"+db+"`.`events`") || strings.Contains(q.Body, "`"+db+"`.`_connectd_stage_events_")
			}
			isAfter := func(q chshim.QueryInfo) bool { return strings.Contains(q.Body, "`"+db+"`.`connect_state`") }

			defer srv.SetBeforeQuery(nil)
			for round, kind := range tc.kills {
				w := workerproc.Start(t, "standalone", wprops, cprops)
				var (
					hmu      sync.Mutex
					n, after int
					killed   = make(chan struct{})
					once     sync.Once
				)
				target := 3 + round*4
				doKill := func() { once.Do(func() { w.Kill(); close(killed) }) }
				srv.SetBeforeInsert(func(q chshim.QueryInfo) error {
					hmu.Lock()
					defer hmu.Unlock()
					if isData(q) {
						n++
						if kind == "before-insert" && n == target {
							doKill()
							return chshim.ErrDropConnection
						}
					}
					if isAfter(q) && kind == "before-after-state" && n >= target {
						after++
						if after%2 == 0 { // the AFTER row of the block just inserted
							doKill()
							return chshim.ErrDropConnection
						}
					}
					return nil
				})
				srv.SetAfterInsert(func(q chshim.QueryInfo) error {
					hmu.Lock()
					defer hmu.Unlock()
					if isData(q) && kind == "after-insert" && n == target {
						doKill()
						return chshim.ErrDropConnection
					}
					return nil
				})
				srv.SetBeforeQuery(func(q chshim.QueryInfo) error {
					hmu.Lock()
					defer hmu.Unlock()
					if kind == "before-move" && n >= target && strings.Contains(q.Body, "MOVE PARTITION") {
						doKill()
						return chshim.ErrDropConnection
					}
					return nil
				})
				if kind == "random" {
					start := count()
					require.Eventually(t, func() bool { return count() >= start+200 }, 90*time.Second, 10*time.Millisecond)
					doKill()
				}
				select {
				case <-killed:
				case <-time.After(120 * time.Second):
					t.Fatalf("round %d (%s): kill point never reached; %d rows", round, kind, count())
				}
				srv.SetBeforeInsert(nil)
				srv.SetAfterInsert(nil)
				srv.SetBeforeQuery(nil)
				t.Logf("killed (%s) with %d/%d rows in the table", kind, count(), total)
				require.Less(t, count(), total, "killed too late to matter")
			}
			w := workerproc.Start(t, "standalone", wprops, cprops)
			final := "SELECT count(), uniqExact(id), min(id), max(id), uniqExact(toDate(ts)) FROM " + db + ".events"
			if !tc.exactly {
				final += " FINAL"
			}
			want := fmt.Sprintf("%d\t%d\t1\t%d\t3", total, total, total)
			require.Eventually(t, func() bool {
				out, err := s.Query(final, "TabSeparated")
				return err == nil && strings.TrimSpace(string(out)) == want
			}, 120*time.Second, 100*time.Millisecond, "final state; last: %s", query(t, s, final))
			time.Sleep(1500 * time.Millisecond) // nothing more may arrive
			require.Equal(t, want, query(t, s, final))
			t.Logf("raw rows: %s", query(t, s, "SELECT count() FROM "+db+".events"))
			w.Kill()
		})
	}
}

// An unmappable record goes to the runtime's dead-letter queue topic with error context headers; the
// rest of its batch is written.
func TestWorkerDeadLetterQueueEndToEnd(t *testing.T) {
	s, srv := engine(t)
	addr := kafkatest.Bootstrap(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".orders (id UInt64, amount Decimal(9, 2), status Enum8('new' = 1, 'paid' = 2)) ENGINE = MergeTree ORDER BY id")
	topic := kafkatest.UniqueName(t, "ch-dlq")
	dlq := topic + "-dlq"
	kafkatest.CreateTopic(t, addr, topic, 1, nil)
	var msgs []*kgo.Record
	for i, v := range []string{
		`{"id": 1, "amount": 10.5, "status": "new"}`,
		`{"id": 2, "amount": 3.25, "status": "refunded"}`,    // not a value of the Enum
		`{"id": 3, "amount": 99999999.99, "status": "paid"}`, // does not fit Decimal(9, 2)
		`{"id": 4, "amount": 7, "status": "paid"}`,
	} {
		msgs = append(msgs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(v)})
	}
	kafkatest.Produce(t, addr, topic, msgs...)

	dir := t.TempDir()
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:0
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.flush.interval.ms=300
`, addr)), 0o644))
	cprops := filepath.Join(dir, "clickhouse.properties")
	require.NoError(t, os.WriteFile(cprops, []byte(fmt.Sprintf(`name=ch-dlq
connector.class=com.clickhouse.kafka.connect.ClickHouseSinkConnector
topics=%s
topic2TableMap=%s=orders
hostname=127.0.0.1
port=%d
database=%s
errors.tolerance=all
errors.deadletterqueue.topic.name=%s
errors.deadletterqueue.topic.replication.factor=1
errors.deadletterqueue.context.headers.enable=true
`, topic, topic, srv.Port(), db, dlq)), 0o644))
	w := workerproc.Start(t, "standalone", wprops, cprops)
	got := kafkatest.ConsumeAll(t, addr, dlq, 2, 90*time.Second)
	require.Len(t, got, 2)
	for i, want := range []string{`"refunded" is not a value of Enum8`, "does not fit Decimal(9, 2)"} {
		h := map[string]string{}
		for _, x := range got[i].Headers {
			h[string(x.Key)] = string(x.Value)
		}
		require.Contains(t, string(got[i].Value), fmt.Sprintf(`"id": %d`, i+2))
		require.Equal(t, topic, h["__connect.errors.topic"])
		require.Equal(t, strconv.Itoa(i+1), h["__connect.errors.offset"])
		require.Contains(t, h["__connect.errors.exception.message"], want)
		require.Contains(t, h["__connect.errors.exception.message"], db+".orders")
	}
	require.Eventually(t, func() bool {
		out, err := s.Query("SELECT id, amount, status FROM "+db+".orders ORDER BY id", "TabSeparated")
		return err == nil && string(out) == "1\t10.5\tnew\n4\t7\tpaid\n"
	}, 30*time.Second, 100*time.Millisecond)
	w.Kill()
}

// The seed's customer_current fed through the worker by a Debezium stream in the JsonConverter's
// schema'd envelope (as Debezium's JSON output), with producer duplicates, re-published old versions and
// a SIGKILL of the worker half way; SELECT ... FINAL equals the expected current state.
func TestWorkerDebeziumToCustomerCurrentEndToEnd(t *testing.T) {
	s, srv := engine(t)
	addr := kafkatest.Bootstrap(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, fmt.Sprintf(customerCurrentDDL, db))
	topic := kafkatest.UniqueName(t, "dbserver1.public.customers")
	kafkatest.CreateTopic(t, addr, topic, 3, nil)

	events := cdcStream(80, 1500, 21)
	stream := append([]cdcEvent(nil), events...)
	for i := 0; i < 300; i += 7 { // re-published old versions and duplicates
		stream = append(stream, events[i])
	}
	conv := jsonconv.New()
	require.NoError(t, conv.Configure(map[string]string{"schemas.enable": "true"}, false))
	keyConv := jsonconv.New()
	require.NoError(t, keyConv.Configure(map[string]string{"schemas.enable": "true"}, true))
	var msgs []*kgo.Record
	for _, e := range stream {
		v, err := conv.FromConnectData(topic, nil, envelopeSchema, e.Envelope())
		require.NoError(t, err)
		k, err := keyConv.FromConnectData(topic, nil, customerKey, connect.NewStruct(customerKey).MustPut("customer_id", e.ID))
		require.NoError(t, err)
		msgs = append(msgs, &kgo.Record{Topic: topic, Partition: int32(e.ID % 3), Key: k, Value: v})
	}
	kafkatest.ProducePartitioned(t, addr, topic, msgs...)

	dir := t.TempDir()
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:0
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.flush.interval.ms=300
`, addr)), 0o644))
	cprops := filepath.Join(dir, "cdc.properties")
	require.NoError(t, os.WriteFile(cprops, []byte(fmt.Sprintf(`name=ch-cdc
connector.class=com.clickhouse.kafka.connect.ClickHouseSinkConnector
topics=%s
topic2TableMap=%s=customer_current
hostname=127.0.0.1
port=%d
database=%s
debeziumCDCEnabled=true
exactlyOnce=true
batch.max.rows=50
consumer.override.max.poll.records=100
consumer.override.session.timeout.ms=6000
consumer.override.heartbeat.interval.ms=1000
`, topic, topic, srv.Port(), db)), 0o644))

	t0 := time.Now()
	w := workerproc.Start(t, "standalone", wprops, cprops)
	var inserts int
	var mu sync.Mutex
	killed := make(chan struct{})
	var once sync.Once
	srv.SetAfterInsert(func(q chshim.QueryInfo) error {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(q.Body, "customer_current") {
			if inserts++; inserts == 10 {
				once.Do(func() { w.Kill(); close(killed) })
				return chshim.ErrDropConnection
			}
		}
		return nil
	})
	defer srv.SetAfterInsert(nil)
	select {
	case <-killed:
	case <-time.After(120 * time.Second):
		t.Fatal("kill point never reached")
	}
	srv.SetAfterInsert(nil)
	t.Logf("killed after %v (includes building connectd on first use)", time.Since(t0))
	w = workerproc.Start(t, "standalone", wprops, cprops)
	want := expectedCurrent(events)
	final := "SELECT customer_id, customer_name, customer_status, source_version, toUnixTimestamp64Milli(event_time) FROM " +
		db + ".customer_current FINAL ORDER BY customer_id"
	require.Eventually(t, func() bool {
		out, err := s.Query(final, "TabSeparated")
		return err == nil && strings.TrimSpace(string(out)) == want
	}, 120*time.Second, 200*time.Millisecond, "FINAL state; last:\n%s", query(t, s, final))
	t.Logf("converged after %v", time.Since(t0))
	w.Kill()
}

// Through the worker with Debezium's ExtractNewRecordState in its default delete mode (a delete becomes a
// bare tombstone) and add.fields=lsn: create (110), update (115), delete (120) + Debezium tombstone of key
// 2; after a restart, stale redeliveries of the create and the update. Key 2 stays deleted under FINAL.
func TestWorkerUnwrappedTombstoneStaysDeletedEndToEnd(t *testing.T) {
	s, srv := engine(t)
	addr := kafkatest.Bootstrap(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".customers (customer_id UInt64, customer_name String, customer_status String, "+
		"event_time DateTime64(3), _version UInt64, is_deleted UInt8) ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY customer_id")
	topic := kafkatest.UniqueName(t, "dbserver1.public.customers")
	kafkatest.CreateTopic(t, addr, topic, 1, nil)

	conv := jsonconv.New()
	require.NoError(t, conv.Configure(map[string]string{"schemas.enable": "true"}, false))
	keyConv := jsonconv.New()
	require.NoError(t, keyConv.Configure(map[string]string{"schemas.enable": "true"}, true))
	send := func(events []cdcEvent, tombstoneAfterDelete bool) {
		var msgs []*kgo.Record
		for _, e := range events {
			k, err := keyConv.FromConnectData(topic, nil, customerKey, connect.NewStruct(customerKey).MustPut("customer_id", e.ID))
			require.NoError(t, err)
			v, err := conv.FromConnectData(topic, nil, envelopeSchema, e.Envelope())
			require.NoError(t, err)
			msgs = append(msgs, &kgo.Record{Topic: topic, Key: k, Value: v})
			if e.Op == "d" && tombstoneAfterDelete {
				msgs = append(msgs, &kgo.Record{Topic: topic, Key: k})
			}
		}
		kafkatest.ProducePartitioned(t, addr, topic, msgs...)
	}
	ts := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	one := cdcEvent{ID: 1, Op: "c", Name: "one", Status: "active", LSN: 100, TS: ts}
	created := cdcEvent{ID: 2, Op: "c", Name: "created", Status: "active", LSN: 110, TS: ts}
	updated := cdcEvent{ID: 2, Op: "u", Name: "updated", Status: "vip", LSN: 115, TS: ts, Before: &created}
	deleted := cdcEvent{ID: 2, Op: "d", LSN: 120, TS: ts, Before: &updated}
	send([]cdcEvent{one, created, updated, deleted}, true)

	dir := t.TempDir()
	wprops := filepath.Join(dir, "worker.properties")
	require.NoError(t, os.WriteFile(wprops, []byte(fmt.Sprintf(`bootstrap.servers=%s
listeners=http://127.0.0.1:0
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.flush.interval.ms=300
`, addr)), 0o644))
	cprops := filepath.Join(dir, "cdc.properties")
	require.NoError(t, os.WriteFile(cprops, []byte(fmt.Sprintf(`name=ch-unwrap
connector.class=com.clickhouse.kafka.connect.ClickHouseSinkConnector
topics=%s
topic2TableMap=%s=customers
hostname=127.0.0.1
port=%d
database=%s
debeziumCDCEnabled=true
transforms=unwrap
transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState
transforms.unwrap.add.fields=lsn
`, topic, topic, srv.Port(), db)), 0o644))

	final := "SELECT customer_id, customer_name FROM " + db + ".customers FINAL ORDER BY customer_id"
	raw := "SELECT count() FROM " + db + ".customers WHERE customer_id = 2"
	w := workerproc.Start(t, "standalone", wprops, cprops)
	require.Eventually(t, func() bool {
		out, err := s.Query(raw+" AND is_deleted = 1", "TabSeparated")
		return err == nil && strings.TrimSpace(string(out)) == "1"
	}, 120*time.Second, 200*time.Millisecond, "the delete of key 2; raw:\n%s", query(t, s, "SELECT * FROM "+db+".customers"))
	require.Equal(t, "1\tone", query(t, s, final))
	time.Sleep(time.Second) // let the worker commit its offsets
	w.Kill()

	before := query(t, s, raw)
	send([]cdcEvent{created, updated}, false) // stale redeliveries
	w = workerproc.Start(t, "standalone", wprops, cprops)
	require.Eventually(t, func() bool {
		out, err := s.Query(raw, "TabSeparated")
		return err == nil && strings.TrimSpace(string(out)) != before
	}, 120*time.Second, 200*time.Millisecond, "the stale redeliveries reach the table")
	require.Equal(t, "1\tone", query(t, s, final), "raw:\n%s", query(t, s, "SELECT * FROM "+db+".customers ORDER BY customer_id, _version"))
	w.Kill()
}
