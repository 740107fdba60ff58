package dlq

import "github.com/connectd/connectd/connect"

// HeaderConverterClass keeps header values as raw bytes (OPTIONAL BYTES), the header role of the JVM's
// ByteArrayConverter. It exists so the dead-letter sink can be configured with
// header.converter=io.connectd.connect.dlq.BytesHeaderConverter while converters/bytesconv' ByteArrayConverter
// does not serve as a header converter in this runtime.
const HeaderConverterClass = "io.connectd.connect.dlq.BytesHeaderConverter"

// BytesHeaderConverter passes header bytes through unchanged.
type BytesHeaderConverter struct{}

func (BytesHeaderConverter) Configure(map[string]string) error { return nil }

func (BytesHeaderConverter) ToConnectHeader(_, _ string, value []byte) (connect.SchemaAndValue, error) {
	if value == nil {
		return connect.SchemaAndValue{Schema: connect.OptionalBytesSchema}, nil
	}
	return connect.SchemaAndValue{Schema: connect.OptionalBytesSchema, Value: value}, nil
}

func (BytesHeaderConverter) FromConnectHeader(_, key string, _ *connect.Schema, value any) ([]byte, error) {
	return rawBytes(value, "header "+key)
}
