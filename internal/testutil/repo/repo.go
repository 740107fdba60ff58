// Package repo finds the module's checkout for tests that read its files or build its commands.
package repo

import (
	"os"
	"path/filepath"
)

// Root is the module's root directory: the first parent of the working directory with a go.mod ("" if none).
func Root() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
