package herder

import (
	"strings"

	"github.com/connectd/connectd/connect"
)

const converterTypeKey = "converter.type"

// converterRoles are the converter keys in the order the JVM validates their own configs, with the role each
// converter is told (ConverterConfig's converter.type).
var converterRoles = []struct {
	key, role string
	kind      connect.PluginType
}{
	{headerConverterKey, "header", connect.PluginHeaderConverter},
	{keyConverterKey, "key", connect.PluginConverter},
	{valueConverterKey, "value", connect.PluginConverter},
}

// validateConverters is AbstractHerder.validateAllConverterConfigs: a converter the connector config names (and
// whose class and version keys are valid) has its own definition validated against the connector's
// `<key>.`-prefixed keys, with converter.type set to its role.
func (v *Validator) validateConverters(config map[string]string, values map[string]*connect.ConfigValue) []*ConfigInfos {
	var out []*ConfigInfos
	for _, c := range converterRoles {
		cls, set := config[c.key]
		classValue, versionValue := values[c.key], values[c.key+converterVersionKeySuffix]
		if !set || classValue == nil || len(classValue.Errors) > 0 || (versionValue != nil && len(versionValue.Errors) > 0) {
			continue
		}
		p, ok := v.lookupConverter(cls, c.kind)
		if !ok {
			continue
		}
		conf, ok := p.New().(connect.Configurable)
		if !ok || conf.ConfigDef() == nil {
			continue // a converter without a definition gets no further validation, as on the JVM
		}
		def := withConverterTypeKey(conf.ConfigDef())
		prefix := c.key + "."
		props := connect.WithPrefix(config, prefix)
		if _, ok := props[converterTypeKey]; !ok {
			props[converterTypeKey] = c.role
		}
		validated := v.validateKeys(def, props)
		out = append(out, prefixedConfigInfos(def, validated, prefix))
	}
	return out
}

// withConverterTypeKey gives a converter definition ConverterConfig's converter.type key as the JVM defines it:
// required (the runtime always sets it) and one of key, value, header.
func withConverterTypeKey(def *connect.ConfigDef) *connect.ConfigDef {
	if _, ok := def.Key(converterTypeKey); !ok {
		return def
	}
	out := connect.NewConfigDef()
	for _, k := range def.Keys() {
		if k.Name == converterTypeKey {
			out.Define(connect.ConfigKey{Name: converterTypeKey, Type: connect.ConfigString, Default: connect.NoDefault,
				Validator: connect.In("key", "value", "header"), Importance: connect.Low, Doc: "How this converter will be used."})
			continue
		}
		out.Define(*k)
	}
	return out
}

// prefixedConfigInfos is AbstractHerder.prefixedConfigInfos: the results of a plugin's own definition under
// prefix, in the order the JVM's ConfigDef.validate returns them (a HashMap's), counting keys with errors.
func prefixedConfigInfos(def *connect.ConfigDef, values map[string]*connect.ConfigValue, prefix string) *ConfigInfos {
	infos := &ConfigInfos{Groups: []string{}}
	names := make([]string, 0, len(def.Keys()))
	for _, k := range def.Keys() {
		names = append(names, k.Name)
	}
	for _, name := range javaHashMapOrder(names) {
		k, _ := def.Key(name)
		cv := *values[name]
		if k.Group != "" && !containsString(infos.Groups, k.Group) {
			infos.Groups = append(infos.Groups, k.Group)
		}
		ki := ConfigKeyInfoOf(k)
		ki.Name = prefix + k.Name
		cv.Name = prefix + cv.Name
		if len(cv.Errors) > 0 {
			infos.ErrorCount++
		}
		infos.Configs = append(infos.Configs, ConfigInfo{Definition: ki, Value: configValueInfo(cv, k.Type == connect.ConfigPassword)})
	}
	return infos
}

// javaHashMapOrder is the iteration order of a java.util.HashMap created empty and filled with keys in the given
// order: by bucket of the spread String.hashCode in the final table, then by insertion.
func javaHashMapOrder(keys []string) []string {
	capacity := 16
	for float64(len(keys)) > 0.75*float64(capacity) {
		capacity <<= 1
	}
	buckets := make([][]string, capacity)
	for _, k := range keys {
		h := uint32(javaStringHash(k))
		h ^= h >> 16
		i := h & uint32(capacity-1)
		buckets[i] = append(buckets[i], k)
	}
	out := make([]string, 0, len(keys))
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}

// javaStringHash is java.lang.String.hashCode.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16Encode(s) {
		h = 31*h + int32(u)
	}
	return h
}

func utf16Encode(s string) []uint16 {
	var out []uint16
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
			continue
		}
		out = append(out, uint16(r))
	}
	return out
}
