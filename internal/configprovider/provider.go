// Package configprovider resolves `${provider:[path:]key}` references in worker and connector configs
// (KIP-297, KIP-421) with the JVM's built-in providers: FileConfigProvider, DirectoryConfigProvider and
// EnvVarConfigProvider. Connector configs are stored with their references and resolved only when a
// connector or task starts (and for validation), as the JVM's WorkerConfigTransformer does.
package configprovider

import (
	"fmt"
	"sort"
	"strings"
)

// Provider is the JVM's ConfigProvider: it is configured once with its `param.*` settings and then
// answers lookups of keys under a path.
type Provider interface {
	Configure(params map[string]string) error
	// Get returns the values of keys found under path; keys not found are left out of the answer.
	Get(path string, keys []string) (map[string]string, error)
}

// Worker keys (AbstractConfig / WorkerConfig).
const (
	ProvidersKey = "config.providers"
	paramInfix   = ".param."
)

// Class names of the providers this worker implements.
const (
	FileClass      = "org.apache.kafka.common.config.provider.FileConfigProvider"
	DirectoryClass = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	EnvVarClass    = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
)

var classes = map[string]func() Provider{
	FileClass:      func() Provider { return &FileProvider{} },
	DirectoryClass: func() Provider { return &DirectoryProvider{} },
	EnvVarClass:    func() Provider { return NewEnvVarProvider(nil) },
}

// newProvider instantiates a provider by its class name or simple name (the JVM's plugin aliases).
func newProvider(class string) (Provider, bool) {
	class = strings.TrimSpace(class)
	if f, ok := classes[class]; ok {
		return f(), true
	}
	for full, f := range classes {
		if class == full[strings.LastIndexByte(full, '.')+1:] {
			return f(), true
		}
	}
	return nil, false
}

// Classes lists the provider classes this worker implements, sorted.
func Classes() []string {
	out := make([]string, 0, len(classes))
	for c := range classes {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// ClassError is a `config.providers.<name>.class` that is missing or names a class this worker does not
// implement. The worker refuses to start with it rather than leave references unresolved.
type ClassError struct {
	Key, Class string
}

func (e *ClassError) Error() string {
	if e.Class == "" {
		return fmt.Sprintf("Missing required configuration \"%s\": %s lists the provider but names no class", e.Key, ProvidersKey)
	}
	return fmt.Sprintf("Invalid value %s for configuration %s: Could not load config provider class or one of its dependencies (this worker implements %s)",
		e.Class, e.Key, strings.Join(Classes(), ", "))
}

// FromWorkerConfig instantiates and configures the providers a worker config declares:
// `config.providers=<name>,...`, `config.providers.<name>.class` and `config.providers.<name>.param.<p>`.
// It returns nil when none are declared.
func FromWorkerConfig(props map[string]string) (*Transformer, error) {
	var names []string
	for _, n := range strings.Split(props[ProvidersKey], ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	t := &Transformer{providers: make(map[string]Provider, len(names))}
	for _, name := range names {
		prefix := ProvidersKey + "." + name
		class, ok := props[prefix+".class"]
		if !ok || strings.TrimSpace(class) == "" {
			return nil, &ClassError{Key: prefix + ".class"}
		}
		p, ok := newProvider(class)
		if !ok {
			return nil, &ClassError{Key: prefix + ".class", Class: class}
		}
		params := map[string]string{}
		for k, v := range props {
			if rest, ok := strings.CutPrefix(k, prefix+paramInfix); ok && rest != "" {
				params[rest] = v
			}
		}
		if err := p.Configure(params); err != nil {
			return nil, fmt.Errorf("configuring config provider %s (%s): %w", name, class, err)
		}
		t.providers[name] = p
	}
	return t, nil
}
