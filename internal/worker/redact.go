package worker

import (
	"sort"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Hidden replaces secret values in logs, answers and error messages (the JVM's Password.toString).
const Hidden = "[hidden]"

// secretMarkers are name fragments of keys that hold secrets. Many secrets reach a plugin as pass-through
// keys that no ConfigDef types as PASSWORD (iceberg.catalog.jdbc.password, consumer.override.sasl.jaas.config,
// value.converter.basic.auth.user.info), so logs hide them by name too.
var secretMarkers = []string{
	"password", "passwd", "secret", "jaas.config", "user.info", "token", "credential",
	"keystore.key", "certificate.chain", "truststore.certificates", "private.key", "private-key", "api.key", "apikey",
}

// IsSecretKey reports whether a key's name marks it as holding a secret.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, m := range secretMarkers {
		if strings.Contains(k, m) {
			return true
		}
	}
	return false
}

// RedactConfig returns a copy of props fit for logs and error messages: the values of keys typed
// PASSWORD by any of defs or named like a secret are Hidden. Pass the raw config (with its provider
// references), never the resolved one.
func RedactConfig(props map[string]string, defs []*connect.ConfigDef) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		if IsSecretKey(k) || isPasswordKey(k, defs) {
			v = Hidden
		}
		out[k] = v
	}
	return out
}

func isPasswordKey(key string, defs []*connect.ConfigDef) bool {
	for _, d := range defs {
		if d == nil {
			continue
		}
		if ck, ok := d.Key(key); ok && ck.Type == connect.ConfigPassword {
			return true
		}
	}
	return false
}

// FormatConfig renders a config map sorted by key, "k = v" separated by ", " (one log attribute).
func FormatConfig(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteString(" = ")
		b.WriteString(props[k])
	}
	return b.String()
}
