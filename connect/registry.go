package connect

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// PluginType is the REST name of a plugin kind.
type PluginType string

const (
	PluginSink            PluginType = "sink"
	PluginSource          PluginType = "source"
	PluginConverter       PluginType = "converter"
	PluginHeaderConverter PluginType = "header_converter"
	PluginTransformation  PluginType = "transformation"
	PluginPredicate       PluginType = "predicate"
)

// Plugin describes one registered plugin. Class is the JVM class name users put in configs; Aliases are
// extra accepted names (the runtime also accepts the JVM's automatic aliases: the simple class name, and
// for connectors and converters the simple name without its "Connector"/"Converter" suffix).
type Plugin struct {
	Class   string
	Aliases []string
	Type    PluginType
	Version string
	// New returns a fresh instance: SinkConnector, Converter, HeaderConverter, Transformation or Predicate.
	New func() any
}

// Registry maps class names and aliases to plugins.
type Registry struct {
	mu      sync.RWMutex
	byClass map[string]*Plugin
	byAlias map[string][]*Plugin
}

// NewRegistry returns a registry holding the given lists of plugins (each plugin package's Plugins()).
func NewRegistry(lists ...[]Plugin) *Registry {
	r := &Registry{byClass: map[string]*Plugin{}, byAlias: map[string][]*Plugin{}}
	for _, ps := range lists {
		for _, p := range ps {
			r.Register(p)
		}
	}
	return r
}

// Register adds a plugin; registering a class twice panics (a programming error).
func (r *Registry) Register(p Plugin) {
	if p.Class == "" || p.New == nil || p.Type == "" {
		panic("connect: plugin needs Class, Type and New")
	}
	if p.Version == "" {
		p.Version = DefaultPluginVersion
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byClass[p.Class]; dup {
		panic("connect: plugin registered twice: " + p.Class)
	}
	pp := &p
	r.byClass[p.Class] = pp
	for _, a := range append(autoAliases(p), p.Aliases...) {
		if a != p.Class {
			r.byAlias[a] = append(r.byAlias[a], pp)
		}
	}
}

// DefaultPluginVersion is reported for built-in plugins.
const DefaultPluginVersion = "4.3.1"

func autoAliases(p Plugin) []string {
	simple := p.Class[strings.LastIndexByte(p.Class, '.')+1:]
	out := []string{simple}
	switch p.Type {
	case PluginSink, PluginSource:
		if s := strings.TrimSuffix(simple, "Connector"); s != simple && s != "" {
			out = append(out, s)
		}
	case PluginConverter, PluginHeaderConverter:
		if s := strings.TrimSuffix(simple, "Converter"); s != simple && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Lookup finds a plugin by class name or unambiguous alias.
func (r *Registry) Lookup(name string) (*Plugin, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	name = strings.TrimSpace(name)
	if p, ok := r.byClass[name]; ok {
		return p, true
	}
	if ps := r.byAlias[name]; len(ps) == 1 {
		return ps[0], true
	}
	return nil, false
}

// LookupType is Lookup restricted to some plugin types.
func (r *Registry) LookupType(name string, types ...PluginType) (*Plugin, bool) {
	p, ok := r.Lookup(name)
	if !ok {
		return nil, false
	}
	for _, t := range types {
		if p.Type == t {
			return p, true
		}
	}
	return nil, false
}

// Plugins lists all plugins sorted by class name.
func (r *Registry) Plugins() []*Plugin {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Plugin, 0, len(r.byClass))
	for _, p := range r.byClass {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Class < out[j].Class })
	return out
}

// NewSinkConnector instantiates a sink connector by class or alias.
func (r *Registry) NewSinkConnector(class string) (SinkConnector, *Plugin, error) {
	p, ok := r.Lookup(class)
	if !ok {
		return nil, nil, &PluginNotFoundError{Name: class, Kind: "Connector"}
	}
	c, ok := p.New().(SinkConnector)
	if !ok {
		return nil, nil, fmt.Errorf("class %s is not a sink connector", p.Class)
	}
	return c, p, nil
}

// NewConverter instantiates a converter.
func (r *Registry) NewConverter(class string) (Converter, error) {
	p, ok := r.LookupType(class, PluginConverter)
	if !ok {
		return nil, &PluginNotFoundError{Name: class, Kind: "Converter"}
	}
	return p.New().(Converter), nil
}

// NewHeaderConverter instantiates a header converter (converters that also implement HeaderConverter count).
func (r *Registry) NewHeaderConverter(class string) (HeaderConverter, error) {
	p, ok := r.LookupType(class, PluginHeaderConverter, PluginConverter)
	if ok {
		switch v := p.New().(type) {
		case HeaderConverter:
			return v, nil
		case interface{ AsHeaderConverter() HeaderConverter }:
			// A converter that is also a header converter (JsonConverter) exposes the header role
			// separately, since the two Configure signatures differ.
			return v.AsHeaderConverter(), nil
		case converterWithHeaders:
			// Converters with header methods (StringConverter, ByteArrayConverter) serve as header
			// converters as in the JVM; Configure(map) becomes Configure(map, false).
			return converterAsHeader{v}, nil
		}
	}
	return nil, &PluginNotFoundError{Name: class, Kind: "HeaderConverter"}
}

// NewTransformation instantiates an SMT.
func (r *Registry) NewTransformation(class string) (Transformation, error) {
	p, ok := r.LookupType(class, PluginTransformation)
	if !ok {
		return nil, &PluginNotFoundError{Name: class, Kind: "Transformation"}
	}
	return p.New().(Transformation), nil
}

// NewPredicate instantiates a predicate.
func (r *Registry) NewPredicate(class string) (Predicate, error) {
	p, ok := r.LookupType(class, PluginPredicate)
	if !ok {
		return nil, &PluginNotFoundError{Name: class, Kind: "Predicate"}
	}
	return p.New().(Predicate), nil
}

// PluginNotFoundError carries the JVM's message for an unknown class.
type PluginNotFoundError struct {
	Name string
	Kind string // Connector, Converter, Transformation, Predicate, HeaderConverter
}

func (e *PluginNotFoundError) Error() string {
	return fmt.Sprintf("Failed to find any class that implements %s and which name matches %s", e.Kind, e.Name)
}

type converterWithHeaders interface {
	Converter
	ToConnectHeader(topic, headerKey string, value []byte) (SchemaAndValue, error)
	FromConnectHeader(topic, headerKey string, schema *Schema, value any) ([]byte, error)
}

type converterAsHeader struct{ converterWithHeaders }

func (c converterAsHeader) Configure(configs map[string]string) error {
	return c.converterWithHeaders.Configure(configs, false)
}
