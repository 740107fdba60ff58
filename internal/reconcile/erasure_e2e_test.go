package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

func (p *pipeline) lakeTable(name string) *table.Table {
	cat, err := iceberg.OpenCatalog(context.Background(), "", map[string]string{"type": "sql", "uri": "jdbc:sqlite:" + p.catDB, "warehouse": p.wh})
	require.NoError(p.t, err)
	tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(name))
	require.NoError(p.t, err)
	return tbl
}

func (p *pipeline) duckCount(name, where string) string {
	res := icebergtest.Read(p.t, p.lakeTable(name).MetadataLocation(), "SELECT count(*) AS n FROM t WHERE "+where, nil)
	return fmt.Sprint(res.Maps()[0]["n"])
}

// TestErasureEndToEnd follows docs/RECONCILE.md's erasure procedure: a key deleted at the source (a
// Debezium delete and its tombstone through Kafka) is gone from ClickHouse FINAL and from the Iceberg
// current table (DuckDB), reconcile is clean; the ClickHouse mutation removes its stored rows, and a delete
// of the key's rows in the raw history table removes them from every live data file of the history.
func TestErasureEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	p := newPipeline(t)
	p.start("iceberg", "clickhouse")
	p.produce(rng, 40)
	p.waitGroup(iceConnector)
	p.waitGroup(chConnector)

	model := p.model()
	var keys []string
	for k := range model {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	victim := keys[len(keys)/2]
	row := model[victim]
	si := -1
	for i, s := range p.streams {
		if strings.HasPrefix(victim, s.Prefix+"-") {
			si = i
		}
	}
	require.GreaterOrEqual(t, si, 0)
	s := &p.streams[si]
	var lsn int64
	for _, e := range s.Events {
		lsn = max(lsn, e.LSN)
	}
	local := strings.TrimPrefix(victim, s.Prefix+"-")
	del := []cdcstream.Event{{Key: local, Op: cdcstream.Delete, LSN: lsn + 1, Row: &row, How: "erasure"}, {Key: local, Op: cdcstream.Tombstone}}
	s.Events = append(s.Events, del...)
	var msgs []*sarama.ProducerMessage
	for _, e := range del {
		k, v := cdcstream.Debezium(*s, e)
		m := &sarama.ProducerMessage{Topic: p.topic, Partition: cdcstream.Partition(victim, p.parts), Key: sarama.ByteEncoder(k)}
		if v != nil {
			m.Value = sarama.ByteEncoder(v)
		}
		msgs = append(msgs, m)
	}
	require.NoError(t, p.prod.SendMessages(msgs))
	for _, m := range msgs {
		p.next[m.Partition] = max(p.next[m.Partition], m.Offset+1)
	}
	p.waitGroup(iceConnector)
	p.waitGroup(chConnector)
	p.stop()
	_, stillThere := p.model()[victim]
	require.False(t, stillThere)

	tbl := p.db + ".customers"
	require.Equal(t, "0", chdbtest.MustQuery(t, p.s, "SELECT count() FROM "+tbl+" FINAL WHERE id = "+quoteString(victim)), "ClickHouse FINAL")
	require.Equal(t, "0", p.duckCount("cdc.customers", "id = "+quoteString(victim)), "Iceberg current table (DuckDB)")
	r := p.reconcile()
	require.Equal(t, StatusClean, r.Status)
	live := len(p.model())
	p.crossCheck(r, live, live)

	// ClickHouse still stores the key's rows (the delete row and older versions) until a mutation removes them.
	require.NotEqual(t, "0", chdbtest.MustQuery(t, p.s, "SELECT count() FROM "+tbl+" WHERE id = "+quoteString(victim)))
	chdbtest.MustExec(t, p.s, "ALTER TABLE "+tbl+" DELETE WHERE id = "+quoteString(victim)+" SETTINGS mutations_sync = 2")
	require.Equal(t, "0", chdbtest.MustQuery(t, p.s, "SELECT count() FROM "+tbl+" WHERE id = "+quoteString(victim)), "stored ClickHouse rows")

	// The raw history holds every event of the key until its rows are deleted.
	pk, _ := json.Marshal(map[string]string{"id": victim})
	where := "primary_key = " + quoteString(string(pk))
	before := p.duckCount("cdc.history", "true")
	n := p.duckCount("cdc.history", where)
	require.NotEqual(t, "0", n, "history rows of the key")
	hist := p.lakeTable("cdc.history")
	_, err := hist.Delete(context.Background(), ice.EqualTo(ice.Reference("primary_key"), string(pk)), nil)
	require.NoError(t, err)
	require.Equal(t, "0", p.duckCount("cdc.history", where), "history rows of the key after the delete (DuckDB)")
	var b, k int
	fmt.Sscan(before, &b)
	fmt.Sscan(n, &k)
	require.Equal(t, fmt.Sprint(b-k), p.duckCount("cdc.history", "true"), "the other history rows stay")

	r = p.reconcile()
	require.Equal(t, StatusClean, r.Status)
	p.crossCheck(r, live, live)
}
