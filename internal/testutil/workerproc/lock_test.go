package workerproc

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A test process that starts while another runs the binary (holding the shared lock for its whole life) gets the
// binary at once: it waits for a build at most, never for the other process to end.
func TestLockAndBuildDoesNotWaitForUsers(t *testing.T) {
	dir := t.TempDir()
	build := func(out string) error { return os.WriteFile(out, []byte("bin"), 0o755) }
	bin, err := lockAndBuild(dir, build)
	require.NoError(t, err)

	// another process using the binary: its own open file description with a shared lock
	other, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, syscall.Flock(int(other.Fd()), syscall.LOCK_SH))

	done := make(chan string, 1)
	go func() {
		b, err := lockAndBuild(dir, func(string) error { return os.ErrExist })
		if err != nil {
			b = err.Error()
		}
		done <- b
	}()
	select {
	case got := <-done:
		require.Equal(t, bin, got)
	case <-time.After(10 * time.Second):
		t.Fatal("a second user waited for the first to end")
	}

	// a build in progress makes a newcomer wait, then it takes the built binary
	require.NoError(t, os.Remove(bin))
	building, err := os.OpenFile(filepath.Join(dir, "build.lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(building.Fd()), syscall.LOCK_EX))
	go func() {
		b, err := lockAndBuild(dir, func(string) error { return os.ErrExist })
		if err != nil {
			b = err.Error()
		}
		done <- b
	}()
	select {
	case got := <-done:
		t.Fatalf("did not wait for the build in progress: %s", got)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, os.WriteFile(bin, []byte("bin"), 0o755))
	building.Close()
	select {
	case got := <-done:
		require.Equal(t, bin, got)
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting after the build ended")
	}
}
