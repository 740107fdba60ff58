package cdcmodel

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// connectdBinary builds cmd/connectd once per test binary.
func connectdBinary(t *testing.T) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "connectd-cdcmodel")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "connectd")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/connectd")
		cmd.Dir = icebergtest.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/connectd: %v\n%s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// worker is one `connectd standalone` process; its output is kept for failure reports.
type worker struct {
	cmd    *exec.Cmd
	log    *bytes.Buffer
	mu     sync.Mutex
	exited chan struct{} // closed when the process has ended, killed or not
	killed bool
}

func startWorker(t *testing.T, args ...string) *worker {
	cmd := exec.Command(connectdBinary(t), args...)
	var buf bytes.Buffer
	w := &worker{cmd: cmd, log: &buf, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = lockedWriter{w}, lockedWriter{w}
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()
	t.Cleanup(func() {
		w.kill()
		if t.Failed() || os.Getenv("CDC_WORKER_LOG") != "" {
			t.Logf("worker log (tail):\n%s", w.tail(6000))
		}
	})
	return w
}

type lockedWriter struct{ w *worker }

func (l lockedWriter) Write(p []byte) (int, error) {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	return l.w.log.Write(p)
}

func (w *worker) tail(n int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.log.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// kill SIGKILLs the process (no shutdown, no final commit) and waits until it is reaped.
func (w *worker) kill() {
	w.mu.Lock()
	w.killed = true
	w.mu.Unlock()
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

// crashed reports whether the process ended without being killed by the test (a panic, a fatal error).
func (w *worker) crashed() bool {
	select {
	case <-w.exited:
		w.mu.Lock()
		defer w.mu.Unlock()
		return !w.killed
	default:
		return false
	}
}
