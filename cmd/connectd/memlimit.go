package main

import (
	"bufio"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the part of the container's memory limit given to the Go heap as its soft limit
// when GOMEMLIMIT is not set: the rest is for what the collector does not count (goroutine stacks beyond
// the heap's accounting, memory-mapped files, the runtime's own overhead and the gap before it reacts).
const memoryLimitShare = 0.9

// setupMemoryLimit sets the Go heap's soft limit from the memory limit of the process's cgroup (a
// container's limits.memory), so that the collector works harder before the kernel kills the process,
// and returns it (0: none). GOMEMLIMIT in the environment takes precedence, as for any Go program.
func setupMemoryLimit() int64 {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return 0
	}
	limit, ok := cgroupMemoryLimit("/sys/fs/cgroup", "/proc/self/cgroup")
	if !ok {
		return 0
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	slog.Info("Go memory limit set from the cgroup's memory limit (GOMEMLIMIT unset)", "cgroup_limit", limit, "gomemlimit", soft)
	return soft
}

// unlimitedV1 is where cgroup v1 reports no limit (the page-rounded maximum int64): anything at or
// above it means no limit.
const unlimitedV1 = int64(1) << 62

// cgroupMemoryLimit returns the lowest memory limit on the way from the process's cgroup (as
// selfCgroup, /proc/self/cgroup, names it) up to the root of the hierarchy mounted at root, cgroup v2
// (memory.max) or v1 (memory/memory.limit_in_bytes). In a container the named path is often the host's
// and does not exist under root, which is then the container's own cgroup: the missing levels are
// skipped. ok is false when no level has a limit.
func cgroupMemoryLimit(root, selfCgroup string) (limit int64, ok bool) {
	v2, v1 := cgroupPaths(selfCgroup)
	if v2 != "" || v1 == "" {
		if l, found := lowestLimit(root, v2, "memory.max"); found {
			return l, true
		}
	}
	return lowestLimit(filepath.Join(root, "memory"), v1, "memory.limit_in_bytes")
}

// cgroupPaths reads the process's cgroup paths: the unified hierarchy's (v2, "0::/path") and the memory
// controller's (v1, "N:...,memory,...:/path"); "" for one not listed.
func cgroupPaths(selfCgroup string) (v2, v1 string) {
	f, err := os.Open(selfCgroup)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				v1 = parts[2]
			}
		}
	}
	return v2, v1
}

// lowestLimit reads file in dir/path and in each of its parents up to dir itself, and returns the
// lowest limit among them; "max", v1's unlimited value and unreadable or malformed files are no limit.
func lowestLimit(dir, path, file string) (limit int64, ok bool) {
	p := filepath.Clean("/" + path)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, p, file)); err == nil {
			s := strings.TrimSpace(string(b))
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && n < unlimitedV1 && (!ok || n < limit) {
				limit, ok = n, true
			}
		}
		if p == "/" {
			return limit, ok
		}
		p = filepath.Dir(p)
	}
}
