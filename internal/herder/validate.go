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

// Validator validates connector configs against the registry (shared by the standalone and distributed herders).
type Validator struct {
	Registry       *connect.Registry
	OverridePolicy string // All, None, Principal
	WorkerGroupID  string
	// WorkerProps are the worker's properties: its converters are the defaults of a connector's.
	WorkerProps map[string]string
	// TasksMaxLimit bounds tasks.max (worker.TasksMaxPerWorkerKey); 0: unbounded.
	TasksMaxLimit int
}

// NewValidator returns the validator of a worker's connectors.
func NewValidator(w *worker.Worker) *Validator {
	return &Validator{Registry: w.Registry(), OverridePolicy: w.Config().OverridePolicy, WorkerProps: w.Config().Props,
		TasksMaxLimit: w.Config().TasksMaxLimit}
}

// Validate returns the JVM's ConfigInfos for a connector config (AbstractHerder.validateConnectorConfig): the
// connector keys with the worker's defaults, the transforms' and predicates' keys, the connector's own keys, the
// client override policy's verdicts and the converters' own keys, in the JVM's order. An unknown connector class
// is an error, not a validation result.
func (v *Validator) Validate(config map[string]string) (*ConfigInfos, error) {
	class, ok := config["connector.class"]
	if !ok {
		return nil, BadRequest("Connector config %s contains no connector type", formatJavaMap(worker.RedactConfig(config, nil)))
	}
	pin, pinned := config[connectorVersionKey]
	want, err := connectorVersionRequirement(pin, pinned)
	if err != nil {
		return nil, BadRequest("%s", err.Error())
	}
	plugin, ok := v.Registry.Lookup(class)
	if !ok || (plugin.Type != connect.PluginSink && plugin.Type != connect.PluginSource) {
		return nil, &connect.PluginNotFoundError{Name: class, Kind: "Connector"}
	}
	if plugin.Type == connect.PluginSource {
		return nil, BadRequest("Source connectors are not supported by this runtime (sink-only): %s", class)
	}
	if want != nil && !want.contains(pluginVersion(plugin)) {
		return v.unmatchedVersion(config, plugin, want), nil
	}
	conn := plugin.New().(connect.SinkConnector)

	// The connector keys (SinkConnectorConfig.enrichedConfigDef), then the aliases' keys (ConnectorConfig.enrich).
	def := sinkConnectorConfigDef(v.defOptions(config, plugin))
	values := v.validateKeys(def, config)
	aliasDef, aliasValues := v.enrichAliases(config)
	def = def.Merge(aliasDef)
	for i := range aliasValues {
		values[aliasValues[i].Name] = &aliasValues[i]
	}
	v.validateSinkRules(config, values)
	if raw := config["tasks.max"]; v.TasksMaxLimit > 0 {
		if n, err := strconv.Atoi(strings.TrimSpace(raw)); err == nil && n > v.TasksMaxLimit {
			addConfigError(values, "tasks.max", raw, fmt.Sprintf("Value must be no more than %d (%s, this worker's bound)", v.TasksMaxLimit, worker.TasksMaxPerWorkerKey))
		}
	}
	if v.WorkerGroupID != "" && "connect-"+config["name"] == v.WorkerGroupID {
		addConfigError(values, "name", config["name"], fmt.Sprintf("Consumer group connect-%s conflicts with Connect worker group %s", config["name"], v.WorkerGroupID))
	}
	converterInfos := v.validateConverters(config, values)
	overrideErrs := v.overrideErrors(config)

	// The connector's own keys and its multi-key validation.
	keys := def.Keys()
	if connDef := conn.ConfigDef(); connDef != nil {
		for name, cv := range v.validateKeys(connDef, config) {
			values[name] = cv
		}
		merged := connect.NewConfigDef()
		for _, k := range keys {
			if own, dup := connDef.Key(k.Name); dup {
				merged.Define(*own)
			} else {
				merged.Define(*k)
			}
		}
		for _, k := range connDef.Keys() {
			merged.Define(*k)
		}
		def = merged
		keys = def.Keys()
	}
	if cv, ok := conn.(connect.ConfigValidator); ok {
		for _, r := range cv.Validate(config) {
			if len(r.Errors) > 0 {
				addConfigError(values, r.Name, r.Value, r.Errors...)
			}
		}
	}

	infos := &ConfigInfos{Name: class, Groups: def.Groups(), Configs: []ConfigInfo{}}
	if infos.Groups == nil {
		infos.Groups = []string{}
	}
	for _, k := range keys {
		cv := values[k.Name]
		if cv == nil {
			continue
		}
		infos.Configs = append(infos.Configs, ConfigInfo{Definition: ConfigKeyInfoOf(k), Value: configValueInfo(*cv, k.Type == connect.ConfigPassword)})
		infos.ErrorCount += len(cv.Errors)
	}
	for _, oe := range overrideErrs {
		infos.Configs = append(infos.Configs, ConfigInfo{
			Definition: ConfigKeyInfo{Name: oe.Name, Type: "STRING", Importance: "LOW", Width: "NONE", OrderInGroup: -1, DisplayName: oe.Name, Dependents: []string{}},
			Value:      configValueInfo(oe, worker.IsSecretKey(oe.Name)),
		})
		infos.ErrorCount += len(oe.Errors)
	}
	for _, ci := range converterInfos {
		infos.ErrorCount += ci.ErrorCount
		infos.Configs = append(infos.Configs, ci.Configs...)
		for _, g := range ci.Groups {
			if !containsString(infos.Groups, g) {
				infos.Groups = append(infos.Groups, g)
			}
		}
	}
	return infos, nil
}

// unmatchedVersion is the JVM's answer to a connector.plugin.version pin the installed plugin does not satisfy
// (AbstractHerder.invalidVersionedConnectorValidation): the keys of every connector without the worker's
// defaults, the plugin loader's error on connector.class and on the pin, the installed version recommended.
func (v *Validator) unmatchedVersion(config map[string]string, plugin *connect.Plugin, want *versionRange) *ConfigInfos {
	version := pluginVersion(plugin)
	def := connectorConfigDef(connectorDefOptions{connectorVersion: version})
	values := v.validateKeys(def, config)
	msg := unmatchedVersionMessage(plugin, want)
	addConfigError(values, "connector.class", config["connector.class"], msg)
	addConfigError(values, connectorVersionKey, config[connectorVersionKey], msg)
	values[connectorVersionKey].RecommendedValues = []any{version}
	infos := &ConfigInfos{Name: config["connector.class"], Groups: def.Groups(), Configs: []ConfigInfo{}}
	if infos.Groups == nil {
		infos.Groups = []string{}
	}
	for _, k := range def.Keys() {
		cv := values[k.Name]
		if cv == nil {
			continue
		}
		infos.Configs = append(infos.Configs, ConfigInfo{Definition: ConfigKeyInfoOf(k), Value: configValueInfo(*cv, k.Type == connect.ConfigPassword)})
		infos.ErrorCount += len(cv.Errors)
	}
	return infos
}

// defOptions are the worker's converters as defaults and the plugins' versions (ConnectorConfig.enrichedConfigDef).
func (v *Validator) defOptions(config map[string]string, plugin *connect.Plugin) connectorDefOptions {
	return connectorDefOptions{
		connectorVersion: pluginVersion(plugin),
		key:              v.converterDefaults(config, keyConverterKey, connect.PluginConverter),
		value:            v.converterDefaults(config, valueConverterKey, connect.PluginConverter),
		header:           v.converterDefaults(config, headerConverterKey, connect.PluginHeaderConverter),
		registry:         v.Registry,
	}
}

// converterDefaults is ConnectorConfig.converterDefaults: the worker's converter class is the default of the
// connector's; its version is that of the connector's converter when the connector names one, else the worker's
// `<key>.plugin.version` or the worker converter's version.
func (v *Validator) converterDefaults(config map[string]string, key string, kind connect.PluginType) converterDefaults {
	workerClass, set := v.WorkerProps[key]
	if !set && key == headerConverterKey {
		workerClass, set = defaultHeaderConverter, true
	}
	connClass, connSet := config[key]
	if !set && !connSet {
		return converterDefaults{}
	}
	var d converterDefaults
	if set {
		d.class = v.resolveClass(workerClass)
	}
	switch {
	case connSet:
		if p, ok := v.lookupConverter(connClass, kind); ok {
			d.version = pluginVersion(p)
		}
	case v.WorkerProps[key+converterVersionKeySuffix] != "":
		d.version = v.WorkerProps[key+converterVersionKeySuffix]
	default:
		if p, ok := v.lookupConverter(workerClass, kind); ok {
			d.version = pluginVersion(p)
		}
	}
	return d
}

func (v *Validator) lookupConverter(class string, kind connect.PluginType) (*connect.Plugin, bool) {
	if kind == connect.PluginHeaderConverter {
		return v.Registry.LookupType(class, connect.PluginHeaderConverter, connect.PluginConverter)
	}
	return v.Registry.LookupType(class, kind)
}

// resolveClass is a class name as the JVM's CLASS parsing yields it: an alias resolves to the plugin's class.
func (v *Validator) resolveClass(name string) string {
	if p, ok := v.Registry.Lookup(name); ok {
		return p.Class
	}
	return strings.TrimSpace(name)
}

// validateKeys is ConfigDef.validateAll: every key parsed from props (its default when absent), its validator
// run on the parsed value (null after a parse error or a missing required value), its recommender asked for
// values. The value is the parsed value, as the JVM renders it.
func (v *Validator) validateKeys(def *connect.ConfigDef, props map[string]string) map[string]*connect.ConfigValue {
	out := map[string]*connect.ConfigValue{}
	for _, k := range def.Keys() {
		cv := &connect.ConfigValue{Name: k.Name, Visible: true}
		raw, set := props[k.Name]
		var val any
		switch {
		case set:
			parsed, err := v.parseValue(k, raw)
			if err != nil {
				cv.Errors = append(cv.Errors, err.Error())
			} else {
				val = parsed
			}
		case !k.HasDefault():
			cv.Errors = append(cv.Errors, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", k.Name))
		default:
			val = k.Default
		}
		if k.Validator != nil {
			if err := k.Validator.Validate(k.Name, val); err != nil {
				cv.Errors = append(cv.Errors, javaConfigErrorText(err))
			}
		}
		if val != nil && k.Type == connect.ConfigClass {
			if msg := v.checkClassKey(k.Name, val.(string)); msg != "" {
				cv.Errors = append(cv.Errors, msg)
			}
		}
		cv.Value = val
		out[k.Name] = cv
	}
	for _, k := range def.Keys() {
		if k.Recommender != nil {
			out[k.Name].RecommendedValues = k.Recommender(props)
		}
		// The converter version keys are shown only when their converter is known (ConverterPluginVersionRecommender).
		if conv, ok := strings.CutSuffix(k.Name, converterVersionKeySuffix); ok && isConverterKey(conv) {
			if c := out[conv]; c != nil {
				out[k.Name].Visible = c.Value != nil
			}
		}
	}
	return out
}

func isConverterKey(k string) bool {
	return k == keyConverterKey || k == valueConverterKey || k == headerConverterKey
}

// parseValue is ConfigDef.parseType; a CLASS value is resolved through the plugins (aliases included).
func (v *Validator) parseValue(k *connect.ConfigKey, raw string) (any, error) {
	if k.Type == connect.ConfigClass {
		cls := strings.TrimSpace(raw)
		if p, ok := v.Registry.Lookup(cls); ok {
			return p.Class, nil
		}
		return nil, &connect.ConfigError{Name: k.Name, Value: cls, Message: "Class " + cls + " could not be found."}
	}
	parsed, err := connect.ParseConfigValue(k.Type, raw)
	if err != nil {
		shown := any(raw)
		if k.Type == connect.ConfigPassword {
			shown = connect.Password(raw)
		}
		return nil, &connect.ConfigError{Name: k.Name, Value: shown, Message: err.Error()}
	}
	return parsed, nil
}

// validateSinkRules is SinkConnectorConfig.validate: exactly one of topics and topics.regex, and a DLQ topic
// that is not one of the consumed topics.
func (v *Validator) validateSinkRules(config map[string]string, values map[string]*connect.ConfigValue) {
	topicsRaw, regexRaw := config["topics"], config["topics.regex"]
	hasTopics, hasRegex := strings.TrimSpace(topicsRaw) != "", strings.TrimSpace(regexRaw) != ""
	dlq := strings.TrimSpace(config["errors.deadletterqueue.topic.name"])
	if hasTopics && hasRegex {
		msg := "topics and topics.regex are mutually exclusive options, but both are set."
		addConfigError(values, "topics", topicsRaw, msg)
		addConfigError(values, "topics.regex", regexRaw, msg)
	}
	if !hasTopics && !hasRegex {
		msg := "Must configure one of topics or topics.regex"
		addConfigError(values, "topics", topicsRaw, msg)
		addConfigError(values, "topics.regex", regexRaw, msg)
	}
	if dlq == "" {
		return
	}
	if hasTopics {
		var topics []string
		for _, t := range splitList(topicsRaw) {
			if !containsString(topics, t) {
				topics = append(topics, t)
			}
		}
		if containsString(topics, dlq) {
			addConfigError(values, "topics", topicsRaw, fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=[%s]') consumed by the connector", dlq, strings.Join(topics, ", ")))
		}
	}
	if hasRegex {
		if re, err := regexp.Compile("^(?:" + regexRaw + ")$"); err == nil && re.MatchString(dlq) {
			addConfigError(values, "topics.regex", regexRaw, fmt.Sprintf("The DLQ topic '%s' may not be matched by the regex for the topics ('topics.regex=%s') consumed by the connector", dlq, regexRaw))
		}
	}
}

// addConfigError adds messages to a key's validation result, creating one for a key without a definition.
func addConfigError(values map[string]*connect.ConfigValue, name string, value any, msgs ...string) {
	cv, ok := values[name]
	if !ok {
		cv = &connect.ConfigValue{Name: name, Value: value, Visible: true}
		values[name] = cv
	}
	cv.Errors = append(cv.Errors, msgs...)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
		Documentation: k.Doc, OrderInGroup: k.OrderInGroup, Width: string(k.Width), DisplayName: k.DisplayName,
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

// configValueInfo renders a validated value as ConfigDef.convertToString does; a secret's value is shown as
// [hidden] (the JVM's Password).
func configValueInfo(cv connect.ConfigValue, secret bool) ConfigValueInfo {
	out := ConfigValueInfo{Name: cv.Name, Visible: cv.Visible, Errors: cv.Errors, RecommendedValues: []string{}}
	switch val := cv.Value.(type) {
	case nil:
	case connect.Password:
		h := worker.Hidden
		out.Value = &h
	default:
		out.Value = connect.FormatConfigValue(val)
		if secret {
			h := worker.Hidden
			out.Value = &h
		}
	}
	for _, r := range cv.RecommendedValues {
		if s := connect.FormatConfigValue(r); s != nil {
			out.RecommendedValues = append(out.RecommendedValues, *s)
		}
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
