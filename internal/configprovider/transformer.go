package configprovider

import (
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// referencePattern is the JVM's ConfigTransformer.DEFAULT_PATTERN: ${provider:[path:]key}. Go's
// leftmost-first matching with the same lazy quantifiers gives the same groups as java.util.regex.
var referencePattern = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// Reference is one ${provider:path:key} (Path is "" in the ${provider:key} form).
type Reference struct {
	Provider, Path, Key string
}

func (r Reference) String() string {
	if r.Path == "" {
		return "${" + r.Provider + ":" + r.Key + "}"
	}
	return "${" + r.Provider + ":" + r.Path + ":" + r.Key + "}"
}

func referenceAt(s string, m []int) Reference {
	r := Reference{Provider: s[m[2]:m[3]], Key: s[m[8]:m[9]]}
	if m[6] >= 0 {
		r.Path = s[m[6]:m[7]]
	}
	return r
}

// References lists the references in a value, in order.
func References(v string) []Reference {
	var out []Reference
	for _, m := range referencePattern.FindAllStringSubmatchIndex(v, -1) {
		out = append(out, referenceAt(v, m))
	}
	return out
}

// HasReference reports whether a value contains a ${provider:[path:]key} reference.
func HasReference(v string) bool { return strings.Contains(v, "${") && referencePattern.MatchString(v) }

// Transformer is the JVM's ConfigTransformer over the worker's providers. A nil *Transformer leaves configs
// unchanged.
type Transformer struct {
	providers map[string]Provider
}

// Providers lists the configured provider names, sorted.
func (t *Transformer) Providers() []string {
	if t == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(t.providers))
}

// Transform returns a copy of configs with every reference to a configured provider replaced by its value.
// As in the JVM, a reference to a provider that is not configured, or to a key the provider does not have
// (also a path outside allowed.paths), stays as written; a provider failure (an unreadable file, a path
// given to the env provider) is an error.
func (t *Transformer) Transform(configs map[string]string) (map[string]string, error) {
	if configs == nil {
		return nil, nil
	}
	out := maps.Clone(configs)
	if t == nil || len(t.providers) == 0 {
		return out, nil
	}
	// Collect the keys per provider and path, then ask each provider once per path.
	wanted := map[string]map[string]map[string]bool{}
	for _, v := range configs {
		if !strings.Contains(v, "${") {
			continue
		}
		for _, r := range References(v) {
			if _, ok := t.providers[r.Provider]; !ok {
				continue
			}
			byPath := wanted[r.Provider]
			if byPath == nil {
				byPath = map[string]map[string]bool{}
				wanted[r.Provider] = byPath
			}
			if byPath[r.Path] == nil {
				byPath[r.Path] = map[string]bool{}
			}
			byPath[r.Path][r.Key] = true
		}
	}
	if len(wanted) == 0 {
		return out, nil
	}
	values := map[Reference]string{}
	for _, name := range slices.Sorted(maps.Keys(wanted)) {
		for _, path := range slices.Sorted(maps.Keys(wanted[name])) {
			keys := slices.Sorted(maps.Keys(wanted[name][path]))
			data, err := t.providers[name].Get(path, keys)
			if err != nil {
				return nil, err
			}
			for k, v := range data {
				values[Reference{Provider: name, Path: path, Key: k}] = v
			}
		}
	}
	for k, v := range configs {
		if !strings.Contains(v, "${") {
			continue
		}
		out[k] = referencePattern.ReplaceAllStringFunc(v, func(ref string) string {
			r := referenceAt(ref, referencePattern.FindStringSubmatchIndex(ref))
			if _, configured := t.providers[r.Provider]; !configured {
				return ref
			}
			if val, ok := values[r]; ok {
				return val
			}
			slog.Warn("config value keeps an unresolved reference: the provider has no such key, or does not allow reading it", "config", k, "reference", ref)
			return ref
		})
	}
	return out, nil
}

// KeysWithReferences lists the keys whose values contain a reference, sorted.
func KeysWithReferences(configs map[string]string) []string {
	var out []string
	for k, v := range configs {
		if HasReference(v) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ReverseTransform puts the connector's references back into task configs generated from its resolved
// config: every task key that the raw connector config sets with a reference gets the raw value (the
// JVM's AbstractHerder.reverseTransform), so that task configs are stored with references, not secrets.
func ReverseTransform(rawConnector map[string]string, taskConfigs []map[string]string) []map[string]string {
	keys := KeysWithReferences(rawConnector)
	out := make([]map[string]string, len(taskConfigs))
	for i, tc := range taskConfigs {
		m := maps.Clone(tc)
		for _, k := range keys {
			if _, ok := m[k]; ok {
				m[k] = rawConnector[k]
			}
		}
		out[i] = m
	}
	return out
}
