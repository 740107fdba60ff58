package herder

import (
	"fmt"
	"sort"
	"strings"

	"github.com/connectd/connectd/connect"
)

// aliasKind is one of the alias lists of a connector config: `transforms` or `predicates`.
type aliasKind struct {
	list  string             // the alias list key, and the prefix of each alias's keys
	group string             // group of the alias list; an alias's keys go in "<group>: <alias>"
	iface string             // the JVM interface name used in messages
	ptype connect.PluginType // the plugin type a class key must name
}

var (
	transformAliases = aliasKind{list: "transforms", group: "Transforms", iface: "Transformation", ptype: connect.PluginTransformation}
	predicateAliases = aliasKind{list: "predicates", group: "Predicates", iface: "Predicate", ptype: connect.PluginPredicate}
)

// The keys every transformation gets implicitly (the JVM's TransformationStage); they mask a plugin's own keys
// of the same name.
const (
	predicateKey = "predicate"
	negateKey    = "negate"
)

// enrichAliases is the JVM's ConnectorConfig.enrich followed by the validation of what it adds: for every
// alias, a class key `<list>.<alias>.type`, and, when that names a plugin of the right kind, the plugin's own
// ConfigDef embedded under `<list>.<alias>.` (with `predicate` and `negate` for transformations). Only those
// class keys are checked as classes; the plugin's keys are checked by the plugin's own definition, whatever
// their names.
func (v *Validator) enrichAliases(config map[string]string) (*connect.ConfigDef, []connect.ConfigValue) {
	def := connect.NewConfigDef()
	var values []connect.ConfigValue
	for _, kind := range []aliasKind{transformAliases, predicateAliases} {
		for _, alias := range uniqueAliases(config[kind.list]) {
			prefix := kind.list + "." + alias + "."
			group := kind.group + ": " + alias
			typeKey := connect.ConfigKey{Name: prefix + "type", Type: connect.ConfigClass, Default: connect.NoDefault,
				Importance: connect.High, Group: group, OrderInGroup: 0, Width: connect.WidthLong,
				DisplayName: kind.iface + " type for " + alias,
				Doc:         "Class for the '" + alias + "' " + strings.ToLower(kind.iface) + "."}
			def.Define(typeKey)
			typeValue, plugin := v.validateAliasClass(kind, prefix, config)
			typeValue.RecommendedValues = v.pluginClasses(kind.ptype)
			values = append(values, typeValue)
			// The version key (KIP-891): the version of the plugin the type key names.
			var version any
			var versions []any
			if p, ok := v.Registry.LookupType(config[prefix+"type"], kind.ptype); ok {
				version = pluginVersion(p)
				versions = []any{version}
			}
			versionKey := connect.ConfigKey{Name: prefix + pluginVersionSuffix, Type: connect.ConfigString, Default: version,
				Importance: connect.High, Group: group, OrderInGroup: 1, Width: connect.WidthLong,
				DisplayName: kind.iface + " version for " + alias,
				Doc:         "Version of the '" + alias + "' " + strings.ToLower(kind.iface) + "."}
			def.Define(versionKey)
			versionValue := connect.ConfigValue{Name: versionKey.Name, Value: version, RecommendedValues: versions, Visible: true}
			if raw, set := config[versionKey.Name]; set {
				versionValue.Value = strings.TrimSpace(raw)
			}
			values = append(values, versionValue)
			if plugin == nil {
				continue // as the JVM: nothing is embedded for a class that does not resolve
			}
			embedded := embedPluginDef(kind, prefix, group, plugin)
			for _, k := range embedded {
				def.Define(*k)
				values = append(values, validateEmbeddedKey(k, prefix, config))
			}
		}
	}
	return def, values
}

// validateAliasClass checks `<prefix>type` as the JVM's CLASS key with the enrich validator: the class must
// exist and be a plugin of the alias's kind; for a transformation, `negate` needs `predicate`. It returns the
// plugin when the class resolves to the right kind.
func (v *Validator) validateAliasClass(kind aliasKind, prefix string, config map[string]string) (connect.ConfigValue, *connect.Plugin) {
	name := prefix + "type"
	cv := connect.ConfigValue{Name: name, Visible: true}
	raw, set := config[name]
	var plugin *connect.Plugin
	switch cls := strings.TrimSpace(raw); {
	case !set:
		cv.Errors = append(cv.Errors, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", name))
	default:
		p, ok := v.Registry.Lookup(cls)
		switch {
		case !ok:
			msg, abstract := classNotFound(v.Registry, name, cls, kind.ptype)
			if abstract {
				cv.Value = cls
			}
			cv.Errors = append(cv.Errors, msg)
		case p.Type != kind.ptype:
			cv.Value = p.Class
			cv.Errors = append(cv.Errors, fmt.Sprintf("Class class %s does not implement the %s interface", p.Class, kind.iface))
		default:
			cv.Value = p.Class
			plugin = p
		}
	}
	if kind == transformAliases {
		_, negate := config[prefix+negateKey]
		_, predicate := config[prefix+predicateKey]
		if negate && !predicate {
			cv.Errors = append(cv.Errors, fmt.Sprintf("Config '%s%s' was provided but there is no config '%s%s' defining a predicate to be negated.",
				prefix, negateKey, prefix, predicateKey))
		}
	}
	return cv, plugin
}

// classNotFound is the JVM's message for a class key naming no plugin; for the name of an abstract SMT whose
// $Key/$Value subclasses exist (Cast for Cast$Key), it names them as the JVM does, and reports abstract.
func classNotFound(reg *connect.Registry, key, cls string, ptype connect.PluginType) (msg string, abstract bool) {
	var subs []string
	if strings.Contains(cls, ".") {
		for _, suffix := range []string{"$Key", "$Value"} {
			if p, ok := reg.LookupType(cls+suffix, ptype); ok && p.Class == cls+suffix {
				subs = append(subs, p.Class)
			}
		}
	}
	if len(subs) > 0 {
		return "This class is abstract and cannot be created. Did you mean " + strings.Join(subs, ", ") + "?", true
	}
	return fmt.Sprintf("Invalid value %s for configuration %s: Class %s could not be found.", cls, key, cls), false
}

// embedPluginDef is ConfigDef.embed of the plugin's definition (plus the implicit transformation keys) under
// prefix: keys in the JVM's natural order (required first, then by importance, then by name), numbered after
// the class and version keys, their validators called with the unprefixed name as the JVM's embedded validators are.
func embedPluginDef(kind aliasKind, prefix, group string, p *connect.Plugin) []*connect.ConfigKey {
	var keys []*connect.ConfigKey
	if kind == transformAliases {
		keys = append(keys,
			&connect.ConfigKey{Name: predicateKey, Type: connect.ConfigString, Default: nil, Importance: connect.Medium,
				Doc: "The alias of a predicate used to determine whether to apply this transformation.", Width: connect.WidthNone, DisplayName: predicateKey},
			&connect.ConfigKey{Name: negateKey, Type: connect.ConfigBoolean, Default: false, Importance: connect.Medium,
				Doc: "Whether the configured predicate should be negated.", Width: connect.WidthNone, DisplayName: negateKey})
	}
	if c, ok := p.New().(connect.Configurable); ok && c.ConfigDef() != nil {
		for _, k := range c.ConfigDef().Keys() {
			if kind == transformAliases && (k.Name == predicateKey || k.Name == negateKey) {
				continue
			}
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.HasDefault() != b.HasDefault() {
			return !a.HasDefault()
		}
		if ia, ib := importanceRank(a.Importance), importanceRank(b.Importance); ia != ib {
			return ia < ib
		}
		return a.Name < b.Name
	})
	out := make([]*connect.ConfigKey, len(keys))
	for i, k := range keys {
		c := *k
		c.Name = prefix + k.Name
		if c.DisplayName == "" {
			c.DisplayName = k.Name
		}
		c.Group = group
		if k.Group != "" {
			c.Group = group + ": " + k.Group
		}
		c.OrderInGroup = i + 2 // after the type and version keys
		if len(k.Dependents) > 0 {
			c.Dependents = make([]string, len(k.Dependents))
			for j, d := range k.Dependents {
				c.Dependents[j] = prefix + d
			}
		}
		if k.Recommender != nil {
			base := k.Recommender
			c.Recommender = func(props map[string]string) []any { return base(connect.WithPrefix(props, prefix)) }
		}
		out[i] = &c
	}
	return out
}

func importanceRank(i connect.Importance) int {
	switch i {
	case connect.High:
		return 0
	case connect.Medium:
		return 1
	}
	return 2
}

// validateEmbeddedKey validates one embedded key as the JVM's ConfigDef.validateAll does: a type error or a
// missing required value names the full key; the key's validator then runs on the parsed value (null after
// such an error) and names the key without its prefix.
func validateEmbeddedKey(k *connect.ConfigKey, prefix string, config map[string]string) connect.ConfigValue {
	cv := connect.ConfigValue{Name: k.Name, Visible: true}
	raw, set := config[k.Name]
	var parsed any
	switch {
	case set:
		v, err := connect.ParseConfigValue(k.Type, raw)
		if err != nil {
			cv.Errors = append(cv.Errors, (&connect.ConfigError{Name: k.Name, Value: raw, Message: err.Error()}).Error())
		} else {
			parsed = v
		}
	case !k.HasDefault():
		cv.Errors = append(cv.Errors, fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", k.Name))
	default:
		parsed = k.Default
	}
	cv.Value = parsed
	if k.Validator != nil {
		if err := k.Validator.Validate(strings.TrimPrefix(k.Name, prefix), parsed); err != nil {
			cv.Errors = append(cv.Errors, javaConfigErrorText(err))
		}
	}
	if k.Recommender != nil {
		cv.RecommendedValues = k.Recommender(config)
	}
	return cv
}

// javaConfigErrorText renders a validator's error as the JVM's ConfigException does, where a null value
// prints as "null".
func javaConfigErrorText(err error) string {
	if ce, ok := err.(*connect.ConfigError); ok && ce.Name != "" && ce.Value == nil {
		c := *ce
		c.Value = "null"
		return c.Error()
	}
	return err.Error()
}

// pluginClasses lists the installed plugins of a kind (the enrich ClassRecommender).
func (v *Validator) pluginClasses(kind connect.PluginType) []any {
	out := []any{}
	for _, p := range v.Registry.Plugins() {
		if p.Type == kind {
			out = append(out, p.Class)
		}
	}
	return out
}

// uniqueAliases lists the aliases of an alias list once each, in order (the JVM's LinkedHashSet).
func uniqueAliases(list string) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range splitList(list) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// uniqueAliasValidator is the JVM's alias validator of `transforms` and `predicates`.
func uniqueAliasValidator(kind string) connect.Validator {
	return connect.ValidatorFunc{Desc: "unique " + kind + " aliases", Fn: func(name string, v any) error {
		aliases, _ := v.([]string)
		seen := map[string]bool{}
		for _, a := range aliases {
			if seen[a] {
				return &connect.ConfigError{Name: name, Value: "[" + strings.Join(aliases, ", ") + "]", Message: "Duplicate alias provided."}
			}
			seen[a] = true
		}
		return nil
	}}
}

// checkClassKey checks a resolved CLASS value of the connector definition (the converters) as the JVM does: the
// class must implement the key's interface. It returns the error message, or "" when valid or not a key whose
// plugin kind is known.
func (v *Validator) checkClassKey(name, cls string) string {
	var iface string
	var implements func() bool
	switch name {
	case "key.converter", "value.converter":
		iface = "Converter"
		implements = func() bool { _, err := v.Registry.NewConverter(cls); return err == nil }
	case "header.converter":
		iface = "HeaderConverter"
		implements = func() bool { _, err := v.Registry.NewHeaderConverter(cls); return err == nil }
	default:
		return ""
	}
	if p, ok := v.Registry.Lookup(cls); ok && !implements() {
		return fmt.Sprintf("Class class %s does not implement the %s interface", p.Class, iface)
	}
	return ""
}
