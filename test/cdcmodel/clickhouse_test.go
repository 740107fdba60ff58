package cdcmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

// The ClickHouse engine is chDB in this process, behind the native-protocol test shim the worker connects to.
var (
	shimOnce sync.Once
	shim     *chshim.Server
	shimErr  error
)

func clickhouse(t *testing.T) (*chdb.Session, *chshim.Server) {
	s := chdbtest.Session(t)
	shimOnce.Do(func() {
		shim = chshim.New(s)
		shimErr = shim.Start()
	})
	require.NoError(t, shimErr)
	return s, shim
}

func closeShim() {
	if shim != nil {
		_ = shim.Close()
	}
}

// clickhouseSink configures the ClickHouse sink for Debezium CDC with exactly-once into a
// ReplacingMergeTree(_version, is_deleted) table keyed by id, read back with FINAL.
func clickhouseSink(t *testing.T) sinkUnderTest {
	s, srv := clickhouse(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+`.customers (id String, name String, qty Int64, updated_at Int64,
		email Nullable(String), _version UInt64, is_deleted UInt8)
		ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id SETTINGS non_replicated_deduplication_window = 1000`)
	sink := sinkUnderTest{name: "clickhouse"}
	sink.props = func(topic string, rng *rand.Rand) string {
		return fmt.Sprintf(`name=cdc-model-clickhouse
connector.class=com.clickhouse.kafka.connect.ClickHouseSinkConnector
tasks.max=2
topics=%s
topic2TableMap=%s=customers
hostname=127.0.0.1
port=%d
database=%s
debeziumCDCEnabled=true
exactlyOnce=true
batch.max.rows=%d
retryCount=3
consumer.override.max.poll.records=%d
consumer.override.session.timeout.ms=6000
consumer.override.heartbeat.interval.ms=1000
`, topic, topic, srv.Port(), db, 20+rng.Intn(300), 50+rng.Intn(450))
	}
	sink.views = []view{{name: "clickhouse customers (version source.lsn) via FINAL", version: cdcstream.VersionLSN,
		read: func(t *testing.T) map[string][]cdcstream.Row {
			out, err := s.Query("SELECT id, name, toString(qty) AS qty, toString(updated_at) AS updated_at, email FROM "+db+".customers FINAL", "JSONEachRow")
			require.NoError(t, err)
			rows := map[string][]cdcstream.Row{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var m map[string]any
				require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
				r := rowFromJSON(t, m)
				rows[r.ID] = append(rows[r.ID], r)
			}
			require.NoError(t, sc.Err())
			return rows
		}}}
	return sink
}

// TestCDCModelClickHouse: random CDC streams through the worker into the ClickHouse sink, read with FINAL.
func TestCDCModelClickHouse(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	runModel(t, clickhouseSink(t), false)
}

// TestCDCModelClickHouseSkippedTails: the same with the stream's tombstones filtered and partitions whose
// waves end with records the sink never gets (filtered, tolerated, dead-lettered): after each wave the
// group and the connector's REST offsets reach the end offsets and the group's lag metric is 0, across
// SIGKILLs, with the table equal to the model.
func TestCDCModelClickHouseSkippedTails(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	runModel(t, clickhouseSink(t), true)
}
