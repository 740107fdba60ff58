package connect

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect/values"
)

// ConfigType is a config value type, named as in the JVM's ConfigDef.Type.
type ConfigType string

const (
	ConfigBoolean  ConfigType = "BOOLEAN"
	ConfigString   ConfigType = "STRING"
	ConfigInt      ConfigType = "INT"
	ConfigShort    ConfigType = "SHORT"
	ConfigLong     ConfigType = "LONG"
	ConfigDouble   ConfigType = "DOUBLE"
	ConfigList     ConfigType = "LIST"
	ConfigClass    ConfigType = "CLASS"
	ConfigPassword ConfigType = "PASSWORD"
)

// Importance is HIGH, MEDIUM or LOW.
type Importance string

const (
	High   Importance = "HIGH"
	Medium Importance = "MEDIUM"
	Low    Importance = "LOW"
)

// Width is the JVM's display width hint.
type Width string

const (
	WidthNone   Width = "NONE"
	WidthShort  Width = "SHORT"
	WidthMedium Width = "MEDIUM"
	WidthLong   Width = "LONG"
)

// noDefault marks a key without a default (a required key).
type noDefault struct{}

// NoDefault is the Default of required keys.
var NoDefault any = noDefault{}

// Password hides its value when printed, like the JVM's Password.
type Password string

func (Password) String() string { return "[hidden]" }

// Validator checks a parsed value; return a *ConfigError or any error (its text becomes the message).
type Validator interface {
	Validate(name string, value any) error
	String() string
}

// ConfigKey defines one configuration key.
type ConfigKey struct {
	Name    string
	Type    ConfigType
	Default any // a parsed value, a string to parse, or NoDefault
	// DefaultDoc describes a default that depends on the machine (e.g. "cores × 2") for generated docs.
	DefaultDoc   string
	Validator    Validator
	Importance   Importance
	Doc          string
	Group        string
	OrderInGroup int
	Width        Width
	DisplayName  string
	Dependents   []string
	// Recommender lists allowed values for /config/validate (optional).
	Recommender func(props map[string]string) []any
	// Internal keys are parsed but not listed by /connector-plugins/.../config.
	Internal bool
}

// HasDefault reports whether the key is optional.
func (k *ConfigKey) HasDefault() bool { _, none := k.Default.(noDefault); return !none }

// ConfigDef is an ordered set of config keys; it parses, validates and documents a configuration.
type ConfigDef struct {
	keys  []*ConfigKey
	index map[string]int
}

// NewConfigDef returns an empty definition.
func NewConfigDef() *ConfigDef { return &ConfigDef{index: map[string]int{}} }

// Define adds a key (replacing one of the same name). Missing width/order get the JVM defaults.
func (d *ConfigDef) Define(k ConfigKey) *ConfigDef {
	if k.Width == "" {
		k.Width = WidthNone
	}
	if k.Importance == "" {
		k.Importance = Medium
	}
	if k.OrderInGroup == 0 && k.Group == "" {
		k.OrderInGroup = -1
	}
	if k.DisplayName == "" {
		k.DisplayName = k.Name
	}
	if k.Default != nil && k.HasDefault() {
		if s, ok := k.Default.(string); ok && k.Type != ConfigString && k.Type != ConfigClass && k.Type != ConfigPassword {
			v, err := ParseConfigValue(k.Type, s)
			if err != nil {
				panic(fmt.Sprintf("connect: bad default for %s: %v", k.Name, err))
			}
			k.Default = v
		}
	}
	kk := k
	if i, ok := d.index[k.Name]; ok {
		d.keys[i] = &kk
		return d
	}
	d.index[k.Name] = len(d.keys)
	d.keys = append(d.keys, &kk)
	return d
}

// Merge returns a definition with d's keys followed by those of other that d lacks.
func (d *ConfigDef) Merge(other *ConfigDef) *ConfigDef {
	out := NewConfigDef()
	for _, k := range d.keys {
		out.Define(*k)
	}
	if other != nil {
		for _, k := range other.keys {
			if _, dup := out.index[k.Name]; !dup {
				out.Define(*k)
			}
		}
	}
	return out
}

// WithPrefix returns a copy with every key name and group prefixed (for transforms.<alias>.*, etc.).
func (d *ConfigDef) WithPrefix(prefix, group string) *ConfigDef {
	out := NewConfigDef()
	for i, k := range d.keys {
		c := *k
		c.Name = prefix + k.Name
		if group != "" {
			c.Group = group
			c.OrderInGroup = i + 1
		}
		out.Define(c)
	}
	return out
}

// Keys lists the keys in definition order.
func (d *ConfigDef) Keys() []*ConfigKey { return d.keys }

// Key finds one key.
func (d *ConfigDef) Key(name string) (*ConfigKey, bool) {
	i, ok := d.index[name]
	if !ok {
		return nil, false
	}
	return d.keys[i], true
}

// Groups lists group names in first-seen order.
func (d *ConfigDef) Groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range d.keys {
		if k.Group != "" && !seen[k.Group] {
			seen[k.Group] = true
			out = append(out, k.Group)
		}
	}
	return out
}

// ConfigValue is the validation result of one key, as the JVM's ConfigValue.
type ConfigValue struct {
	Name              string
	Value             any
	RecommendedValues []any
	Errors            []string
	Visible           bool
}

// Validate checks every defined key of props and returns one ConfigValue per key, in definition order.
func (d *ConfigDef) Validate(props map[string]string) []ConfigValue {
	out := make([]ConfigValue, 0, len(d.keys))
	for _, k := range d.keys {
		cv := ConfigValue{Name: k.Name, Visible: true}
		raw, set := props[k.Name]
		if set {
			cv.Value = raw
		}
		v, err := k.parse(raw, set)
		if err != nil {
			cv.Errors = append(cv.Errors, err.Error())
		} else if set && k.Type != ConfigPassword {
			cv.Value = raw
		}
		_ = v
		if k.Recommender != nil {
			cv.RecommendedValues = k.Recommender(props)
		}
		out = append(out, cv)
	}
	return out
}

// Parse parses and validates props into a Config; the first error is returned as a *ConfigError.
func (d *ConfigDef) Parse(props map[string]string) (*Config, error) {
	c := &Config{def: d, values: make(map[string]any, len(d.keys)), originals: props}
	for _, k := range d.keys {
		raw, set := props[k.Name]
		v, err := k.parse(raw, set)
		if err != nil {
			return nil, err
		}
		c.values[k.Name] = v
	}
	return c, nil
}

func (k *ConfigKey) parse(raw string, set bool) (any, error) {
	var v any
	if set {
		pv, err := ParseConfigValue(k.Type, raw)
		if err != nil {
			return nil, &ConfigError{Name: k.Name, Value: k.shown(raw), Message: err.Error()}
		}
		v = pv
	} else {
		if !k.HasDefault() {
			return nil, &ConfigError{Message: fmt.Sprintf("Missing required configuration \"%s\" which has no default value.", k.Name)}
		}
		v = k.Default
	}
	if k.Validator != nil && (set || v != nil) {
		if err := k.Validator.Validate(k.Name, v); err != nil {
			if _, ok := err.(*ConfigError); ok {
				return nil, err
			}
			return nil, &ConfigError{Name: k.Name, Value: k.shown(raw), Message: err.Error()}
		}
	}
	return v, nil
}

// shown is a raw value as error messages may print it: a PASSWORD's as [hidden].
func (k *ConfigKey) shown(raw string) any {
	if k.Type == ConfigPassword {
		return Password(raw)
	}
	return raw
}

// ParseConfigValue parses a string as the JVM's ConfigDef.parseType does.
func ParseConfigValue(t ConfigType, s string) (any, error) {
	trimmed := values.JavaTrim(s)
	switch t {
	case ConfigBoolean:
		switch strings.ToLower(trimmed) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("Expected value to be either true or false")
	case ConfigString, ConfigClass:
		return trimmed, nil
	case ConfigPassword:
		return Password(trimmed), nil
	case ConfigInt, ConfigShort:
		bits := 32
		if t == ConfigShort {
			bits = 16
		}
		n, err := strconv.ParseInt(trimmed, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("Not a number of type %s", t)
		}
		return int(n), nil
	case ConfigLong:
		n, err := strconv.ParseInt(trimmed, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("Not a number of type LONG")
		}
		return n, nil
	case ConfigDouble:
		f, err := values.ParseJavaFloat(trimmed, 64)
		if err != nil {
			return nil, fmt.Errorf("Not a number of type DOUBLE")
		}
		return f, nil
	case ConfigList:
		if trimmed == "" {
			return []string{}, nil
		}
		parts := strings.Split(trimmed, ",")
		for i := range parts {
			parts[i] = strings.Trim(parts[i], " \t\n\v\f\r") // the JVM splits at \s*,\s*
		}
		return parts, nil
	}
	return nil, fmt.Errorf("unknown config type %s", t)
}

// FormatConfigValue renders a parsed value as the JVM's ConfigDef.convertToString (for default_value).
func FormatConfigValue(v any) *string {
	if v == nil {
		return nil
	}
	var s string
	switch x := v.(type) {
	case noDefault:
		return nil
	case []string:
		s = strings.Join(x, ",")
	case Password:
		s = "[hidden]"
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
	default:
		s = fmt.Sprint(v)
	}
	return &s
}

// Config is a parsed configuration.
type Config struct {
	def       *ConfigDef
	values    map[string]any
	originals map[string]string
}

func (c *Config) Get(name string) any { return c.values[name] }
func (c *Config) String(name string) string {
	v, _ := c.values[name].(string)
	return v
}
func (c *Config) Bool(name string) bool { v, _ := c.values[name].(bool); return v }
func (c *Config) Int(name string) int   { v, _ := c.values[name].(int); return v }
func (c *Config) Long(name string) int64 {
	switch v := c.values[name].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}
func (c *Config) Double(name string) float64 { v, _ := c.values[name].(float64); return v }
func (c *Config) List(name string) []string  { v, _ := c.values[name].([]string); return v }
func (c *Config) Password(name string) string {
	v, _ := c.values[name].(Password)
	return string(v)
}

// Originals is the raw map the config was parsed from.
func (c *Config) Originals() map[string]string { return c.originals }

// OriginalsWithPrefix returns the raw entries under prefix, with the prefix stripped.
func (c *Config) OriginalsWithPrefix(prefix string) map[string]string {
	return WithPrefix(c.originals, prefix)
}

// WithPrefix returns the entries of m under prefix, with the prefix stripped.
func WithPrefix(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			out[k[len(prefix):]] = v
		}
	}
	return out
}

// Validators mirroring the JVM's ConfigDef.Range, ValidString, ValidList, NonEmptyString, ...

type rangeValidator struct{ min, max *float64 }

// AtLeast accepts numbers ≥ min.
func AtLeast(min float64) Validator { return rangeValidator{min: &min} }

// Between accepts numbers in [min, max].
func Between(min, max float64) Validator { return rangeValidator{min: &min, max: &max} }

func (r rangeValidator) Validate(name string, v any) error {
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case float64:
		f = x
	case nil:
		return &ConfigError{Name: name, Value: nil, Message: "Value must be non-null"}
	default:
		return nil
	}
	if r.min != nil && f < *r.min {
		return &ConfigError{Name: name, Value: v, Message: "Value must be at least " + fmtNum(*r.min)}
	}
	if r.max != nil && f > *r.max {
		return &ConfigError{Name: name, Value: v, Message: "Value must be no more than " + fmtNum(*r.max)}
	}
	return nil
}

func (r rangeValidator) String() string {
	switch {
	case r.min == nil && r.max != nil:
		return "[...," + fmtNum(*r.max) + "]"
	case r.max == nil && r.min != nil:
		return "[" + fmtNum(*r.min) + ",...]"
	case r.min != nil && r.max != nil:
		return "[" + fmtNum(*r.min) + ",...," + fmtNum(*r.max) + "]"
	}
	return ""
}

func fmtNum(f float64) string {
	if f == math.Trunc(f) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

type validString struct {
	allowed    []string
	ignoreCase bool
}

// In accepts one of the given strings (case-sensitive, as ValidString.in).
func In(allowed ...string) Validator { return validString{allowed: allowed} }

// InIgnoreCase is CaseInsensitiveValidString.
func InIgnoreCase(allowed ...string) Validator {
	return validString{allowed: allowed, ignoreCase: true}
}

func (v validString) Validate(name string, val any) error {
	s, _ := val.(string)
	for _, a := range v.allowed {
		if a == s || (v.ignoreCase && strings.EqualFold(a, s)) {
			return nil
		}
	}
	if v.ignoreCase {
		return &ConfigError{Name: name, Value: val, Message: "String must be one of (case insensitive): " + strings.Join(v.allowed, ", ")}
	}
	return &ConfigError{Name: name, Value: val, Message: "String must be one of: " + strings.Join(v.allowed, ", ")}
}
func (v validString) String() string { return "[" + strings.Join(v.allowed, ", ") + "]" }

type nonEmptyString struct{}

// NonEmptyString rejects "" (null passes, as in the JVM's NonEmptyString).
func NonEmptyString() Validator { return nonEmptyString{} }
func (nonEmptyString) Validate(name string, v any) error {
	if s, ok := v.(string); ok && s == "" {
		return &ConfigError{Name: name, Value: v, Message: "String must be non-empty"}
	}
	return nil
}
func (nonEmptyString) String() string { return "non-empty string" }

// ValidatorFunc adapts a function with a description.
type ValidatorFunc struct {
	Fn   func(name string, v any) error
	Desc string
}

func (f ValidatorFunc) Validate(name string, v any) error { return f.Fn(name, v) }
func (f ValidatorFunc) String() string                    { return f.Desc }

// ValidRegex accepts a string that compiles as a regular expression (RE2 syntax).
func ValidRegex() Validator {
	return ValidatorFunc{Desc: "valid regex", Fn: func(name string, v any) error {
		s, _ := v.(string)
		if s == "" {
			return nil
		}
		if _, err := regexp.Compile(s); err != nil {
			return &ConfigError{Name: name, Value: v, Message: err.Error()}
		}
		return nil
	}}
}

// SortedStrings returns the map's keys sorted (used for deterministic output).
func SortedStrings(m map[string]string) []string { ks := sortedKeys(m); sort.Strings(ks); return ks }
