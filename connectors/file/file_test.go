package file

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

func records(topic string, from int64, values ...string) []*connect.SinkRecord {
	out := make([]*connect.SinkRecord, len(values))
	for i, v := range values {
		out[i] = &connect.SinkRecord{Topic: topic, Partition: 0, Offset: from + int64(i), Value: v}
	}
	return out
}

func start(t *testing.T, file string) *Task {
	t.Helper()
	task := &Task{}
	require.NoError(t, task.Start(map[string]string{"file": file}))
	t.Cleanup(func() { _ = task.Stop() })
	return task
}

// limitFileSize makes writes beyond size bytes of any file fail with EFBIG (a full disk, per file).
func limitFileSize(t *testing.T, orig syscall.Rlimit, size uint64) {
	t.Helper()
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: size, Max: orig.Max}))
}

// Model: random batches, writes failing at random byte positions (RLIMIT_FSIZE), the file sometimes
// rotated away between the failure and the worker's redelivery of the batch. Every value must end up in
// the files exactly once, in order; only a rotated-away file may end with a torn line, which the new file
// repeats in full.
func TestPutResumesAfterFailedWrites(t *testing.T) {
	var orig syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &orig))
	signal.Ignore(syscall.SIGXFSZ)
	t.Cleanup(func() {
		_ = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &orig)
		signal.Reset(syscall.SIGXFSZ)
	})
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	totalFailures, totalRotations := 0, 0
	defer func() { t.Logf("%d failed writes, %d rotations", totalFailures, totalRotations) }()
	for iter := 0; iter < 40; iter++ {
		dir := t.TempDir()
		path := filepath.Join(dir, "out.txt")
		task := start(t, path)
		var want strings.Builder
		var rotated []string
		var offset int64
		failures := 0
		for b := 0; b < 25; b++ {
			values := make([]string, 1+rng.IntN(12))
			for i := range values {
				values[i] = fmt.Sprintf("i%d-b%d-r%d-%s", iter, b, i, strings.Repeat("x", rng.IntN(40)))
				want.WriteString(values[i] + "\n")
			}
			batch := records("t", offset, values...)
			offset += int64(len(values))
			if rng.IntN(3) > 0 {
				require.NoError(t, task.Put(context.Background(), batch), "seed %d", seed)
				continue
			}
			st, _ := os.Stat(path)
			var size int64
			if st != nil {
				size = st.Size()
			}
			n := 0
			for _, v := range values {
				n += len(v) + 1
			}
			limitFileSize(t, orig, uint64(size)+uint64(rng.IntN(n)))
			err := task.Put(context.Background(), batch)
			require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &orig))
			require.Error(t, err, "seed %d", seed)
			require.True(t, connect.IsRetriable(err), "seed %d: %v", seed, err)
			failures++
			if rng.IntN(3) == 0 {
				old := filepath.Join(dir, fmt.Sprintf("out.%d.txt", len(rotated)))
				require.NoError(t, os.Rename(path, old))
				rotated = append(rotated, old)
			}
			require.NoError(t, task.Put(context.Background(), batch), "seed %d", seed)
			if rng.IntN(4) == 0 {
				require.NoError(t, task.Flush(context.Background(), nil))
			}
		}
		require.NoError(t, task.Flush(context.Background(), nil))
		var got strings.Builder
		for _, f := range rotated {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			s := string(b)
			got.WriteString(s[:strings.LastIndexByte(s, '\n')+1]) // a torn last line is repeated in the next file
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		got.Write(b)
		require.Equal(t, want.String(), got.String(), "seed %d, iteration %d, %d failures, %d rotations", seed, iter, failures, len(rotated))
		totalFailures, totalRotations = totalFailures+failures, totalRotations+len(rotated)
	}
}

// A failed write of one batch followed by a different batch (a rewind or a rebalance in between) writes
// the new batch whole; the unwritten rest of the old one is dropped (its records are redelivered).
func TestPutDifferentBatchAfterFailure(t *testing.T) {
	var orig syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &orig))
	signal.Ignore(syscall.SIGXFSZ)
	t.Cleanup(func() {
		_ = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &orig)
		signal.Reset(syscall.SIGXFSZ)
	})
	path := filepath.Join(t.TempDir(), "out.txt")
	task := start(t, path)
	limitFileSize(t, orig, 3)
	err := task.Put(context.Background(), records("t", 10, "abcdef", "gh"))
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &orig))
	require.True(t, connect.IsRetriable(err))
	require.NoError(t, task.Put(context.Background(), records("t", 5, "x", "y")))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "abcx\ny\n", string(b))
}

func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	return p
}

// readLines reads lines from a FIFO until n were read, then closes its end.
func readLines(t *testing.T, path string, n int) <-chan []string {
	ch := make(chan []string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			ch <- nil
			return
		}
		var lines []string
		sc := bufio.NewScanner(f)
		for len(lines) < n && sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
		ch <- lines
	}()
	return ch
}

// The reader of a FIFO goes away: the put fails with a retriable error, puts keep failing (without
// blocking) while nobody reads, and once a new reader opens the FIFO the batch is written to it from a
// line start, and the following batches too.
func TestFIFOReaderGoesAwayAndComesBack(t *testing.T) {
	fifo := mkfifo(t)
	task := start(t, fifo) // no reader yet: start does not block
	err := task.Put(context.Background(), records("t", 0, "a0"))
	require.True(t, connect.IsRetriable(err), "no reader yet: %v", err)

	first := readLines(t, fifo, 2)
	require.Eventually(t, func() bool { return task.Put(context.Background(), records("t", 0, "a0")) == nil },
		10*time.Second, 10*time.Millisecond)
	require.NoError(t, task.Put(context.Background(), records("t", 1, "a1")))
	assert.Equal(t, []string{"a0", "a1"}, <-first)

	// The reader has closed: writes fail with EPIPE (SIGPIPE is not fatal for files other than stdout).
	batch := records("t", 2, "b2", "b3", "b4")
	err = task.Put(context.Background(), batch)
	require.Error(t, err)
	require.True(t, connect.IsRetriable(err), "%v", err)
	assert.Contains(t, err.Error(), "broken pipe")
	require.NoError(t, task.Flush(context.Background(), nil), "nothing to sync on a FIFO")
	err = task.Put(context.Background(), batch)
	require.True(t, connect.IsRetriable(err), "still no reader: %v", err)

	second := readLines(t, fifo, 4)
	require.Eventually(t, func() bool { return task.Put(context.Background(), batch) == nil }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, task.Put(context.Background(), records("t", 5, "c5")))
	require.NoError(t, task.Flush(context.Background(), nil))
	assert.Equal(t, []string{"b2", "b3", "b4", "c5"}, <-second)
}

// /dev/null is a character device: fsync fails on it with EINVAL, so commits must not sync it.
func TestDevNullFlushes(t *testing.T) {
	task := start(t, "/dev/null")
	for i := 0; i < 3; i++ {
		require.NoError(t, task.Put(context.Background(), records("t", int64(i), "v")))
		require.NoError(t, task.Flush(context.Background(), nil))
	}
}

// /dev/full fails every write with ENOSPC: a retriable error every time, never a wedged task.
func TestDevFullIsRetriable(t *testing.T) {
	task := start(t, "/dev/full")
	batch := records("t", 0, "v1", "v2")
	for i := 0; i < 3; i++ {
		err := task.Put(context.Background(), batch)
		require.True(t, connect.IsRetriable(err), "%v", err)
		assert.Contains(t, err.Error(), "no space left on device")
	}
	require.NoError(t, task.Flush(context.Background(), nil))
}

func TestStartFailsOnUnwritablePath(t *testing.T) {
	task := &Task{}
	err := task.Start(map[string]string{"file": t.TempDir()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "couldn't find or create file '")
}

// A write blocked on a FIFO nobody drains ends when the worker stops the task.
func TestBlockedWriteEndsWithContext(t *testing.T) {
	fifo := mkfifo(t)
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer r.Close()
	task := start(t, fifo)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	big := strings.Repeat("x", 1<<20)
	go func() { done <- task.Put(ctx, records("t", 0, big)) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.True(t, connect.IsRetriable(err))
	case <-time.After(30 * time.Second):
		t.Fatal("put still blocked after its context ended")
	}
}
