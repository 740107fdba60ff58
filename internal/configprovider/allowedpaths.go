package configprovider

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AllowedPathsParam restricts the file and directory providers to paths under the listed directories or
// files (comma-separated, absolute, existing). Unset, every path the worker can read is allowed.
const AllowedPathsParam = "allowed.paths"

// allowedPaths is the JVM's AllowedPaths: a lexical check on the cleaned path (symbolic links are not
// resolved, as in the JVM).
type allowedPaths struct {
	roots []string // nil: everything allowed
}

func parseAllowedPaths(v string) (allowedPaths, error) {
	if strings.TrimSpace(v) == "" {
		return allowedPaths{}, nil
	}
	var ap allowedPaths
	for _, p := range strings.Split(v, ",") {
		p = filepath.Clean(strings.TrimSpace(p))
		if !filepath.IsAbs(p) {
			return allowedPaths{}, fmt.Errorf("Path %s is not absolute", p)
		}
		if _, err := os.Stat(p); err != nil {
			return allowedPaths{}, fmt.Errorf("Path %s does not exist", p)
		}
		ap.roots = append(ap.roots, p)
	}
	return ap, nil
}

// check returns the path to open, or ok=false when it lies outside every allowed root.
func (a allowedPaths) check(path string) (string, bool) {
	if a.roots == nil {
		return path, true
	}
	clean := filepath.Clean(path)
	if !filepath.IsAbs(clean) {
		return "", false
	}
	for _, root := range a.roots {
		if clean == root || root == "/" || strings.HasPrefix(clean, root+"/") {
			return clean, true
		}
	}
	return "", false
}
