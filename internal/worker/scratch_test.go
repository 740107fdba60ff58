package worker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScratchDirResolved: connectd.scratch.dir wins; unset, a standalone worker uses a directory beside
// its offsets file and a distributed one the system's temporary directory.
func TestScratchDirResolved(t *testing.T) {
	base := map[string]string{"key.converter": "x", "value.converter": "x"}
	with := func(kv ...string) map[string]string {
		p := map[string]string{}
		for k, v := range base {
			p[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	data := t.TempDir()
	for _, tc := range []struct {
		name  string
		props map[string]string
		dir   string
		set   bool
	}{
		{"configured", with(ScratchDirKey, "/var/lib/connectd/scratch", "offset.storage.file.filename", data+"/offsets"), "/var/lib/connectd/scratch", true},
		{"data directory", with("offset.storage.file.filename", data+"/offsets"), filepath.Join(data, "scratch"), true},
		{"system", with(), os.TempDir(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(tc.props)
			require.NoError(t, err)
			require.Equal(t, tc.dir, cfg.ScratchDir)
			require.Equal(t, tc.set, cfg.ScratchDirSet)
			require.Equal(t, tc.dir, (&connectorCtx{w: &Worker{cfg: cfg}}).ScratchDir())
		})
	}
}

// TestPrepareScratchDir: the directory is made (with its parents) and left empty; one that cannot be
// made is an error naming the key.
func TestPrepareScratchDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "scratch")
	cfg := &Config{ScratchDir: dir}
	require.NoError(t, cfg.PrepareScratchDir())
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the probe file was left behind")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cfg = &Config{ScratchDir: filepath.Join(file, "scratch")} // a path under a file: not writable, even as root
	err = cfg.PrepareScratchDir()
	require.ErrorContains(t, err, ScratchDirKey)
}
