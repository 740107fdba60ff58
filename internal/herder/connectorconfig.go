package herder

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Keys of the connector configuration that name or version a plugin (KIP-891).
const (
	connectorVersionKey       = "connector.plugin.version"
	keyConverterKey           = "key.converter"
	valueConverterKey         = "value.converter"
	headerConverterKey        = "header.converter"
	pluginVersionSuffix       = "plugin.version"
	defaultHeaderConverter    = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
	connectorConfigGroup      = "Common"
	transformsConfigGroup     = "Transforms"
	predicatesConfigGroup     = "Predicates"
	errorHandlingConfigGroup  = "Error Handling"
	converterVersionKeySuffix = "." + pluginVersionSuffix
)

// converterDefaults are the default class and version of one converter key: the worker's converter, and its
// version (ConnectorConfig.converterDefaults).
type converterDefaults struct {
	class, version any // nil when unknown
}

// connectorDefOptions are what the JVM's SinkConnectorConfig.enrichedConfigDef takes from the plugins and the
// worker config: the connector's version, the converters' defaults, and the plugin recommenders.
type connectorDefOptions struct {
	connectorVersion   any
	key, value, header converterDefaults
	registry           *connect.Registry // nil: no recommended values
}

// ConnectorConfigDef is the JVM's SinkConnectorConfig.configDef(): the keys every sink connector has, without the
// defaults and recommenders a worker adds.
func ConnectorConfigDef() *connect.ConfigDef { return sinkConnectorConfigDef(connectorDefOptions{}) }

// sinkConnectorConfigDef is ConnectorConfig.configDef followed by SinkConnectorConfig's keys, key for key as the
// JVM defines them (names, order, documentation, groups, validators, recommenders).
func sinkConnectorConfigDef(o connectorDefOptions) *connect.ConfigDef {
	const common, errs = connectorConfigGroup, errorHandlingConfigGroup
	// SinkConnectorConfig's keys.
	return connectorConfigDef(o).
		Define(connect.ConfigKey{Name: "topics", Type: connect.ConfigList, Default: "", Validator: nonDuplicateList{}, Importance: connect.High, Group: common, OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Topics",
			Doc: "List of topics to consume, separated by commas"}).
		Define(connect.ConfigKey{Name: "topics.regex", Type: connect.ConfigString, Default: "", Validator: connect.ValidRegex(), Importance: connect.High, Group: common, OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Topics regex",
			Doc: "Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified."}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.name", Type: connect.ConfigString, Default: "", Importance: connect.Medium, Group: errs, OrderInGroup: 6, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Name",
			Doc: "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ."}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.replication.factor", Type: connect.ConfigShort, Default: 3, Importance: connect.Medium, Group: errs, OrderInGroup: 7, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Replication Factor",
			Doc: "Replication factor used to create the dead letter queue topic when it doesn't already exist."}).
		Define(connect.ConfigKey{Name: "errors.deadletterqueue.context.headers.enable", Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Group: errs, OrderInGroup: 8, Width: connect.WidthMedium, DisplayName: "Enable Error Context Headers",
			Doc: "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>"})
}

// connectorConfigDef is ConnectorConfig.configDef, the keys of every connector.
func connectorConfigDef(o connectorDefOptions) *connect.ConfigDef {
	const common, errs = connectorConfigGroup, errorHandlingConfigGroup
	converterDoc := func(what string) string {
		return "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the " + what + " in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro."
	}
	order := 0
	next := func() int { order++; return order }
	def := connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "name", Type: connect.ConfigString, Default: connect.NoDefault, Validator: nonEmptyStringWithoutControlChars{}, Importance: connect.High, Group: common, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Connector name",
			Doc: "Globally unique name to use for this connector."}).
		Define(connect.ConfigKey{Name: "connector.class", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.High, Group: common, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Connector class",
			Doc: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter"}).
		Define(connect.ConfigKey{Name: connectorVersionKey, Type: connect.ConfigString, Default: o.connectorVersion, Importance: connect.Medium, Group: common, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Connector version",
			Doc: "Version of the connector.", Recommender: o.connectorVersionRecommender()}).
		Define(connect.ConfigKey{Name: "tasks.max", Type: connect.ConfigInt, Default: 1, Validator: connect.AtLeast(1), Importance: connect.High, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Tasks max",
			Doc: "Maximum number of tasks to use for this connector."}).
		Define(connect.ConfigKey{Name: "tasks.max.enforce", Type: connect.ConfigBoolean, Default: true, Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Enforce tasks max",
			Doc: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release."}).
		Define(connect.ConfigKey{Name: keyConverterKey, Type: connect.ConfigClass, Default: o.key.class, Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Key converter class",
			Doc: converterDoc("keys"), Recommender: o.classRecommender(connect.PluginConverter)}).
		Define(connect.ConfigKey{Name: keyConverterKey + converterVersionKeySuffix, Type: connect.ConfigString, Default: o.key.version, Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Key converter version",
			Doc: "Version of the key converter.", Recommender: o.versionRecommender(keyConverterKey, connect.PluginConverter)}).
		Define(connect.ConfigKey{Name: valueConverterKey, Type: connect.ConfigClass, Default: o.value.class, Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Value converter class",
			Doc: converterDoc("values"), Recommender: o.classRecommender(connect.PluginConverter)}).
		Define(connect.ConfigKey{Name: valueConverterKey + converterVersionKeySuffix, Type: connect.ConfigString, Default: o.value.version, Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Value converter version",
			Doc: "Version of the value converter.", Recommender: o.versionRecommender(valueConverterKey, connect.PluginConverter)}).
		Define(connect.ConfigKey{Name: headerConverterKey, Type: connect.ConfigClass, Default: o.header.class, Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Header converter class",
			Doc:         "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.",
			Recommender: o.classRecommender(connect.PluginHeaderConverter)}).
		Define(connect.ConfigKey{Name: headerConverterKey + converterVersionKeySuffix, Type: connect.ConfigString, Default: o.header.version, Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Header converter version",
			Doc: "Version of the header converter.", Recommender: o.versionRecommender(headerConverterKey, connect.PluginHeaderConverter)}).
		Define(connect.ConfigKey{Name: "transforms", Type: connect.ConfigList, Default: "", Validator: uniqueAliasValidator("transformation"), Importance: connect.Low, Group: transformsConfigGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Transforms",
			Doc: "Aliases for the transformations to be applied to records."}).
		Define(connect.ConfigKey{Name: "predicates", Type: connect.ConfigList, Default: "", Validator: uniqueAliasValidator("predicate"), Importance: connect.Low, Group: predicatesConfigGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Predicates",
			Doc: "Aliases for the predicates used by transformations."}).
		Define(connect.ConfigKey{Name: "config.action.reload", Type: connect.ConfigString, Default: "restart", Validator: connect.In("none", "restart"), Importance: connect.Low, Group: common, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Reload Action",
			Doc: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future."}).
		Define(connect.ConfigKey{Name: "errors.retry.timeout", Type: connect.ConfigLong, Default: int64(0), Importance: connect.Medium, Group: errs, OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Retry Timeout for Errors",
			Doc: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries."}).
		Define(connect.ConfigKey{Name: "errors.retry.delay.max.ms", Type: connect.ConfigLong, Default: int64(60000), Importance: connect.Medium, Group: errs, OrderInGroup: 2, Width: connect.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors",
			Doc: "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues."}).
		Define(connect.ConfigKey{Name: "errors.tolerance", Type: connect.ConfigString, Default: "none", Validator: connect.In("none", "all"), Importance: connect.Medium, Group: errs, OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Error Tolerance",
			Doc: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records."}).
		Define(connect.ConfigKey{Name: "errors.log.enable", Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Group: errs, OrderInGroup: 4, Width: connect.WidthShort, DisplayName: "Log Errors",
			Doc: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported."}).
		Define(connect.ConfigKey{Name: "errors.log.include.messages", Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium, Group: errs, OrderInGroup: 5, Width: connect.WidthShort, DisplayName: "Log Error Details",
			Doc: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files."})
	return def
}

// classRecommender lists the installed plugins of a kind (PluginsRecommenders' converter and header converter
// recommenders); converters that also serve headers count as header converters, as the JVM scans them.
func (o connectorDefOptions) classRecommender(kind connect.PluginType) func(map[string]string) []any {
	if o.registry == nil {
		return nil
	}
	reg := o.registry
	return func(map[string]string) []any {
		out := []any{}
		for _, p := range reg.Plugins() {
			switch {
			case p.Type == kind:
			case kind == connect.PluginHeaderConverter && p.Type == connect.PluginConverter && servesHeaders(reg, p):
			default:
				continue
			}
			out = append(out, p.Class)
		}
		return out
	}
}

func servesHeaders(reg *connect.Registry, p *connect.Plugin) bool {
	_, err := reg.NewHeaderConverter(p.Class)
	return err == nil
}

// connectorVersionRecommender is ConnectorPluginVersionRecommender: the versions of the named connector.
func (o connectorDefOptions) connectorVersionRecommender() func(map[string]string) []any {
	if o.registry == nil {
		return nil
	}
	reg := o.registry
	return func(props map[string]string) []any {
		if p, ok := reg.LookupType(props["connector.class"], connect.PluginSink, connect.PluginSource); ok {
			return []any{pluginVersion(p)}
		}
		return []any{}
	}
}

// versionRecommender is the converter version recommenders: the versions of the class the converter key names
// (after its default), none when it names none.
func (o connectorDefOptions) versionRecommender(classKey string, kind connect.PluginType) func(map[string]string) []any {
	if o.registry == nil {
		return nil
	}
	reg := o.registry
	def := o.defaults(classKey)
	return func(props map[string]string) []any {
		cls, set := props[classKey]
		if !set {
			s, _ := def.class.(string)
			cls = s
		}
		types := []connect.PluginType{kind}
		if kind == connect.PluginHeaderConverter {
			types = append(types, connect.PluginConverter)
		}
		if p, ok := reg.LookupType(cls, types...); ok {
			return []any{pluginVersion(p)}
		}
		return []any{}
	}
}

func (o connectorDefOptions) defaults(classKey string) converterDefaults {
	switch classKey {
	case keyConverterKey:
		return o.key
	case valueConverterKey:
		return o.value
	}
	return o.header
}

// pluginVersion is the version a plugin reports.
func pluginVersion(p *connect.Plugin) string {
	if p.Version == "" {
		return connect.DefaultPluginVersion
	}
	return p.Version
}

// nonEmptyStringWithoutControlChars is the JVM's validator of `name`.
type nonEmptyStringWithoutControlChars struct{}

func (nonEmptyStringWithoutControlChars) Validate(name string, v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if s == "" {
		return &connect.ConfigError{Name: name, Value: s, Message: "String may not be empty"}
	}
	var found []string
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) { // Character.isISOControl
			found = append(found, fmt.Sprint(r))
		}
	}
	if len(found) > 0 {
		return &connect.ConfigError{Name: name, Value: s, Message: "String may not contain control sequences but had the following ASCII chars: " + strings.Join(found, ", ")}
	}
	return nil
}

func (nonEmptyStringWithoutControlChars) String() string {
	return "non-empty string without ISO control characters"
}

// nonDuplicateList is ValidList.anyNonDuplicateValues(true, false), the validator of `topics`.
type nonDuplicateList struct{}

func (nonDuplicateList) Validate(name string, v any) error {
	if v == nil {
		return &connect.ConfigError{Message: "Configuration '" + name + "' values must not be null."}
	}
	list, _ := v.([]string)
	seen := map[string]bool{}
	for _, s := range list {
		if seen[s] {
			return &connect.ConfigError{Message: "Configuration '" + name + "' values must not be duplicated."}
		}
		seen[s] = true
	}
	for _, s := range list {
		if s == "" {
			return &connect.ConfigError{Message: "Configuration '" + name + "' values must not be empty."}
		}
	}
	return nil
}

func (nonDuplicateList) String() string { return "" }
