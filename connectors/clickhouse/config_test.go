package clickhouse

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

func TestOfficialSinkConfigWorksWithPortMapping(t *testing.T) {
	s, _ := engine(t)
	db := chdbtest.Database(t)
	raw, err := os.ReadFile("../../testdata/clickhouse/official-sink-config.json")
	require.NoError(t, err)
	text := strings.NewReplacer("<HOSTNAME>", "my-clickhouse.example.internal", "<PASSWORD>", "s3cret",
		"<TOPIC_NAME>", "orders", "<DATABASE>", db).Replace(string(raw))
	var fixture struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &fixture))
	cfg := fixture.Config

	// The runtime finds the connector by the official class name.
	conn, plugin, err := connect.NewRegistry(Plugins()).NewSinkConnector(cfg["connector.class"])
	require.NoError(t, err)
	require.Equal(t, Class, plugin.Class)
	for _, v := range conn.ConfigDef().Validate(cfg) {
		require.Empty(t, v.Errors, v.Name)
	}

	// Asked to refuse HTTP interface ports, the docs' HTTPS port is refused with a message that says what to do,
	// at validate and at start.
	refusing := map[string]string{"port.refuseHttpPorts": "true"}
	for k, v := range cfg {
		refusing[k] = v
	}
	refused := conn.(connect.ConfigValidator).Validate(refusing)
	require.Len(t, refused, 1)
	require.Equal(t, "port", refused[0].Name)
	require.Contains(t, refused[0].Errors[0], "this sink speaks the native protocol")
	require.ErrorContains(t, conn.Start(refusing), "set port.mapHttpPorts=true to map 8123 to 9000 and 8443 to 9440")

	// As given, the port is mapped and the rest of the docs' configuration works unchanged.
	require.Empty(t, conn.(connect.ConfigValidator).Validate(cfg))
	parsed, err := ParseConfig(cfg)
	require.NoError(t, err)
	require.Equal(t, 9440, parsed.Port, "HTTPS port of the docs is mapped to the native secure port")
	require.True(t, parsed.SSL)

	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".orders (order_id UInt64, customer String, amount Decimal(12, 2), tags Array(String)) ENGINE = MergeTree ORDER BY order_id")
	require.NoError(t, conn.Start(cfg))
	tcs, err := conn.TaskConfigs(1)
	require.NoError(t, err)
	task := conn.NewTask().(*Task)
	task.dialOptions = toShim
	task.Initialize(&taskCtx{props: tcs[0]})
	require.NoError(t, task.Start(tcs[0]))
	defer task.Stop()

	// JsonConverter with schemas.enable=false gives maps with float64 numbers.
	var recs []*connect.SinkRecord
	for i, js := range []string{
		`{"order_id": 1, "customer": "ann", "amount": 12.5, "tags": ["a"]}`,
		`{"order_id": 2, "customer": "bob", "amount": 7, "tags": [], "unknown_field": true}`,
	} {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(js), &v))
		recs = append(recs, &connect.SinkRecord{Topic: "orders", Partition: 0, Offset: int64(i), Key: "k", Value: v})
	}
	require.NoError(t, task.Put(context.Background(), recs))
	require.Equal(t, "1\tann\t12.5\t['a']\n2\tbob\t7\t[]", query(t, s, "SELECT * FROM "+db+".orders ORDER BY order_id"))

	// It went over TLS, with the user's settings and async_insert=0.
	var insert *struct{ settings map[string]string }
	for _, q := range shimTLS.Queries() {
		if q.Insert && strings.Contains(q.Body, "`orders`") {
			insert = &struct{ settings map[string]string }{q.Settings}
		}
	}
	require.NotNil(t, insert, "insert arrived on the TLS listener")
	require.Equal(t, "2", insert.settings["max_insert_threads"])
	require.Equal(t, "0", insert.settings["insert_quorum"])
	require.Equal(t, "0", insert.settings["async_insert"])
	require.Equal(t, "orders-0-0-1", insert.settings["insert_deduplication_token"])
}
