package main

// Every built-in plugin registers itself with connect.DefaultRegistry in init().
import (
	_ "github.com/connectd/connectd/connect/transforms"
	_ "github.com/connectd/connectd/connectors/dlq"
	_ "github.com/connectd/connectd/connectors/file"
	_ "github.com/connectd/connectd/converters/avro"
	_ "github.com/connectd/connectd/converters/bytesconv"
	_ "github.com/connectd/connectd/converters/header"
	_ "github.com/connectd/connectd/converters/jsonconv"
	_ "github.com/connectd/connectd/converters/str"
)
