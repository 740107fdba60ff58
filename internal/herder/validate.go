package herder

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/worker"
)

// ConnectorConfigDef is the JVM's ConnectorConfig + SinkConnectorConfig: keys every sink connector has.
func ConnectorConfigDef() *connect.ConfigDef {
	const common, tr, pr = "Common", "Transforms", "Predicates"
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "name", Type: connect.ConfigString, Default: connect.NoDefault, Validator: connect.NonEmptyString(), Importance: connect.High, Group: common, OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Connector name", Doc: "Globally unique name to use for this connector."}).
		Define(connect.ConfigKey{Name: "connector.class", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.High, Group: common, OrderInGroup: 2, Width: connect.WidthLong, DisplayName: "Connector class", Doc: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter"}).
		Define(connect.ConfigKey{Name: "tasks.max", Type: connect.ConfigInt, Default: 1, Validator: connect.AtLeast(1), Importance: connect.High, Group: common, OrderInGroup: 3, Width: connect.WidthShort, DisplayName: "Tasks max", Doc: "Maximum number of tasks to use for this connector."}).
		Define(connect.ConfigKey{Name: "tasks.max.enforce", Type: connect.ConfigBoolean, Default: true, Importance: connect.Low, Group: common, OrderInGroup: 4, Width: connect.WidthShort, DisplayName: "Enforce tasks max", Doc: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector."}).
		Define(connect.ConfigKey{Name: "key.converter", Type: connect.ConfigClass, Default: nil, Importance: connect.Low, Group: common, OrderInGroup: 5, Width: connect.WidthShort, DisplayName: "Key converter class", Doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka."}).
		Define(connect.ConfigKey{Name: "value.converter", Type: connect.ConfigClass, Default: nil, Importance: connect.Low, Group: common, OrderInGroup: 6, Width: connect.WidthShort, DisplayName: "Value converter class", Doc: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka."}).
		Define(connect.ConfigKey{Name: "header.converter", Type: connect.ConfigClass, Default: nil, Importance: connect.Low, Group: common, OrderInGroup: 7, Width: connect.WidthShort, DisplayName: "Header converter class", Doc: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka."}).
		Define(connect.ConfigKey{Name: "config.action.reload", Type: connect.ConfigString, Default: "restart", Validator: connect.In("none", "restart"), Importance: connect.Low, Group: common, OrderInGroup: 8, Width: connect.WidthMedium, DisplayName: "Reload Action", Doc: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties."}).
		Define(connect.ConfigKey{Name: "topics", Type: connect.ConfigList, Default: "", Importance: connect.High, Group: common, OrderInGroup: 9, Width: connect.WidthLong, DisplayName: "Topics", Doc: "List of topics to consume, separated by commas"}).
		Define(connect.ConfigKey{Name: "topics.regex", Type: connect.ConfigString, Default: "", Validator: connect.ValidRegex(), Importance: connect.High, Group: common, OrderInGroup: 10, Width: connect.WidthLong, DisplayName: "Topics regex", Doc: "Regular expression giving topics to consume. Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should be specified."}).
		Define(connect.ConfigKey{Name: "transforms", Type: connect.ConfigList, Default: "", Validator: uniqueAliasValidator("transformation"), Importance: connect.Low, Group: tr, OrderInGroup: 0, Width: connect.WidthLong, DisplayName: "Transforms", Doc: "Aliases for the transformations to be applied to records."}).
		Define(connect.ConfigKey{Name: "predicates", Type: connect.ConfigList, Default: "", Validator: uniqueAliasValidator("predicate"), Importance: connect.Low, Group: pr, OrderInGroup: 0, Width: connect.WidthLong, DisplayName: "Predicates", Doc: "Aliases for the predicates used by transformations."}).
		Merge(worker.ErrorsConfigDef())
}

// Validator validates connector configs against the registry (shared by the standalone and distributed herders).
type Validator struct {
	Registry       *connect.Registry
	OverridePolicy string // All, None, Principal
	WorkerGroupID  string
}

// Validate returns the JVM's ConfigInfos for a connector config. An unknown connector class is an error
// (500 with the JVM's message), not a validation result.
func (v *Validator) Validate(config map[string]string) (*ConfigInfos, error) {
	class := config["connector.class"]
	if class == "" {
		return nil, BadRequest("Connector config %s contains no connector type", formatJavaMap(worker.RedactConfig(config, nil)))
	}
	plugin, ok := v.Registry.Lookup(class)
	if !ok || (plugin.Type != connect.PluginSink && plugin.Type != connect.PluginSource) {
		return nil, &connect.PluginNotFoundError{Name: class, Kind: "Connector"}
	}
	if plugin.Type == connect.PluginSource {
		return nil, BadRequest("Source connectors are not supported by this runtime (sink-only): %s", class)
	}
	conn := plugin.New().(connect.SinkConnector)
	def := ConnectorConfigDef()
	values := def.Validate(config)
	byName := map[string]*connect.ConfigValue{}
	for i := range values {
		byName[values[i].Name] = &values[i]
	}
	addErr := func(name, msg string) {
		if cv, ok := byName[name]; ok {
			cv.Errors = append(cv.Errors, msg)
		}
	}
	// Sink rules (SinkConnectorConfig.validate).
	topics, regex := strings.TrimSpace(config["topics"]), strings.TrimSpace(config["topics.regex"])
	switch {
	case topics != "" && regex != "":
		msg := "topics and topics.regex are mutually exclusive options, but both are set."
		addErr("topics", msg)
		addErr("topics.regex", msg)
	case topics == "" && regex == "":
		msg := "Must configure one of topics or topics.regex"
		addErr("topics", msg)
		addErr("topics.regex", msg)
	}
	if dlq := strings.TrimSpace(config["errors.deadletterqueue.topic.name"]); dlq != "" {
		for _, t := range strings.Split(topics, ",") {
			if strings.TrimSpace(t) == dlq {
				addErr("errors.deadletterqueue.topic.name", fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=%s') to be consumed.", dlq, topics))
			}
		}
		if regex != "" {
			if re, err := regexp.Compile("^(?:" + regex + ")$"); err == nil && re.MatchString(dlq) {
				addErr("errors.deadletterqueue.topic.name", fmt.Sprintf("The DLQ topic '%s' may not be included in the regex matching the topics ('topics.regex=%s') to be consumed.", dlq, regex))
			}
		}
	}
	if v.WorkerGroupID != "" && "connect-"+config["name"] == v.WorkerGroupID {
		addErr("name", fmt.Sprintf("Consumer group connect-%s conflicts with Connect worker group %s", config["name"], v.WorkerGroupID))
	}
	// Class keys of the definition name plugins of their kind.
	for _, k := range def.Keys() {
		if k.Type == connect.ConfigClass {
			if msg := v.checkClassKey(k.Name, config); msg != "" {
				addErr(k.Name, msg)
			}
		}
	}
	// Client override policy.
	overrideErrs := v.overrideErrors(config)

	// Transforms and predicates: their class keys and the plugins' own definitions.
	extra, extraVals := v.enrichAliases(config)

	// The connector's own definition, and its custom validation.
	connDef := conn.ConfigDef()
	var connVals []connect.ConfigValue
	if connDef != nil {
		var own []*connect.ConfigKey
		for _, k := range connDef.Keys() {
			if _, dup := def.Key(k.Name); !dup {
				own = append(own, k)
			}
		}
		od := connect.NewConfigDef()
		for _, k := range own {
			od.Define(*k)
		}
		connVals = od.Validate(config)
		def = def.Merge(od)
	}
	if cv, ok := conn.(connect.ConfigValidator); ok {
		for _, r := range cv.Validate(config) {
			for i := range connVals {
				if connVals[i].Name == r.Name {
					connVals[i].Errors = append(connVals[i].Errors, r.Errors...)
				}
			}
			if b, ok := byName[r.Name]; ok {
				b.Errors = append(b.Errors, r.Errors...)
			}
		}
	}
	def = def.Merge(extra)
	all := append(append(values, connVals...), extraVals...)
	infos := &ConfigInfos{Name: plugin.Class, Groups: def.Groups()}
	if infos.Groups == nil {
		infos.Groups = []string{}
	}
	for _, cv := range all {
		k, _ := def.Key(cv.Name)
		if k == nil {
			continue
		}
		infos.Configs = append(infos.Configs, ConfigInfo{Definition: ConfigKeyInfoOf(k), Value: configValueInfo(cv, k.Type == connect.ConfigPassword)})
		infos.ErrorCount += len(cv.Errors)
	}
	for _, oe := range overrideErrs {
		infos.Configs = append(infos.Configs, ConfigInfo{
			Definition: ConfigKeyInfo{Name: oe.Name, Type: "STRING", Importance: "LOW", Width: "NONE", Order: -1, DisplayName: oe.Name, Dependents: []string{}},
			Value:      configValueInfo(oe, worker.IsSecretKey(oe.Name)),
		})
		infos.ErrorCount += len(oe.Errors)
	}
	return infos, nil
}

func (v *Validator) overrideErrors(config map[string]string) []connect.ConfigValue {
	policy := v.OverridePolicy
	if policy == "" || policy == "All" {
		return nil
	}
	var out []connect.ConfigValue
	keys := connect.SortedStrings(config)
	for _, k := range keys {
		for _, prefix := range []string{"consumer.override.", "producer.override.", "admin.override."} {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			key := strings.TrimPrefix(k, prefix)
			if policy == "Principal" && (key == "sasl.jaas.config" || key == "sasl.mechanism" || key == "security.protocol") {
				continue
			}
			val := config[k]
			out = append(out, connect.ConfigValue{Name: k, Value: val, Visible: true,
				Errors: []string{fmt.Sprintf("The '%s' policy does not allow '%s' to be overridden in the connector configuration.", policy, key)}})
		}
	}
	return out
}

// ValidationError renders the JVM's "Connector configuration is invalid" message, or nil when valid.
func ValidationError(infos *ConfigInfos) error {
	if infos.ErrorCount == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Connector configuration is invalid and contains the following %d error(s):\n", infos.ErrorCount)
	for _, c := range infos.Configs {
		for _, e := range c.Value.Errors {
			b.WriteString(e)
			b.WriteByte('\n')
		}
	}
	b.WriteString("You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return &RestError{Status: 400, Message: b.String(), Kind: ErrBadRequest}
}

// ConfigKeyInfoOf renders a key definition as the REST ConfigKeyInfo.
func ConfigKeyInfoOf(k *connect.ConfigKey) ConfigKeyInfo {
	info := ConfigKeyInfo{
		Name: k.Name, Type: string(k.Type), Required: !k.HasDefault(), Importance: string(k.Importance),
		Documentation: k.Doc, Order: k.OrderInGroup, Width: string(k.Width), DisplayName: k.DisplayName,
		Dependents: k.Dependents,
	}
	if k.HasDefault() {
		info.DefaultValue = connect.FormatConfigValue(k.Default)
	}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	}
	if info.Dependents == nil {
		info.Dependents = []string{}
	}
	return info
}

// configValueInfo renders a validated value; a secret's value is shown as [hidden] (the JVM's Password).
func configValueInfo(cv connect.ConfigValue, secret bool) ConfigValueInfo {
	out := ConfigValueInfo{Name: cv.Name, Visible: cv.Visible, Errors: cv.Errors, RecommendedValues: []string{}}
	switch s := cv.Value.(type) {
	case string:
		if secret {
			s = worker.Hidden
		}
		out.Value = &s
	case connect.Password:
		h := worker.Hidden
		out.Value = &h
	}
	for _, r := range cv.RecommendedValues {
		out.RecommendedValues = append(out.RecommendedValues, fmt.Sprint(r))
	}
	if out.Errors == nil {
		out.Errors = []string{}
	}
	return out
}

// formatJavaMap renders a map as Java's HashMap.toString would ({a=1, b=2}), sorted for determinism.
func formatJavaMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// TasksMax parses tasks.max (validated already).
func TasksMax(config map[string]string) int {
	n, err := strconv.Atoi(strings.TrimSpace(config["tasks.max"]))
	if err != nil || n < 1 {
		return 1
	}
	return n
}
