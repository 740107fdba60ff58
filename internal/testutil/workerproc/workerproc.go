// Package workerproc runs the connectd binary for the end-to-end tests under test/: it builds cmd/connectd once
// for all the test processes of a run, starts workers (standalone, distributed or any subcommand) from properties, talks to their
// REST API, waits for connector and task states, and keeps a worker's log when its test fails.
//
// Only tests under test/ may run the binary: package tests stay in-process, so that testing a library package
// builds no binary and starts no worker. Binary refuses any other caller.
package workerproc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testutil/repo"
	"github.com/stretchr/testify/require"
)

// modulePath is the module whose test/ tree may run the binary.
const modulePath = "github.com/connectd/connectd"

// BinaryEnv names a prebuilt binary to run instead of building one (e.g. one built with -race).
const BinaryEnv = "CONNECTD_BINARY"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the connectd binary, built from cmd/connectd once for all the test processes that need the same
// build ($CONNECTD_BINARY overrides it). It fails the test when called from outside the module's test/ tree and skips it under -short.
func Binary(t testing.TB) string {
	t.Helper()
	require.NoError(t, checkCaller(callerFuncs()))
	if testing.Short() {
		t.Skip("builds and runs the connectd binary: skipped under -short")
	}
	buildOnce.Do(func() {
		if b := os.Getenv(BinaryEnv); b != "" {
			binPath = b
			return
		}
		binPath, buildErr = build()
	})
	require.NoError(t, buildErr)
	return binPath
}

// build builds cmd/connectd into a directory named after what the binary is made of, shared by the test processes
// of one `go test` run (and later runs of the same source): the first builds it, the others wait and reuse it.
func build() (string, error) {
	root := RepoRoot()
	key, err := buildKey(root)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "connectd-e2e-bin", key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return lockAndBuild(dir, func(out string) error {
		prune(filepath.Dir(dir), key)
		cmd := exec.Command("go", "build", "-o", out, "./cmd/connectd")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/connectd: %v\n%s", err, out)
		}
		return nil
	})
}

// lockAndBuild returns dir's binary, made by build (into the path it is given) unless it is there. A raw
// descriptor, never closed, holds a shared lock on dir as long as the process lives, so that prune leaves a binary
// in use alone; building takes a lock of its own, so that a test process started while others run the binary waits
// for a build at most, never for those processes to end.
func lockAndBuild(dir string, build func(out string) error) (string, error) {
	use, err := syscall.Open(filepath.Join(dir, "lock"), syscall.O_CREAT|syscall.O_RDWR|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return "", err
	}
	if err := syscall.Flock(use, syscall.LOCK_SH); err != nil {
		_ = syscall.Close(use)
		return "", err
	}
	bin := filepath.Join(dir, "connectd")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	building, err := os.OpenFile(filepath.Join(dir, "build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer building.Close() // releases the build lock
	if err := syscall.Flock(int(building.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp := bin + ".building"
	if err := build(tmp); err != nil {
		return "", err
	}
	return bin, os.Rename(tmp, bin)
}

// prune removes the binaries of other builds that no test process uses, made an hour ago or earlier (a younger
// one may be about to be locked by the process that made it).
func prune(parent, keep string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if e.Name() == keep || !e.IsDir() {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if st, err := os.Stat(filepath.Join(dir, "lock")); err != nil || time.Since(st.ModTime()) < time.Hour {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(dir)
		}
		f.Close()
	}
}

// buildKey names what cmd/connectd is built from: the toolchain, its settings, and the compiled form of every
// package the binary links (the build cache's files, which change with any source, flag or tag that changes them).
func buildKey(root string) (string, error) {
	h := sha256.New()
	for _, args := range [][]string{
		{"env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT"},
		{"list", "-deps", "-export", "-f", "{{.ImportPath}} {{.Export}}", "./cmd/connectd"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
		}
		h.Write(out)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// callerFuncs names the functions on the calling goroutine's stack.
func callerFuncs() []string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	var out []string
	for {
		f, more := frames.Next()
		out = append(out, f.Function)
		if !more {
			return out
		}
	}
}

// checkCaller accepts a stack that runs through a package of the module's test/ tree.
func checkCaller(funcs []string) error {
	for _, f := range funcs {
		if strings.HasPrefix(f, modulePath+"/test/") {
			return nil
		}
	}
	return fmt.Errorf("the connectd binary runs only in tests under test/ (package tests stay in-process); called from %s",
		strings.Join(funcs, " <- "))
}

// RepoRoot is the module's root directory.
func RepoRoot() string { return repo.Root() }

// Proc is one running connectd process. Its output is kept: the tail is logged and the whole of it written
// to a file that outlives the test when the test fails.
type Proc struct {
	Cmd  *exec.Cmd
	Name string
	Out  *Buffer // stdout and stderr

	mu     sync.Mutex
	exited chan struct{}
	killed bool
}

// Buffer is a bytes.Buffer that a child process writes to while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.b.Write(p) }
func (b *Buffer) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Start runs the binary with args (e.g. "standalone", worker.properties, connector.properties).
func Start(t testing.TB, args ...string) *Proc { return StartEnv(t, nil, args...) }

// StartEnv runs the binary with args and env added to the test's environment.
func StartEnv(t testing.TB, env []string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	p := &Proc{Cmd: cmd, Name: "connectd", Out: &Buffer{}, exited: make(chan struct{})}
	if len(args) > 0 {
		p.Name = args[0]
	}
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.Kill()
		if strings.Contains(p.Log(), "WARNING: DATA RACE") {
			t.Errorf("%s: data race (a binary built with -race)", p.Name)
		}
		if t.Failed() {
			p.keepLog(t)
		}
	})
	return p
}

// Log is the output so far.
func (p *Proc) Log() string { return p.Out.String() }

// Tail is the last n bytes of the output.
func (p *Proc) Tail(n int) string { return Tail(p.Log(), n) }

// LogDirEnv names the directory where failed tests' worker logs are kept (default: the system's temporary
// directory, under connectd-e2e-logs).
const LogDirEnv = "CONNECTD_E2E_LOGS"

// keepLog logs the tail of the output and writes the whole of it to a file that outlives the test.
func (p *Proc) keepLog(t testing.TB) {
	dir := os.Getenv(LogDirEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "connectd-e2e-logs")
	}
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	path := ""
	if err := os.MkdirAll(dir, 0o755); err == nil {
		if f, err := os.CreateTemp(dir, p.Name+"-*.log"); err == nil {
			_, _ = f.WriteString(p.Log())
			_ = f.Close()
			path = f.Name()
		}
	}
	t.Logf("%s worker log (tail; whole log in %s):\n%s", p.Name, path, p.Tail(6000))
}

// Kill SIGKILLs the process (no shutdown, no final commit) and waits until it is reaped.
func (p *Proc) Kill() {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Stop sends SIGTERM and waits up to timeout for a clean exit; it reports whether the process exited in time.
func (p *Proc) Stop(timeout time.Duration) bool {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Exited is closed when the process has ended, killed or not.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Alive reports whether the process still runs.
func (p *Proc) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Crashed reports whether the process ended without being killed by the test (a panic, a fatal error).
func (p *Proc) Crashed() bool {
	if p.Alive() {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.killed
}

// Properties renders props as a .properties file body, keys sorted.
func Properties(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return b.String()
}

// WriteProperties writes props to path.
func WriteProperties(t testing.TB, path string, props map[string]string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(Properties(props)), 0o644))
}
