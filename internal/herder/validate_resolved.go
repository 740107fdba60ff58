package herder

import "github.com/connectd/connectd/internal/worker"

// validateResolved validates a connector config as the JVM's AbstractHerder.validateConnectorConfig does:
// with the worker's config provider references resolved first. A provider that fails (an unreadable file)
// fails the request with its message; the config is stored as given, with its references.
func validateResolved(w *worker.Worker, v *Validator, config map[string]string) (*ConfigInfos, error) {
	resolved, err := w.ResolveConfig(config)
	if err != nil {
		return nil, err
	}
	return v.Validate(resolved)
}

// IsSecretKey reports whether a connector config key's name marks it as holding a secret, for answers that echo
// a config before its connector (and so its definition) is known.
func IsSecretKey(key string) bool { return worker.IsSecretKey(key) }
