package iceberg_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	iceberg "github.com/connectd/connectd/connectors/iceberg"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/connectors/iceberg/scd"
)

// debeziumJSON is a schemaless Debezium change event of customer id at lsn.
func debeziumJSON(topic string, offset int64, op string, id, lsn int64, name string) *connect.SinkRecord {
	ts := int64(1_700_000_000_000) + lsn*1000
	env := map[string]any{"op": op, "ts_ms": ts, "before": nil, "after": nil,
		"source": map[string]any{"connector": "postgresql", "name": "shop", "schema": "public", "table": "customers", "lsn": lsn, "ts_ms": ts}}
	if op == "d" {
		env["before"] = map[string]any{"id": id, "name": name}
	} else {
		env["after"] = map[string]any{"id": id, "name": name}
	}
	return &connect.SinkRecord{Topic: topic, Partition: 0, Offset: offset, Key: map[string]any{"id": id}, Value: env,
		Timestamp: ts, OriginalTopic: topic, OriginalOffset: offset}
}

// TestSCDInConnector: a connector writing the raw CDC history materializes its SCD table itself
// (iceberg.tables.scd.interval-ms): after the commits, the SCD table holds every version with its
// interval, a late version committed afterwards splits its key's interval, and a delete closes
// the key's last one; the metrics count the runs.
func TestSCDInConnector(t *testing.T) {
	const hist, target = "shop.customers_history", "shop.dim_customers"
	props, _ := iceberg.SinkPropsT(t, map[string]string{
		iceberg.KeyTables:                      hist,
		"iceberg.table." + hist + ".raw-cdc":   "true",
		iceberg.KeyCommitIntervalMs:            "50",
		scd.KeyTables:                          hist,
		scd.KeyInterval:                        "50",
		scd.KeyAttributes:                      "name",
		"iceberg.table." + hist + ".scd-table": target,
	})
	task := iceberg.StartTaskT(t, props)
	cat := openCatalog(t, props)
	topic := "cdc.shop.customers"
	off := int64(0)
	put := func(evs ...[4]any) { // op, id, lsn, name
		var recs []*connect.SinkRecord
		for _, e := range evs {
			recs = append(recs, debeziumJSON(topic, off, e[0].(string), e[1].(int64), e[2].(int64), e[3].(string)))
			off++
		}
		require.NoError(t, task.Put(context.Background(), recs))
		require.True(t, iceberg.CommitNowT(task))
	}
	rows := func() []string {
		tbl, err := cat.LoadTable(context.Background(), catalog.ToIdentifier(target))
		if err != nil {
			return nil
		}
		var out []string
		for r, err := range icetable.LiveRows(context.Background(), tbl, 0, nil) {
			require.NoError(t, err)
			to := "-"
			if v, ok := r["valid_to"].(time.Time); ok {
				to = fmt.Sprint(v.Unix() - 1_700_000_000)
			}
			out = append(out, fmt.Sprintf("%v %v %d-%s %v %v", r["business_key"], r["source_version"],
				r["valid_from"].(time.Time).Unix()-1_700_000_000, to, r["is_current"], r["name"]))
		}
		sort.Strings(out)
		return out
	}
	waitFor := func(want []string) {
		require.Eventually(t, func() bool {
			// rounds start runs: keep committing (nothing new) until the table is as expected
			iceberg.CommitNowT(task)
			return fmt.Sprint(rows()) == fmt.Sprint(want)
		}, time.Minute, 50*time.Millisecond, "SCD table %v", rows())
	}
	put([4]any{"c", int64(1), int64(10), "ann"}, [4]any{"c", int64(2), int64(20), "bob"}, [4]any{"u", int64(1), int64(40), "anna"})
	waitFor([]string{
		`{"id":1} 10 10-40 false ann`,
		`{"id":1} 40 40-- true anna`,
		`{"id":2} 20 20-- true bob`,
	})
	put([4]any{"u", int64(1), int64(30), "annie"}, [4]any{"d", int64(2), int64(50), "bob"})
	waitFor([]string{
		`{"id":1} 10 10-30 false ann`,
		`{"id":1} 30 30-40 false annie`,
		`{"id":1} 40 40-- true anna`,
		`{"id":2} 20 20-50 false bob`,
	})
	runs, failures, last, lastErr := iceberg.SCDRunsT(task, target)
	require.Positive(t, runs)
	require.Zero(t, failures, lastErr)
	require.Equal(t, hist, last.History)
	gauge := func(name string, labels ...string) float64 { return metricValue(t, props["name"], name, labels...) }
	require.Positive(t, gauge("connectd_iceberg_scd_runs_total", "table", target, "result", "ok"))
	require.Equal(t, 0.0, gauge("connectd_iceberg_scd_runs_total", "table", target, "result", "failed"))
	require.InDelta(t, float64(time.Now().Unix()), gauge("connectd_iceberg_scd_last_success_timestamp_seconds", "table", target), 120)
}

// TestSCDConfig: the iceberg.tables.scd.* keys are checked with the connector's configuration.
func TestSCDConfig(t *testing.T) {
	for k, v := range map[string]string{
		scd.KeyInterval:      "soon",
		scd.KeySkipUnchanged: "maybe",
		scd.KeyTables:        "shop.h",
		scd.KeyTargetSuffix:  "",
	} {
		extra := map[string]string{k: v, iceberg.KeyTables: "shop.h"}
		if k != scd.KeyTables {
			extra[scd.KeyTables] = "shop.h"
		}
		props, _ := iceberg.SinkPropsT(t, extra)
		_, err := iceberg.ParseConfig(props)
		if k == scd.KeyTables {
			require.NoError(t, err)
			continue
		}
		require.Error(t, err, k)
	}
}
