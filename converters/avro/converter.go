// Package avro is io.confluent.connect.avro.AvroConverter: the Confluent wire format (magic byte 0,
// 4-byte big-endian schema id, Avro binary) against a Confluent Schema Registry, with Connect ↔ Avro
// schema mapping as Confluent's AvroData. See README.md for the supported keys and the differences.
package avro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connect/avrotype"
)

// ClassName is the JVM class name the converter is registered under.
const ClassName = "io.confluent.connect.avro.AvroConverter"

// Plugins lists the converter, for a runtime's registry.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   ClassName,
		Type:    connect.PluginConverter,
		Version: "7.9.0",
		New:     func() any { return New() },
	}}
}

// Configuration keys (AbstractKafkaSchemaSerDeConfig, AvroDataConfig).
const (
	ConfigURL                = "schema.registry.url"
	ConfigAutoRegister       = "auto.register.schemas"
	ConfigUseLatest          = "use.latest.version"
	ConfigLatestCompatStrict = "latest.compatibility.strict"
	ConfigKeyStrategy        = "key.subject.name.strategy"
	ConfigValueStrategy      = "value.subject.name.strategy"
	ConfigAuthSource         = "basic.auth.credentials.source"
	ConfigUserInfo           = "basic.auth.user.info"
	ConfigBearerSource       = "bearer.auth.credentials.source"
	ConfigBearerToken        = "bearer.auth.token"
	ConfigMaxSchemas         = "max.schemas.per.subject"
	ConfigCacheSize          = "schemas.cache.config"
	ConfigConnectMetaData    = "connect.meta.data"
	ConfigEnhanced           = "enhanced.avro.schema.support"
	ConfigGeneralized        = "generalized.sum.type.support"
	ConfigScrubNames         = "scrub.invalid.names"
	ConfigDiscardTypeDoc     = "discard.type.doc.default"
	ConfigFlattenSingleton   = "flatten.singleton.unions"
	ConfigAllowOptionalKeys  = "allow.optional.map.keys"
)

// Subject name strategies.
const (
	TopicNameStrategy       = "TopicNameStrategy"
	RecordNameStrategy      = "RecordNameStrategy"
	TopicRecordNameStrategy = "TopicRecordNameStrategy"
)

// ConfigDef describes the converter's keys.
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	d.Define(connect.ConfigKey{Name: ConfigURL, Type: connect.ConfigList, Default: connect.NoDefault, Importance: connect.High,
		Doc: "Comma-separated list of URLs for Schema Registry instances that can be used to register or look up schemas."})
	d.Define(connect.ConfigKey{Name: ConfigAutoRegister, Type: connect.ConfigBoolean, Default: true, Importance: connect.Medium,
		Doc: "Specify if the Serializer should attempt to register the Schema with Schema Registry"})
	d.Define(connect.ConfigKey{Name: ConfigUseLatest, Type: connect.ConfigBoolean, Default: false, Importance: connect.Low,
		Doc: "Specify if the Serializer should use the latest subject version for serialization"})
	d.Define(connect.ConfigKey{Name: ConfigLatestCompatStrict, Type: connect.ConfigBoolean, Default: true, Importance: connect.Low,
		Doc: "Accepted for compatibility; the backward-compatibility check is not performed."})
	strat := "io.confluent.kafka.serializers.subject.TopicNameStrategy"
	d.Define(connect.ConfigKey{Name: ConfigKeyStrategy, Type: connect.ConfigString, Default: strat, Importance: connect.Medium,
		Doc: "Determines how to construct the subject name under which the key schema is registered with the schema registry."})
	d.Define(connect.ConfigKey{Name: ConfigValueStrategy, Type: connect.ConfigString, Default: strat, Importance: connect.Medium,
		Doc: "Determines how to construct the subject name under which the value schema is registered with the schema registry."})
	d.Define(connect.ConfigKey{Name: ConfigAuthSource, Type: connect.ConfigString, Default: "URL", Importance: connect.Medium,
		Validator: connect.In("URL", "USER_INFO", "SASL_INHERIT"), Doc: "Specify how to pick the credentials for Basic Auth header."})
	d.Define(connect.ConfigKey{Name: ConfigUserInfo, Type: connect.ConfigPassword, Default: "", Importance: connect.Medium,
		Doc: "Specify the user info for Basic Auth in the form of {username}:{password}"})
	d.Define(connect.ConfigKey{Name: ConfigBearerSource, Type: connect.ConfigString, Default: "STATIC_TOKEN", Importance: connect.Medium,
		Doc: "Specify how to pick the credentials for Bearer Auth header (STATIC_TOKEN only)."})
	d.Define(connect.ConfigKey{Name: ConfigBearerToken, Type: connect.ConfigPassword, Default: "", Importance: connect.Medium,
		Doc: "Specify the Bearer token to be used for authentication"})
	d.Define(connect.ConfigKey{Name: ConfigMaxSchemas, Type: connect.ConfigInt, Default: 1000, Importance: connect.Low,
		Doc: "Maximum number of schemas to create or cache locally."})
	d.Define(connect.ConfigKey{Name: ConfigCacheSize, Type: connect.ConfigInt, Default: 1000, Importance: connect.Low,
		Doc: "Size of the converted schema cache"})
	for _, k := range []struct {
		name string
		def  bool
	}{{ConfigConnectMetaData, true}, {ConfigEnhanced, false}, {ConfigGeneralized, false}, {ConfigScrubNames, false},
		{ConfigDiscardTypeDoc, false}, {ConfigFlattenSingleton, true}, {ConfigAllowOptionalKeys, false}} {
		d.Define(connect.ConfigKey{Name: k.name, Type: connect.ConfigBoolean, Default: k.def, Importance: connect.Low,
			Doc: fmt.Sprintf("AvroData option; only the default (%v) is supported.", k.def)})
	}
	defineTLS(d)
	return d
}

// Converter is the AvroConverter. Safe for concurrent use after Configure.
type Converter struct {
	isKey        bool
	reg          *registryClient
	autoRegister bool
	useLatest    bool
	strategy     string

	mu       sync.RWMutex
	byID     map[int32]*parsedSchema // schema id → parsed schema
	decoders map[decKey]*compiled    // (topic, id) → Connect schema + decoder
	writers  map[*connect.Schema]*wrEntry
	maxCache int
}

type decKey struct {
	topic string
	id    int32
}

type parsedSchema struct {
	text string
	refs []schemaRef
	node *node
}

type wrEntry struct {
	schema  *connect.Schema
	byTopic map[string]*topicWriter
	avro    string
}

type topicWriter struct {
	id     int32
	w      *writer
	prefix [5]byte
}

// New returns an unconfigured converter.
func New() *Converter { return &Converter{} }

// ConfigDef implements connect.Configurable.
func (c *Converter) ConfigDef() *connect.ConfigDef { return ConfigDef() }

// Configure reads the converter's (already key./value.-stripped) configuration.
func (c *Converter) Configure(configs map[string]string, isKey bool) error {
	cfg, err := ConfigDef().Parse(configs)
	if err != nil {
		return err
	}
	for _, k := range []string{ConfigEnhanced, ConfigGeneralized, ConfigScrubNames, ConfigDiscardTypeDoc, ConfigAllowOptionalKeys} {
		if cfg.Bool(k) {
			return &connect.ConfigError{Name: k, Value: true, Message: "not supported by this converter"}
		}
	}
	if !cfg.Bool(ConfigConnectMetaData) || !cfg.Bool(ConfigFlattenSingleton) {
		return &connect.ConfigError{Name: ConfigConnectMetaData, Value: false, Message: "only the defaults of connect.meta.data and flatten.singleton.unions are supported"}
	}
	c.isKey = isKey
	c.autoRegister = cfg.Bool(ConfigAutoRegister)
	c.useLatest = cfg.Bool(ConfigUseLatest)
	stratKey := ConfigValueStrategy
	if isKey {
		stratKey = ConfigKeyStrategy
	}
	if c.strategy, err = parseStrategy(cfg.String(stratKey)); err != nil {
		return &connect.ConfigError{Name: stratKey, Value: cfg.String(stratKey), Message: err.Error()}
	}
	c.reg, err = newRegistryClient(cfg, configs)
	if err != nil {
		return err
	}
	c.byID = map[int32]*parsedSchema{}
	c.decoders = map[decKey]*compiled{}
	c.writers = map[*connect.Schema]*wrEntry{}
	c.maxCache = cfg.Int(ConfigCacheSize)
	if c.maxCache <= 0 {
		c.maxCache = 1000
	}
	return nil
}

func parseStrategy(s string) (string, error) {
	simple := s[strings.LastIndexByte(s, '.')+1:]
	switch simple {
	case TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy:
		return simple, nil
	}
	return "", fmt.Errorf("unknown subject name strategy (TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy)")
}

// subjectName applies the strategy; recordName is the schema's full name (or type name).
func (c *Converter) subjectName(topic, recordName string) string {
	switch c.strategy {
	case RecordNameStrategy:
		return recordName
	case TopicRecordNameStrategy:
		return topic + "-" + recordName
	}
	if c.isKey {
		return topic + "-key"
	}
	return topic + "-value"
}

// ToConnectData decodes a Confluent-framed Avro payload.
func (c *Converter) ToConnectData(topic string, _ connect.Headers, value []byte) (connect.SchemaAndValue, error) {
	if c.reg == nil {
		return connect.SchemaAndValue{}, errors.New("AvroConverter is not configured")
	}
	if value == nil {
		return connect.NullSchemaAndValue, nil
	}
	if len(value) == 0 || value[0] != 0 {
		// An empty (non-null) payload is an error too, as in Confluent's deserializer.
		return connect.SchemaAndValue{}, c.deserErr(topic, errors.New("Unknown magic byte!"))
	}
	if len(value) < 5 {
		return connect.SchemaAndValue{}, c.deserErr(topic, errors.New("payload shorter than the 5-byte Confluent header"))
	}
	id := int32(binary.BigEndian.Uint32(value[1:5]))
	cp, err := c.compiledFor(topic, id)
	if err != nil {
		return connect.SchemaAndValue{}, err
	}
	r := reader{buf: value, pos: 5}
	v, err := cp.dec(&r)
	if err != nil {
		return connect.SchemaAndValue{}, c.deserErr(topic, err)
	}
	return connect.SchemaAndValue{Schema: cp.schema, Value: v}, nil
}

func (c *Converter) deserErr(topic string, err error) error {
	return &connect.DataError{Err: fmt.Errorf("Failed to deserialize data for topic %s to Avro: %w", topic, err)}
}

func (c *Converter) compiledFor(topic string, id int32) (*compiled, error) {
	c.mu.RLock()
	cp := c.decoders[decKey{topic, id}]
	c.mu.RUnlock()
	if cp != nil {
		return cp, nil
	}
	ps, err := c.schemaByID(topic, id)
	if err != nil {
		return nil, err
	}
	subject := c.subjectName(topic, ps.node.typeName())
	version, err := c.reg.lookupVersion(subject, ps.text, ps.refs)
	if err != nil {
		return nil, c.regErr(topic, fmt.Sprintf("Error retrieving Avro %s schema version for id %d", c.kind(), id), err)
	}
	cp, err = toConnect(ps.node, &version)
	if err != nil {
		return nil, c.deserErr(topic, err)
	}
	if ps.node.kind == avrotype.Bytes {
		// Confluent's serializers write a top-level bytes schema as the raw bytes, without the Avro length.
		cp.dec = rawBytesDecoder(cp.schema)
	}
	c.mu.Lock()
	if len(c.decoders) >= c.maxCache {
		clear(c.decoders)
	}
	c.decoders[decKey{topic, id}] = cp
	c.mu.Unlock()
	return cp, nil
}

func (c *Converter) kind() string {
	if c.isKey {
		return "key"
	}
	return "value"
}

func (c *Converter) schemaByID(topic string, id int32) (*parsedSchema, error) {
	c.mu.RLock()
	ps := c.byID[id]
	c.mu.RUnlock()
	if ps != nil {
		return ps, nil
	}
	a, err := c.reg.schemaByID(int(id))
	if err != nil {
		return nil, c.regErr(topic, fmt.Sprintf("Error retrieving Avro %s schema for id %d", c.kind(), id), err)
	}
	if a.SchemaType != "" && a.SchemaType != "AVRO" {
		return nil, c.deserErr(topic, fmt.Errorf("schema %d is of type %s, not AVRO", id, a.SchemaType))
	}
	var deps []string
	if err := c.resolveRefs(a.References, map[schemaRef]bool{}, &deps); err != nil {
		return nil, c.regErr(topic, fmt.Sprintf("Error retrieving the schemas referenced by Avro %s schema %d", c.kind(), id), err)
	}
	n, err := parseSchemaWithRefs(a.Schema, deps)
	if err != nil {
		return nil, c.deserErr(topic, err)
	}
	text := a.Schema
	ps = &parsedSchema{text: text, refs: a.References, node: n}
	c.mu.Lock()
	if len(c.byID) >= c.maxCache {
		clear(c.byID)
	}
	c.byID[id] = ps
	c.mu.Unlock()
	return ps, nil
}

// resolveRefs appends the texts of the referenced schemas, each after its own references (depth first).
func (c *Converter) resolveRefs(refs []schemaRef, seen map[schemaRef]bool, out *[]string) error {
	for _, r := range refs {
		if seen[r] {
			continue
		}
		seen[r] = true
		if len(seen) > 1000 {
			return fmt.Errorf("more than 1000 schema references")
		}
		a, err := c.reg.subjectVersion(r.Subject, r.Version)
		if err != nil {
			return err
		}
		if err := c.resolveRefs(a.References, seen, out); err != nil {
			return err
		}
		*out = append(*out, a.Schema)
	}
	return nil
}

// regErr classifies a registry failure. An answer of the registry is a DataException, as in the JVM; a
// transient answer (40403, 5xx: see registryError.transient) is also retriable, and so are network
// failures: the worker retries those within errors.retry.timeout before the record counts as failed.
func (c *Converter) regErr(topic, msg string, err error) error {
	var re *registryError
	if errors.As(err, &re) {
		de := &connect.DataError{Err: fmt.Errorf("%s: %w", msg, err)}
		if re.transient() {
			return connect.Retriable(de)
		}
		return de
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) {
		return connect.Retriable(fmt.Errorf("%s: %w", msg, err))
	}
	return &connect.DataError{Err: fmt.Errorf("%s: %w", msg, err)}
}

// FromConnectData serializes a Connect value (AvroConverter.fromConnectData).
func (c *Converter) FromConnectData(topic string, _ connect.Headers, schema *connect.Schema, value any) ([]byte, error) {
	if c.reg == nil {
		return nil, errors.New("AvroConverter is not configured")
	}
	if schema == nil && value == nil {
		return nil, nil
	}
	if schema == nil {
		return nil, connect.DataErrorf("Failed to serialize Avro data from topic %s: schemaless values are not supported", topic)
	}
	if err := connect.ValidateValue(schema, value); err != nil {
		return nil, connect.DataErrorf("Failed to serialize Avro data from topic %s: %v", topic, err)
	}
	if value == nil {
		return nil, nil
	}
	tw, err := c.writerFor(topic, schema)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 5, 64)
	copy(buf, tw.prefix[:])
	out, err := tw.w.encode(buf, schema, value)
	if err != nil {
		return nil, connect.DataErrorf("Failed to serialize Avro data from topic %s: %v", topic, err)
	}
	return out, nil
}

func (c *Converter) writerFor(topic string, schema *connect.Schema) (*topicWriter, error) {
	c.mu.RLock()
	we := c.writers[schema]
	var tw *topicWriter
	if we != nil {
		tw = we.byTopic[topic]
	}
	c.mu.RUnlock()
	if tw != nil {
		return tw, nil
	}
	var avroText string
	if we != nil {
		avroText = we.avro
	} else {
		var err error
		if avroText, err = fromConnectSchemaJSON(schema); err != nil {
			return nil, connect.DataErrorf("Failed to serialize Avro data from topic %s: %v", topic, err)
		}
	}
	n, err := parseSchema(avroText)
	if err != nil {
		return nil, connect.DataErrorf("Failed to serialize Avro data from topic %s: %v", topic, err)
	}
	subject := c.subjectName(topic, n.typeName())
	var id int
	writeText := avroText
	switch {
	case c.autoRegister:
		id, err = c.reg.register(subject, avroText)
	case c.useLatest:
		var latest string
		latest, id, err = c.reg.latest(subject)
		writeText = latest
	default:
		id, err = c.reg.lookupID(subject, avroText)
	}
	if err != nil {
		return nil, c.regErr(topic, fmt.Sprintf("Error registering or looking up Avro schema for subject %s", subject), err)
	}
	w, err := newWriter(writeText)
	if err != nil {
		return nil, connect.DataErrorf("Failed to serialize Avro data from topic %s: %v", topic, err)
	}
	tw = &topicWriter{id: int32(id), w: w}
	binary.BigEndian.PutUint32(tw.prefix[1:], uint32(id))
	c.mu.Lock()
	if len(c.writers) >= c.maxCache {
		clear(c.writers)
	}
	we = c.writers[schema]
	if we == nil {
		we = &wrEntry{schema: schema, byTopic: map[string]*topicWriter{}, avro: avroText}
		c.writers[schema] = we
	}
	we.byTopic[topic] = tw
	c.mu.Unlock()
	return tw, nil
}

// AvroSchemaOf returns the Avro schema text the converter derives from a Connect schema.
func AvroSchemaOf(s *connect.Schema) (string, error) { return fromConnectSchemaJSON(s) }

// ToConnectSchema converts Avro schema text to the Connect schema AvroData would derive (version nil).
func ToConnectSchema(avroSchema string) (*connect.Schema, error) {
	n, err := parseSchema(avroSchema)
	if err != nil {
		return nil, err
	}
	cp, err := toConnect(n, nil)
	if err != nil {
		return nil, err
	}
	return cp.schema, nil
}
