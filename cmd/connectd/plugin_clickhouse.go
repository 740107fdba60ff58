package main

// The ClickHouse native-protocol sink (com.clickhouse.kafka.connect.ClickHouseSinkConnector).
import _ "github.com/connectd/connectd/connectors/clickhouse"
