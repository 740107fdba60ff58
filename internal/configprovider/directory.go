package configprovider

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// DirectoryProvider is DirectoryConfigProvider: `${directory:/run/secrets:db-password}` is the content of
// the regular file db-password in /run/secrets (symbolic links to regular files count, as the JVM's
// Files.isRegularFile follows them).
type DirectoryProvider struct {
	allowed    allowedPaths
	configured bool
}

func (p *DirectoryProvider) Configure(params map[string]string) error {
	ap, err := parseAllowedPaths(params[AllowedPathsParam])
	if err != nil {
		return err
	}
	p.allowed, p.configured = ap, true
	return nil
}

func (p *DirectoryProvider) Get(path string, keys []string) (map[string]string, error) {
	if !p.configured {
		return nil, fmt.Errorf("The provider has not been configured yet.")
	}
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	dir, ok := p.allowed.check(path)
	if !ok {
		slog.Warn(fmt.Sprintf("The path %s is not allowed to be accessed", path), "provider", "DirectoryConfigProvider")
		return out, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		slog.Warn(fmt.Sprintf("The path %s is not a directory", path), "provider", "DirectoryConfigProvider")
		return out, nil
	}
	for _, k := range keys {
		// Only entries of the directory itself, as the JVM lists it.
		if k == "" || k == "." || k == ".." || strings.ContainsRune(k, filepath.Separator) {
			continue
		}
		f := filepath.Join(dir, k)
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			slog.Error(fmt.Sprintf("Could not read file %s for property %s", f, k), "provider", "DirectoryConfigProvider", "error", err)
			return nil, fmt.Errorf("Could not read file %s for property %s", f, k)
		}
		out[k] = string(b)
	}
	return out, nil
}
