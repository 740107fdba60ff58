package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/plugins"
)

// TestConfigReferenceCurrent: docs/reference holds what `connectd config-reference` renders from the plugins'
// ConfigDefs, so the reference cannot drift from the keys the worker validates.
func TestConfigReferenceCurrent(t *testing.T) {
	for _, page := range referencePages {
		var b bytes.Buffer
		require.NoError(t, writeConfigReference(&b, plugins.Builtin(), page.Class, page.Title, page.Guide))
		have, err := os.ReadFile(filepath.Join("../../docs/reference", page.File))
		require.NoError(t, err, "run make docs")
		assert.Equal(t, b.String(), string(have), "docs/reference/%s is stale: run make docs", page.File)
	}
}
