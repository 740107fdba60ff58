package parity

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// smtCase is one FileStreamSink connector with an SMT chain, as the upstream documentation configures it.
type smtCase struct {
	name   string
	input  string            // which input topic (smtInputs)
	config map[string]string // transforms, predicates and converter overrides
	// tabular, when set, replaces the type of transforms.<alias> by Tabular's class name in the REST variant.
	tabular map[string]string
	want    []string // the file's lines, sorted
}

const (
	kt = "org.apache.kafka.connect.transforms."
	kp = kt + "predicates."
	ic = "org.apache.iceberg.connect.transforms."
	tc = "io.tabular.iceberg.connect.transforms."
)

// Record timestamps of the input records: 2024-01-15, -16, -17 (UTC).
var smtRecordTime = []time.Time{
	time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC),
	time.Date(2024, 1, 16, 10, 0, 0, 0, time.UTC),
	time.Date(2024, 1, 17, 10, 0, 0, 0, time.UTC),
}

// ordersOut is the orders topic's records as FileStreamSink writes them, unchanged.
var ordersOut = []string{
	"Struct{id=1,name=Alice,email=alice@example.com,price=9.5,ts=Mon Jan 15 10:00:00 UTC 2024,address=Struct{city=Lyon,zip=10001}}",
	"Struct{id=2,name=Bob,email=bob@example.com,price=19.0,ts=Tue Jan 16 10:00:00 UTC 2024,address=Struct{city=Oslo,zip=10002}}",
	"Struct{id=3,name=Carol,email=carol@example.com,price=28.5,ts=Wed Jan 17 10:00:00 UTC 2024,address=Struct{city=Porto,zip=10003}}",
}

// smtCases: want lists the file's lines sorted; %ORDERS% stands for the orders topic's name.
var smtCases = []smtCase{
	// Kafka's SMTs (the configurations of the Kafka documentation, on the fields of the input records).
	{name: "cast", input: "orders", want: []string{`Struct{id=1,name=Alice,email=alice@example.com,price=9,ts=Mon Jan 15 10:00:00 UTC 2024,address=Struct{city=Lyon,zip=10001}}`, `Struct{id=2,name=Bob,email=bob@example.com,price=19,ts=Tue Jan 16 10:00:00 UTC 2024,address=Struct{city=Oslo,zip=10002}}`, `Struct{id=3,name=Carol,email=carol@example.com,price=28,ts=Wed Jan 17 10:00:00 UTC 2024,address=Struct{city=Porto,zip=10003}}`}, config: map[string]string{
		"transforms": "Cast", "transforms.Cast.type": kt + "Cast$Value", "transforms.Cast.spec": "id:string,price:int32"}},
	{name: "drop-headers", input: "orders", want: ordersOut, config: map[string]string{
		// dropping trace-id first keeps the filter (records with trace-id) from dropping anything
		"transforms": "dropHeaders,dropTraced", "transforms.dropHeaders.type": kt + "DropHeaders", "transforms.dropHeaders.headers": "trace-id,unused",
		"transforms.dropTraced.type": kt + "Filter", "transforms.dropTraced.predicate": "hasTrace",
		"predicates": "hasTrace", "predicates.hasTrace.type": kp + "HasHeaderKey", "predicates.hasTrace.name": "trace-id"}},
	{name: "extract-field", input: "orders", want: []string{`alice@example.com`, `bob@example.com`, `carol@example.com`}, config: map[string]string{
		"transforms": "ExtractField", "transforms.ExtractField.type": kt + "ExtractField$Value", "transforms.ExtractField.field": "email"}},
	{name: "extract-field-v2", input: "orders", want: []string{`Lyon`, `Oslo`, `Porto`}, config: map[string]string{
		"transforms": "ExtractField", "transforms.ExtractField.type": kt + "ExtractField$Value",
		"transforms.ExtractField.field": "address.city", "transforms.ExtractField.field.syntax.version": "V2"}},
	{name: "filter-topic", input: "orders+tomb", want: []string{`first`, `null`, `third`}, config: map[string]string{
		"value.converter": "org.apache.kafka.connect.storage.StringConverter",
		"transforms":      "Filter", "transforms.Filter.type": kt + "Filter", "transforms.Filter.predicate": "IsOrders",
		"predicates": "IsOrders", "predicates.IsOrders.type": kp + "TopicNameMatches", "predicates.IsOrders.pattern": ".*-orders"}},
	{name: "filter-tombstone", input: "tomb", want: []string{`first`, `third`}, config: map[string]string{
		"value.converter": "org.apache.kafka.connect.storage.StringConverter",
		"transforms":      "dropTombstones", "transforms.dropTombstones.type": kt + "Filter", "transforms.dropTombstones.predicate": "isTombstone",
		"predicates": "isTombstone", "predicates.isTombstone.type": kp + "RecordIsTombstone"}},
	{name: "filter-header-negate", input: "orders", want: []string{`Struct{id=1,name=Alice,email=alice@example.com,price=9.5,ts=Mon Jan 15 10:00:00 UTC 2024,address=Struct{city=Lyon,zip=10001}}`, `Struct{id=3,name=Carol,email=carol@example.com,price=28.5,ts=Wed Jan 17 10:00:00 UTC 2024,address=Struct{city=Porto,zip=10003}}`}, config: map[string]string{
		"transforms": "keepTraced", "transforms.keepTraced.type": kt + "Filter", "transforms.keepTraced.predicate": "hasTrace",
		"transforms.keepTraced.negate": "true",
		"predicates":                   "hasTrace", "predicates.hasTrace.type": kp + "HasHeaderKey", "predicates.hasTrace.name": "trace-id"}},
	{name: "flatten", input: "orders", want: []string{`Struct{id=1,name=Alice,email=alice@example.com,price=9.5,ts=Mon Jan 15 10:00:00 UTC 2024,address_city=Lyon,address_zip=10001}`, `Struct{id=2,name=Bob,email=bob@example.com,price=19.0,ts=Tue Jan 16 10:00:00 UTC 2024,address_city=Oslo,address_zip=10002}`, `Struct{id=3,name=Carol,email=carol@example.com,price=28.5,ts=Wed Jan 17 10:00:00 UTC 2024,address_city=Porto,address_zip=10003}`}, config: map[string]string{
		"transforms": "flatten", "transforms.flatten.type": kt + "Flatten$Value", "transforms.flatten.delimiter": "_"}},
	{name: "header-from", input: "orders", want: []string{`Struct{id=1,name=Alice,price=9.5,ts=Mon Jan 15 10:00:00 UTC 2024}`, `Struct{id=2,name=Bob,price=19.0,ts=Tue Jan 16 10:00:00 UTC 2024}`, `Struct{id=3,name=Carol,price=28.5,ts=Wed Jan 17 10:00:00 UTC 2024}`}, config: map[string]string{
		"transforms": "moveFieldsToHeaders", "transforms.moveFieldsToHeaders.type": kt + "HeaderFrom$Value",
		"transforms.moveFieldsToHeaders.fields": "email,address", "transforms.moveFieldsToHeaders.headers": "email,address",
		"transforms.moveFieldsToHeaders.operation": "move"}},
	{name: "hoist-field", input: "orders", want: []string{`Struct{line=Alice}`, `Struct{line=Bob}`, `Struct{line=Carol}`}, config: map[string]string{
		"transforms": "ExtractField,HoistField", "transforms.ExtractField.type": kt + "ExtractField$Value", "transforms.ExtractField.field": "name",
		"transforms.HoistField.type": kt + "HoistField$Value", "transforms.HoistField.field": "line"}},
	{name: "insert-field", input: "orders", want: []string{`Struct{id=1,name=Alice,email=alice@example.com,price=9.5,ts=Mon Jan 15 10:00:00 UTC 2024,address=Struct{city=Lyon,zip=10001},offset=0,MessageSource=Kafka Connect framework}`, `Struct{id=2,name=Bob,email=bob@example.com,price=19.0,ts=Tue Jan 16 10:00:00 UTC 2024,address=Struct{city=Oslo,zip=10002},offset=1,MessageSource=Kafka Connect framework}`, `Struct{id=3,name=Carol,email=carol@example.com,price=28.5,ts=Wed Jan 17 10:00:00 UTC 2024,address=Struct{city=Porto,zip=10003},offset=2,MessageSource=Kafka Connect framework}`}, config: map[string]string{
		"transforms": "InsertField", "transforms.InsertField.type": kt + "InsertField$Value",
		"transforms.InsertField.static.field": "MessageSource", "transforms.InsertField.static.value": "Kafka Connect framework",
		"transforms.InsertField.offset.field": "offset"}},
	{name: "insert-header", input: "orders", want: ordersOut, config: map[string]string{
		// records without app.id are dropped: every record gets it first
		"transforms": "insertAppIdHeader,dropNoAppId", "transforms.insertAppIdHeader.type": kt + "InsertHeader",
		"transforms.insertAppIdHeader.header": "app.id", "transforms.insertAppIdHeader.value.literal": "best-app-ever",
		"transforms.dropNoAppId.type": kt + "Filter", "transforms.dropNoAppId.predicate": "hasAppId", "transforms.dropNoAppId.negate": "true",
		"predicates": "hasAppId", "predicates.hasAppId.type": kp + "HasHeaderKey", "predicates.hasAppId.name": "app.id"}},
	{name: "mask-field", input: "orders", want: []string{`Struct{id=1,name=Alice,email=****,price=9.5,ts=Mon Jan 15 10:00:00 UTC 2024,address=Struct{city=Lyon,zip=10001}}`, `Struct{id=2,name=Bob,email=****,price=19.0,ts=Tue Jan 16 10:00:00 UTC 2024,address=Struct{city=Oslo,zip=10002}}`, `Struct{id=3,name=Carol,email=****,price=28.5,ts=Wed Jan 17 10:00:00 UTC 2024,address=Struct{city=Porto,zip=10003}}`}, config: map[string]string{
		"transforms": "MaskField", "transforms.MaskField.type": kt + "MaskField$Value", "transforms.MaskField.fields": "email",
		"transforms.MaskField.replacement": "****"}},
	{name: "regex-router", input: "orders", want: []string{`1`, `2`, `3`}, config: map[string]string{
		"transforms": "dropPrefix,topic", "transforms.dropPrefix.type": kt + "RegexRouter",
		"transforms.dropPrefix.regex": "smt-(.*)", "transforms.dropPrefix.replacement": "$1",
		"transforms.topic.type": kt + "ExtractField$Value", "transforms.topic.field": "id"}},
	{name: "replace-field", input: "orders", want: []string{`Struct{id=1,customer=Alice,total=9.5,ts=Mon Jan 15 10:00:00 UTC 2024}`, `Struct{id=2,customer=Bob,total=19.0,ts=Tue Jan 16 10:00:00 UTC 2024}`, `Struct{id=3,customer=Carol,total=28.5,ts=Wed Jan 17 10:00:00 UTC 2024}`}, config: map[string]string{
		"transforms": "ReplaceField", "transforms.ReplaceField.type": kt + "ReplaceField$Value",
		"transforms.ReplaceField.exclude": "email,address", "transforms.ReplaceField.renames": "name:customer,price:total"}},
	{name: "set-schema-metadata", input: "orders", want: []string{`1`, `2`, `3`}, config: map[string]string{
		"transforms": "SetSchemaMetadata,ExtractField", "transforms.SetSchemaMetadata.type": kt + "SetSchemaMetadata$Value",
		"transforms.SetSchemaMetadata.schema.name": "shop.OrderV2", "transforms.SetSchemaMetadata.schema.version": "2",
		"transforms.ExtractField.type": kt + "ExtractField$Value", "transforms.ExtractField.field": "id"}},
	{name: "timestamp-converter-string", input: "orders", want: []string{`2024-01-15`, `2024-01-16`, `2024-01-17`}, config: map[string]string{
		"transforms": "TimestampConverter,ExtractField", "transforms.TimestampConverter.type": kt + "TimestampConverter$Value",
		"transforms.TimestampConverter.field": "ts", "transforms.TimestampConverter.format": "yyyy-MM-dd",
		"transforms.TimestampConverter.target.type": "string",
		"transforms.ExtractField.type":              kt + "ExtractField$Value", "transforms.ExtractField.field": "ts"}},
	{name: "timestamp-converter-unix", input: "orders", want: []string{`1705312800000`, `1705399200000`, `1705485600000`}, config: map[string]string{
		"transforms": "ts,ExtractField", "transforms.ts.type": kt + "TimestampConverter$Value",
		"transforms.ts.field": "ts", "transforms.ts.target.type": "unix",
		"transforms.ExtractField.type": kt + "ExtractField$Value", "transforms.ExtractField.field": "ts"}},
	{name: "timestamp-router", input: "orders", want: []string{`%ORDERS%-20240115`, `%ORDERS%-20240116`, `%ORDERS%-20240117`}, config: map[string]string{
		"transforms": "TimestampRouter,InsertTopic,ExtractTopic", "transforms.TimestampRouter.type": kt + "TimestampRouter",
		"transforms.TimestampRouter.topic.format": "${topic}-${timestamp}", "transforms.TimestampRouter.timestamp.format": "yyyyMMdd",
		"transforms.InsertTopic.type": kt + "InsertField$Value", "transforms.InsertTopic.topic.field": "topic",
		"transforms.ExtractTopic.type": kt + "ExtractField$Value", "transforms.ExtractTopic.field": "topic"}},
	{name: "value-to-key", input: "orders", want: []string{`Alice`, `Bob`, `Carol`}, config: map[string]string{
		"transforms": "ValueToKey,ExtractField", "transforms.ValueToKey.type": kt + "ValueToKey", "transforms.ValueToKey.fields": "id,name",
		"transforms.ExtractField.type": kt + "ExtractField$Value", "transforms.ExtractField.field": "name"}},
	// Debezium's ExtractNewRecordState (Debezium documentation: new record state extraction).
	{name: "debezium-unwrap", input: "cdc", want: []string{`Struct{id=1001,first_name=Sally,email=sally.t@example.com,__deleted=false,__op=u,__table=customers}`, `Struct{id=1001,first_name=Sally,email=sally.t@example.com,__deleted=true,__op=d,__table=customers}`, `Struct{id=1001,first_name=Sally,email=sally@example.com,__deleted=false,__op=c,__table=customers}`}, config: map[string]string{
		"transforms": "unwrap", "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.drop.tombstones": "false", "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
		"transforms.unwrap.add.fields": "op,table"}},
	// The Iceberg sink's SMTs (Apache Iceberg Kafka Connect documentation); Tabular's names in the REST variant.
	{name: "iceberg-debezium", input: "cdc", want: []string{`Struct{id=1001,first_name=Sally,email=sally.t@example.com,_cdc=Struct{op=D,ts=Wed Jan 17 10:00:00 UTC 2024,offset=2,source=inventory.customers,target=inventory.customers,key=1001}}`, `Struct{id=1001,first_name=Sally,email=sally.t@example.com,_cdc=Struct{op=U,ts=Tue Jan 16 10:00:00 UTC 2024,offset=1,source=inventory.customers,target=inventory.customers,key=1001}}`, `Struct{id=1001,first_name=Sally,email=sally@example.com,_cdc=Struct{op=I,ts=Mon Jan 15 10:00:00 UTC 2024,offset=0,source=inventory.customers,target=inventory.customers,key=1001}}`}, config: map[string]string{
		"transforms": "debezium", "transforms.debezium.type": ic + "DebeziumTransform", "transforms.debezium.cdc.target.pattern": "{db}.{table}"},
		tabular: map[string]string{"debezium": tc + "DebeziumTransform"}},
	{name: "iceberg-kafka-metadata", input: "orders", want: []string{`Struct{topic=%ORDERS%,partition=0,offset=0,timestamp=1705312800000}`, `Struct{topic=%ORDERS%,partition=0,offset=1,timestamp=1705399200000}`, `Struct{topic=%ORDERS%,partition=0,offset=2,timestamp=1705485600000}`}, config: map[string]string{
		"transforms": "kafka,ExtractField", "transforms.kafka.type": ic + "KafkaMetadataTransform",
		"transforms.kafka.field_name": "_kafka_metadata", "transforms.kafka.nested": "true",
		"transforms.ExtractField.type": kt + "ExtractField$Value", "transforms.ExtractField.field": "_kafka_metadata"},
		tabular: map[string]string{"kafka": tc + "KafkaMetadataTransform"}},
	{name: "iceberg-copy-value", input: "orders", want: []string{`Struct{id=1,name=Alice,email=alice@example.com,price=9.5,ts=Mon Jan 15 10:00:00 UTC 2024,address=Struct{city=Lyon,zip=10001},id_copy=1}`, `Struct{id=2,name=Bob,email=bob@example.com,price=19.0,ts=Tue Jan 16 10:00:00 UTC 2024,address=Struct{city=Oslo,zip=10002},id_copy=2}`, `Struct{id=3,name=Carol,email=carol@example.com,price=28.5,ts=Wed Jan 17 10:00:00 UTC 2024,address=Struct{city=Porto,zip=10003},id_copy=3}`}, config: map[string]string{
		"transforms": "copy", "transforms.copy.type": ic + "CopyValue",
		"transforms.copy.source.field": "id", "transforms.copy.target.field": "id_copy"}},
	{name: "iceberg-dms", input: "dms", want: []string{
		"{_cdc={op=D, source=public.customers, ts=2024-01-17T10:00:00.000000Z}, id=1, name=Alicia}",
		"{_cdc={op=I, source=public.customers, ts=2024-01-15T10:00:00.000000Z}, id=1, name=Alice}",
		"{_cdc={op=U, source=public.customers, ts=2024-01-16T10:00:00.000000Z}, id=1, name=Alicia}"}, config: map[string]string{
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
		"transforms": "dms", "transforms.dms.type": ic + "DmsTransform"},
		tabular: map[string]string{"dms": tc + "DmsTransform"}},
	{name: "iceberg-json-to-map", input: "jsonstr", want: []string{`Struct{payload={active=true, id=2, name=Bob, score=1.5}}`, `Struct{payload={address={"city":"Lyon"}, id=1, name=Alice, tags=["a","b"]}}`}, config: map[string]string{
		"value.converter": "org.apache.kafka.connect.storage.StringConverter",
		"transforms":      "json", "transforms.json.type": ic + "JsonToMapTransform", "transforms.json.json.root": "true"},
		tabular: map[string]string{"json": tc + "JsonToMapTransform"}},
	{name: "iceberg-mongo", input: "mongo", want: []string{`Struct{after=Struct{_id=1001,first_name=Sal,tags=[c]},op=u,ts_ms=1705399200000}`, `Struct{after=Struct{_id=1001,first_name=Sally,tags=[a, b]},op=c,ts_ms=1705312800000}`}, config: map[string]string{
		"key.converter": "org.apache.kafka.connect.json.JsonConverter",
		"transforms":    "mongo", "transforms.mongo.type": ic + "MongoDebeziumTransform", "transforms.mongo.array_handling_mode": "array"},
		tabular: map[string]string{"mongo": tc + "MongoDebeziumTransform"}},
}

// smtInputs are the input topics: name suffix → records.
func smtInputs() map[string][]*kgo.Record {
	order := func(i int, name, email, city string, headers ...string) *kgo.Record {
		v := map[string]any{
			"schema": map[string]any{"type": "struct", "name": "shop.Order", "optional": false, "fields": []any{
				map[string]any{"field": "id", "type": "int64", "optional": false},
				map[string]any{"field": "name", "type": "string", "optional": false},
				map[string]any{"field": "email", "type": "string", "optional": false},
				map[string]any{"field": "price", "type": "double", "optional": false},
				map[string]any{"field": "ts", "type": "int64", "optional": false, "name": "org.apache.kafka.connect.data.Timestamp", "version": 1},
				map[string]any{"field": "address", "type": "struct", "optional": false, "fields": []any{
					map[string]any{"field": "city", "type": "string", "optional": false},
					map[string]any{"field": "zip", "type": "string", "optional": false}}},
			}},
			"payload": map[string]any{"id": i, "name": name, "email": email, "price": 9.5 * float64(i),
				"ts": smtRecordTime[i-1].UnixMilli(), "address": map[string]any{"city": city, "zip": fmt.Sprintf("1000%d", i)}},
		}
		m := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: jsonBytes(v), Timestamp: smtRecordTime[i-1]}
		for j := 0; j+1 < len(headers); j += 2 {
			m.Headers = append(m.Headers, kgo.RecordHeader{Key: headers[j], Value: []byte(headers[j+1])})
		}
		return m
	}
	customer := map[string]any{"type": "struct", "name": "dbserver1.inventory.customers.Value", "optional": true, "fields": []any{
		map[string]any{"field": "id", "type": "int32", "optional": false},
		map[string]any{"field": "first_name", "type": "string", "optional": false},
		map[string]any{"field": "email", "type": "string", "optional": false}}}
	cdcSchema := map[string]any{"type": "struct", "name": "dbserver1.inventory.customers.Envelope", "optional": false, "fields": []any{
		withField(customer, "before"), withField(customer, "after"),
		map[string]any{"field": "source", "type": "struct", "name": "io.debezium.connector.mysql.Source", "optional": false, "fields": []any{
			map[string]any{"field": "version", "type": "string", "optional": false},
			map[string]any{"field": "connector", "type": "string", "optional": false},
			map[string]any{"field": "name", "type": "string", "optional": false},
			map[string]any{"field": "ts_ms", "type": "int64", "optional": false},
			map[string]any{"field": "db", "type": "string", "optional": false},
			map[string]any{"field": "table", "type": "string", "optional": true}}},
		map[string]any{"field": "op", "type": "string", "optional": false},
		map[string]any{"field": "ts_ms", "type": "int64", "optional": true}}}
	source := map[string]any{"version": "2.7.0.Final", "connector": "mysql", "name": "dbserver1", "ts_ms": smtRecordTime[0].UnixMilli(), "db": "inventory", "table": "customers"}
	cdc := func(i int, op string, before, after map[string]any) *kgo.Record {
		p := map[string]any{"before": before, "after": after, "source": source, "op": op, "ts_ms": smtRecordTime[i].UnixMilli()}
		return &kgo.Record{Key: []byte("1001"), Value: jsonBytes(map[string]any{"schema": cdcSchema, "payload": p}), Timestamp: smtRecordTime[i]}
	}
	sally := map[string]any{"id": 1001, "first_name": "Sally", "email": "sally@example.com"}
	sally2 := map[string]any{"id": 1001, "first_name": "Sally", "email": "sally.t@example.com"}
	dms := func(i int, op string, data map[string]any) *kgo.Record {
		v := map[string]any{"data": data, "metadata": map[string]any{"timestamp": smtRecordTime[i].Format("2006-01-02T15:04:05.000000Z"),
			"record-type": "data", "operation": op, "partition-key-type": "schema-table", "schema-name": "public", "table-name": "customers", "transaction-id": 4242}}
		return &kgo.Record{Value: jsonBytes(v), Timestamp: smtRecordTime[i]}
	}
	mongoKey := map[string]any{"schema": map[string]any{"type": "struct", "name": "dbserver1.inventory.customers.Key", "optional": false,
		"fields": []any{map[string]any{"field": "id", "type": "string", "optional": false}}}, "payload": map[string]any{"id": "1001"}}
	jsonField := func(name string) map[string]any {
		return map[string]any{"field": name, "type": "string", "optional": true, "name": "io.debezium.data.Json", "version": 1}
	}
	mongoSchema := map[string]any{"type": "struct", "name": "dbserver1.inventory.customers.Envelope", "optional": false, "fields": []any{
		jsonField("before"), jsonField("after"),
		map[string]any{"field": "updateDescription", "type": "struct", "optional": true, "name": "io.debezium.connector.mongodb.changestream.updatedescription",
			"fields": []any{map[string]any{"field": "removedFields", "type": "array", "optional": true, "items": map[string]any{"type": "string", "optional": false}},
				jsonField("updatedFields")}},
		map[string]any{"field": "op", "type": "string", "optional": true},
		map[string]any{"field": "ts_ms", "type": "int64", "optional": true}}}
	mongo := func(i int, op string, before, after any) *kgo.Record {
		p := map[string]any{"before": before, "after": after, "updateDescription": nil, "op": op, "ts_ms": smtRecordTime[i].UnixMilli()}
		return &kgo.Record{Key: jsonBytes(mongoKey), Value: jsonBytes(map[string]any{"schema": mongoSchema, "payload": p}), Timestamp: smtRecordTime[i]}
	}
	return map[string][]*kgo.Record{
		"orders": {
			order(1, "Alice", "alice@example.com", "Lyon", "trace-id", "t-1"),
			order(2, "Bob", "bob@example.com", "Oslo"),
			order(3, "Carol", "carol@example.com", "Porto", "trace-id", "t-3"),
		},
		"tomb": {
			{Key: []byte("a"), Value: []byte("first"), Timestamp: smtRecordTime[0]},
			{Key: []byte("a"), Timestamp: smtRecordTime[1]},
			{Key: []byte("b"), Value: []byte("third"), Timestamp: smtRecordTime[2]},
		},
		"cdc": {cdc(0, "c", nil, sally), cdc(1, "u", sally, sally2), cdc(2, "d", sally2, nil)},
		"dms": {
			dms(0, "insert", map[string]any{"id": 1, "name": "Alice"}),
			dms(1, "update", map[string]any{"id": 1, "name": "Alicia"}),
			dms(2, "delete", map[string]any{"id": 1, "name": "Alicia"}),
		},
		"jsonstr": {
			{Value: []byte(`{"id": 1, "name": "Alice", "tags": ["a", "b"], "address": {"city": "Lyon"}}`), Timestamp: smtRecordTime[0]},
			{Value: []byte(`{"id": 2, "name": "Bob", "score": 1.5, "active": true}`), Timestamp: smtRecordTime[1]},
		},
		"mongo": {
			mongo(0, "c", nil, `{"_id": {"$numberLong": "1001"}, "first_name": "Sally", "tags": ["a", "b"]}`),
			mongo(1, "u", nil, `{"_id": {"$numberLong": "1001"}, "first_name": "Sal", "tags": ["c"]}`),
		},
	}
}

func withField(schema map[string]any, name string) map[string]any {
	out := map[string]any{"field": name}
	for k, v := range schema {
		out[k] = v
	}
	return out
}

// jsonBytes is v in JSON.
func jsonBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// connectorConfig is the full config of a case's connector writing to file.
func (c smtCase) connectorConfig(name, file string, topics map[string]string, tabular bool) map[string]string {
	cfg := map[string]string{
		"name":            name,
		"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
		"tasks.max":       "1",
		"file":            file,
	}
	var ts []string
	for _, in := range strings.Split(c.input, "+") {
		ts = append(ts, topics[in])
	}
	cfg["topics"] = strings.Join(ts, ",")
	for k, v := range c.config {
		cfg[k] = v
	}
	if tabular {
		for alias, class := range c.tabular {
			cfg["transforms."+alias+".type"] = class
		}
	}
	return cfg
}

// TestSMTConnectorsRun runs a FileStreamSink connector per SMT configuration — Kafka's 16 SMTs and 3
// predicates, Debezium's ExtractNewRecordState and the Iceberg sink's 6 SMTs — on one standalone worker
// against the real broker: once from connector properties files given to `connectd standalone` at start,
// once through the REST API (validate with 0 errors, then create; the Iceberg SMTs under Tabular's class
// names). Every file must show the transformed records.
func TestSMTConnectorsRun(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	prefix := kafkatest.UniqueName(t, "smt")
	topics := map[string]string{}
	for in, msgs := range smtInputs() {
		topic := prefix + "-" + in
		topics[in] = topic
		kafkatest.CreateTopic(t, addr, topic, 1, nil)
		for _, m := range msgs {
			m.Topic = topic
		}
		kafkatest.Produce(t, addr, topic, msgs...)
	}
	dir := t.TempDir()
	port := workerproc.FreePort(t)
	args := []string{"standalone", workerproc.WriteWorkerProps(t, dir, addr, port, "value.converter=org.apache.kafka.connect.json.JsonConverter\n")}
	outputs := map[string]smtCase{}
	for _, c := range smtCases {
		name := c.name + "-props"
		file := filepath.Join(dir, name+".txt")
		pf := filepath.Join(dir, name+".properties")
		workerproc.WriteProperties(t, pf, c.connectorConfig(name, file, topics, false))
		args = append(args, pf)
		outputs[file] = c
	}
	workerproc.Binary(t)
	start := time.Now()
	workerproc.Start(t, args...)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	workerproc.WaitHealthy(t, url, 60*time.Second)

	for _, c := range smtCases {
		name := c.name + "-rest"
		file := filepath.Join(dir, name+".txt")
		cfg := c.connectorConfig(name, file, topics, true)
		code, body := workerproc.DoJSON(t, "PUT", url+"/connector-plugins/FileStreamSinkConnector/config/validate", cfg)
		require.Equal(t, 200, code, "%s: %s", name, body)
		var infos struct {
			ErrorCount int `json:"error_count"`
			Configs    []struct {
				Value struct {
					Name   string   `json:"name"`
					Errors []string `json:"errors"`
				} `json:"value"`
			} `json:"configs"`
		}
		require.NoError(t, json.Unmarshal(body, &infos))
		for _, ci := range infos.Configs {
			assert.Empty(t, ci.Value.Errors, "%s: %s", name, ci.Value.Name)
		}
		require.Equal(t, 0, infos.ErrorCount, "%s", name)
		code, body = workerproc.DoJSON(t, "POST", url+"/connectors", map[string]any{"name": name, "config": cfg})
		require.Equal(t, 201, code, "%s: %s", name, body)
		outputs[file] = c
	}

	lines := func(file string) []string {
		l := workerproc.ReadLines(t, file)
		sort.Strings(l)
		return l
	}
	want := func(c smtCase) []string {
		out := make([]string, len(c.want))
		for i, l := range c.want {
			out[i] = strings.ReplaceAll(l, "%ORDERS%", topics["orders"])
		}
		return out
	}
	done := func() bool {
		for file, c := range outputs {
			if len(workerproc.ReadLines(t, file)) < len(c.want) {
				return false
			}
		}
		return true
	}
	if !assert.Eventually(t, done, 90*time.Second, 250*time.Millisecond) {
		for file, c := range outputs {
			t.Logf("%s (%s): %q", filepath.Base(file), c.name, lines(file))
		}
		_, st := workerproc.DoJSON(t, "GET", url+"/connectors?expand=status", nil)
		t.Logf("status: %s", st)
		t.FailNow()
	}
	t.Logf("%d connectors: every file complete %s after the worker's start", len(outputs), time.Since(start).Round(time.Millisecond))
	for file, c := range outputs {
		assert.Equal(t, want(c), lines(file), "%s", filepath.Base(file))
	}
	code, body := workerproc.DoJSON(t, "GET", url+"/connectors?expand=status", nil)
	require.Equal(t, 200, code)
	var statuses map[string]struct {
		Status struct {
			Connector struct{ State string } `json:"connector"`
			Tasks     []struct {
				State string `json:"state"`
				Trace string `json:"trace"`
			} `json:"tasks"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal(body, &statuses))
	require.Len(t, statuses, 2*len(smtCases))
	for name, s := range statuses {
		assert.Equal(t, "RUNNING", s.Status.Connector.State, name)
		for _, task := range s.Status.Tasks {
			assert.Equal(t, "RUNNING", task.State, "%s: %s", name, task.Trace)
		}
	}
}
