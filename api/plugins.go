package api

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/logging"
)

func parseLevelName(s string) (any, bool) {
	lv, ok := logging.ParseLevel(s)
	return lv, ok
}

// undefinedVersion is the JVM's PluginDesc.UNDEFINED_VERSION, left out of /connector-plugins.
const undefinedVersion = "undefined"

// pluginOrder is the order ConnectorPluginsResource adds plugin kinds in.
var pluginOrder = []connect.PluginType{
	connect.PluginSink, connect.PluginSource, connect.PluginTransformation, connect.PluginPredicate,
	connect.PluginConverter, connect.PluginHeaderConverter,
}

func (s *Server) pluginInfos() []herder.PluginInfo {
	byType := map[connect.PluginType][]herder.PluginInfo{}
	for _, p := range s.registry.Plugins() {
		v := p.Version
		if v == undefinedVersion {
			v = ""
		}
		byType[p.Type] = append(byType[p.Type], herder.PluginInfo{Class: p.Class, Type: string(p.Type), Version: v})
		// The JVM scans header converters by interface: converters that are also header converters are
		// listed twice.
		if p.Type == connect.PluginConverter {
			if s.servesHeaders(p) {
				byType[connect.PluginHeaderConverter] = append(byType[connect.PluginHeaderConverter], herder.PluginInfo{Class: p.Class, Type: string(connect.PluginHeaderConverter), Version: v})
			}
		}
	}
	var out []herder.PluginInfo
	for _, t := range pluginOrder {
		list := byType[t]
		sort.SliceStable(list, func(i, j int) bool { return list[i].Class < list[j].Class })
		out = append(out, list...)
	}
	return out
}

// servesHeaders reports whether a converter can also be a header converter (as StringConverter, JsonConverter
// and the number converters are on the JVM).
func (s *Server) servesHeaders(p *connect.Plugin) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	_, err := s.registry.NewHeaderConverter(p.Class)
	return err == nil
}

func safeNew(p *connect.Plugin) (inst any) {
	defer func() {
		if recover() != nil {
			inst = nil
		}
	}()
	return p.New()
}

func (s *Server) listPlugins(w http.ResponseWriter, r *http.Request) {
	connectorsOnly := true
	if vals := r.URL.Query()["connectorsOnly"]; len(vals) > 0 && vals[0] != "" {
		connectorsOnly = strings.EqualFold(vals[0], "true")
	}
	out := []herder.PluginInfo{}
	for _, p := range s.pluginInfos() {
		if connectorsOnly && p.Type != string(connect.PluginSink) && p.Type != string(connect.PluginSource) {
			continue
		}
		out = append(out, p)
	}
	writeJSON(w, 200, out)
}

func (s *Server) pluginConfig(w http.ResponseWriter, r *http.Request) {
	name := pathVar(r, "plugin")
	p, ok := s.registry.Lookup(name)
	if !ok {
		writeError(w, herder.NotFound("Unknown plugin %s.", name))
		return
	}
	var def, base *connect.ConfigDef
	switch p.Type {
	case connect.PluginSink, connect.PluginSource, connect.PluginConverter, connect.PluginHeaderConverter,
		connect.PluginTransformation, connect.PluginPredicate:
		if c, ok := safeNew(p).(connect.Configurable); ok {
			def = c.ConfigDef()
		}
		if p.Type == connect.PluginSink {
			base = s.baseSinkDef
		}
	default:
		writeError(w, herder.BadRequest("Invalid plugin class %s. Valid types are sink, source, converter, header_converter, transformation, predicate.", name))
		return
	}
	out := []herder.ConfigKeyInfo{}
	seen := map[string]bool{}
	for _, d := range []*connect.ConfigDef{def, base} {
		if d == nil {
			continue
		}
		for _, k := range d.Keys() {
			if k.Internal || seen[k.Name] {
				continue
			}
			seen[k.Name] = true
			info := ConfigKeyInfo(k)
			if d == base && k.Name == "connector.plugin.version" {
				// the JVM's enrichedConfigDef(plugins, class): the connector's version is the default
				v := p.Version
				info.DefaultValue = &v
			}
			out = append(out, info)
		}
	}
	writeJSON(w, 200, out)
}

// ConfigKeyInfo converts a key definition as AbstractHerder.convertConfigKey does (exported for herders that
// build ConfigInfos).
func ConfigKeyInfo(k *connect.ConfigKey) herder.ConfigKeyInfo {
	info := herder.ConfigKeyInfo{
		Name:          k.Name,
		Type:          string(k.Type),
		Required:      !k.HasDefault(),
		Importance:    string(k.Importance),
		Documentation: k.Doc,
		OrderInGroup:  k.OrderInGroup,
		Width:         string(k.Width),
		DisplayName:   k.DisplayName,
		Dependents:    append([]string{}, k.Dependents...),
	}
	if k.HasDefault() {
		info.DefaultValue = connect.FormatConfigValue(k.Default)
	}
	if k.Group != "" {
		g := k.Group
		info.Group = &g
	}
	return info
}

// normalizedPluginName strips a trailing "Connector" (ConnectorPluginsResource.normalizedPluginName).
func normalizedPluginName(n string) string {
	if strings.HasSuffix(n, "Connector") && len(n) > len("Connector") {
		return n[:len(n)-len("Connector")]
	}
	return n
}

func (s *Server) validateConfig(w http.ResponseWriter, r *http.Request) {
	plugin := pathVar(r, "plugin")
	m, _, err := readStringMap(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if m == nil {
		writeError(w, newRestError(500, npeConfig))
		return
	}
	class := m.vals["connector.class"]
	if class != nil && !strings.HasSuffix(normalizedPluginName(*class), normalizedPluginName(plugin)) {
		writeError(w, newRestError(400, fmt.Sprintf("Included connector type %s does not match request type %s", *class, plugin)))
		return
	}
	if class == nil {
		writeValidationFailure(w, newRestError(400, fmt.Sprintf("Connector config %s contains no connector type", javaHashMapString(m))))
		return
	}
	var infos *herder.ConfigInfos
	err = s.call(r, false, func(ctx context.Context) error {
		var e error
		infos, e = s.h.ValidateConnectorConfig(ctx, m.plain())
		return e
	})
	if err != nil {
		writeValidationFailure(w, err)
		return
	}
	writeJSON(w, 200, infos)
}

// writeValidationFailure answers a validation that could not run. The JVM validates on an executor and gets a
// BadRequestException back wrapped in an ExecutionException, which its exception mapper answers as a 500 naming
// the exception class.
func writeValidationFailure(w http.ResponseWriter, err error) {
	if status, _, msg := errorStatus(err); status == http.StatusBadRequest && msg != nil {
		writeError(w, newRestError(http.StatusInternalServerError, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: "+*msg))
		return
	}
	writeError(w, err)
}

// javaStringHash is java.lang.String.hashCode.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaHashMapString renders m as `new HashMap<>(m).toString()` would (the worker's config transformer copies
// the request's LinkedHashMap into a HashMap before the JVM prints it): iteration by bucket, then insertion.
func javaHashMapString(m *orderedMap) string {
	n := len(m.keys)
	t := int(float32(n)/0.75 + 1)
	capacity := 1
	for capacity < t {
		capacity <<= 1
	}
	if n == 0 {
		return "{}"
	}
	buckets := make([][]string, capacity)
	for _, k := range m.keys {
		h := uint32(javaStringHash(k))
		h ^= h >> 16
		i := h & uint32(capacity-1)
		buckets[i] = append(buckets[i], k)
	}
	var parts []string
	for _, b := range buckets {
		for _, k := range b {
			v := "null"
			if p := m.vals[k]; p != nil {
				v = *p
				if herder.IsSecretKey(k) {
					v = "[hidden]"
				}
			}
			parts = append(parts, k+"="+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
