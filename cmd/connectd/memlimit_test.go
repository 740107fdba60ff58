package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCgroupMemoryLimit reads cgroup trees laid out as files: v2 and v1, limits on the process's own
// cgroup or a parent, host paths that do not exist inside a container, and no limit at all.
func TestCgroupMemoryLimit(t *testing.T) {
	type tree map[string]string // path under the cgroup root -> content
	for _, tc := range []struct {
		name   string
		self   string // /proc/self/cgroup
		files  tree
		limit  int64
		hasLim bool
	}{
		{"v2 container (cgroup namespace)", "0::/\n", tree{"memory.max": "1073741824\n"}, 1 << 30, true},
		{"v2 no limit", "0::/\n", tree{"memory.max": "max\n"}, 0, false},
		{"v2 nested, parent lower", "0::/kubepods/pod1/c1\n", tree{
			"kubepods/pod1/c1/memory.max": "max\n",
			"kubepods/pod1/memory.max":    "536870912\n",
			"kubepods/memory.max":         "8589934592\n",
		}, 512 << 20, true},
		{"v2 host path absent inside the container", "0::/system.slice/docker-abc.scope\n", tree{"memory.max": "268435456"}, 256 << 20, true},
		{"v1", "12:cpu,cpuacct:/docker/abc\n11:memory:/docker/abc\n1:name=systemd:/docker/abc\n", tree{
			"memory/memory.limit_in_bytes": "2147483648\n",
		}, 2 << 30, true},
		{"v1 unlimited", "11:memory:/\n", tree{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, false},
		{"v1 nested", "11:memory:/kubepods/burstable/pod1/c1\n", tree{
			"memory/kubepods/burstable/pod1/c1/memory.limit_in_bytes": "1073741824\n",
			"memory/kubepods/burstable/memory.limit_in_bytes":         "9223372036854771712\n",
		}, 1 << 30, true},
		{"hybrid: v2 listed, limit in v1", "11:memory:/\n0::/\n", tree{"memory/memory.limit_in_bytes": "104857600"}, 100 << 20, true},
		{"malformed", "0::/\n", tree{"memory.max": "lots\n"}, 0, false},
		{"no files", "0::/\n", tree{}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tc.files {
				full := filepath.Join(root, p)
				require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
				require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
			}
			self := filepath.Join(t.TempDir(), "cgroup")
			require.NoError(t, os.WriteFile(self, []byte(tc.self), 0o644))
			limit, ok := cgroupMemoryLimit(root, self)
			require.Equal(t, tc.hasLim, ok)
			require.Equal(t, tc.limit, limit)
		})
	}
	_, ok := cgroupMemoryLimit(t.TempDir(), filepath.Join(t.TempDir(), "missing"))
	require.False(t, ok, "no /proc/self/cgroup")
}
