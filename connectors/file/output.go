package file

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"
)

// output is the open destination: a file (regular or not) or the worker's standard output.
type output struct {
	f      *os.File
	id     fileID
	stdout bool
}

// fileID tells whether a reopened path is still the file a failed write went to.
type fileID struct {
	dev, ino uint64
	regular  bool
}

// openOutput opens filename for appending, or stdout when it is empty. O_NONBLOCK keeps the open of a
// FIFO without a reader from blocking (it fails with ENXIO instead); Go's poller then parks writes to a
// full pipe rather than failing them.
func openOutput(filename string) (*output, error) {
	if filename == "" {
		return &output{f: os.Stdout, stdout: true}, nil
	}
	f, err := os.OpenFile(filename, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	o := &output{f: f, id: fileID{regular: st.Mode().IsRegular()}}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		o.id.dev, o.id.ino = uint64(sys.Dev), sys.Ino
	}
	return o, nil
}

// isNoReader is the open of a FIFO that no process reads.
func isNoReader(err error) bool { return errors.Is(err, syscall.ENXIO) }

// write writes all of data or returns how much was written. A write blocked on a pipe nobody drains ends
// when ctx does (the worker stopping the task).
func (o *output) write(ctx context.Context, data []byte) (int, error) {
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		_ = o.f.SetWriteDeadline(time.Unix(1, 0)) // only pollable files (pipes) have deadlines
	})
	n, err := o.f.Write(data)
	if !stop() {
		mu.Lock()
		_ = o.f.SetWriteDeadline(time.Time{})
		mu.Unlock()
	}
	return n, err
}

// sync fsyncs regular files; anything else has nothing to sync (fsync fails with EINVAL on pipes and
// character devices such as /dev/null).
func (o *output) sync() error {
	if o.stdout || !o.id.regular {
		return nil
	}
	return o.f.Sync()
}

// close syncs and closes the file (never the worker's standard output); it returns the sync's error first.
func (o *output) close() error {
	if o.stdout {
		return nil
	}
	serr := o.sync()
	cerr := o.f.Close()
	if serr != nil {
		return serr
	}
	return cerr
}
