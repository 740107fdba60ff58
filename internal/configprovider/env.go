package configprovider

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// AllowlistPatternParam is the EnvVarConfigProvider's regular expression that a variable's name must match
// (as a whole) to be readable; unset, every variable is.
const AllowlistPatternParam = "allowlist.pattern"

// EnvVarProvider is EnvVarConfigProvider: `${env:NAME}` is the environment variable NAME (no path).
type EnvVarProvider struct {
	env      map[string]string
	filtered map[string]string
}

// NewEnvVarProvider reads from env, or from the process environment when env is nil.
func NewEnvVarProvider(env map[string]string) *EnvVarProvider {
	if env == nil {
		env = map[string]string{}
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	}
	return &EnvVarProvider{env: env}
}

func (p *EnvVarProvider) Configure(params map[string]string) error {
	pattern, ok := params[AllowlistPatternParam]
	if !ok {
		pattern = ".*"
	}
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	if err != nil {
		return fmt.Errorf("Invalid value %s for configuration %s: %w", pattern, AllowlistPatternParam, err)
	}
	p.filtered = map[string]string{}
	for k, v := range p.env {
		if re.MatchString(k) {
			p.filtered[k] = v
		}
	}
	return nil
}

func (p *EnvVarProvider) Get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, fmt.Errorf("Path is not supported for EnvVarConfigProvider, invalid value '%s'", path)
	}
	if p.filtered == nil {
		return nil, fmt.Errorf("The provider has not been configured yet.")
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := p.filtered[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}
