package configprovider

import (
	"fmt"
	"log/slog"

	"github.com/connectd/connectd/internal/props"
)

// FileProvider is FileConfigProvider: `${file:/path/to/file.properties:key}` reads key from a Java
// properties file.
type FileProvider struct {
	allowed    allowedPaths
	configured bool
}

func (p *FileProvider) Configure(params map[string]string) error {
	ap, err := parseAllowedPaths(params[AllowedPathsParam])
	if err != nil {
		return err
	}
	p.allowed, p.configured = ap, true
	return nil
}

func (p *FileProvider) Get(path string, keys []string) (map[string]string, error) {
	if !p.configured {
		return nil, fmt.Errorf("The provider has not been configured yet.")
	}
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	file, ok := p.allowed.check(path)
	if !ok {
		slog.Warn(fmt.Sprintf("The path %s is not allowed to be accessed", path), "provider", "FileConfigProvider")
		return out, nil
	}
	m, err := props.Load(file)
	if err != nil {
		slog.Error(fmt.Sprintf("Could not read properties from file %s", path), "provider", "FileConfigProvider", "error", err)
		return nil, fmt.Errorf("Could not read properties from file %s", path)
	}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out, nil
}
