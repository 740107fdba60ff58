package connect

// Converter translates between Kafka's bytes and Connect data, as the JVM's Converter.
type Converter interface {
	// Configure is called once; isKey says whether it converts keys (the `key.converter` role).
	Configure(configs map[string]string, isKey bool) error
	ToConnectData(topic string, headers Headers, value []byte) (SchemaAndValue, error)
	FromConnectData(topic string, headers Headers, schema *Schema, value any) ([]byte, error)
}

// HeaderConverter translates header values, as the JVM's HeaderConverter.
type HeaderConverter interface {
	Configure(configs map[string]string) error
	ToConnectHeader(topic, headerKey string, value []byte) (SchemaAndValue, error)
	FromConnectHeader(topic, headerKey string, schema *Schema, value any) ([]byte, error)
}
