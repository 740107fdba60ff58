package iceberg

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// scratchFiles keeps a task's spool and spill files once their records are committed or dropped,
// open for the next ones. Writing over pages the system already caches for a file costs about a
// third of the CPU of writing a new file (whose pages and disk blocks are allocated as it grows,
// and freed again when it is closed), and a busy task writes every record it buffers to such a
// file. The files have no name (where the system allows it), so nothing outlives the process; the
// disk they take is bounded by scratchKeepBytes besides the files in use. A nil *scratchFiles keeps
// nothing.
type scratchFiles struct {
	mu     sync.Mutex
	free   []*os.File
	sizes  []int64
	held   int64 // bytes of the free files
	closed bool
}

// scratchKeepBytes bounds the bytes of the files a task keeps for reuse.
const scratchKeepBytes = 512 << 20

// create returns a file to write from its start: a kept one, or a new one in dir named after
// pattern (os.CreateTemp). named reports that the system kept the new file's name, which the
// caller then removes when it is done with the file.
func (p *scratchFiles) create(dir, pattern string) (f *os.File, named bool, err error) {
	if p != nil {
		p.mu.Lock()
		if n := len(p.free); n > 0 {
			f = p.free[n-1]
			p.held -= p.sizes[n-1]
			p.free, p.sizes = p.free[:n-1], p.sizes[:n-1]
		}
		p.mu.Unlock()
	}
	if f != nil {
		if _, err := f.Seek(0, io.SeekStart); err == nil {
			return f, false, nil
		}
		_ = f.Close()
	}
	f, err = os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, false, fmt.Errorf("iceberg spool: %w", err)
	}
	// unlinked at once (the open descriptor keeps the data): a spool file must not outlive its
	// process, and a SIGKILL gives no chance to clean up
	return f, os.Remove(f.Name()) != nil, nil
}

// release takes back a file create returned that nothing reads any more: kept for reuse when it
// has no name and fits in scratchKeepBytes, else closed (and its name, when it has one, removed).
// A file whose write failed is not kept.
func (p *scratchFiles) release(f *os.File, named, failed bool) {
	if p != nil && !named && !failed {
		if st, err := f.Stat(); err == nil {
			p.mu.Lock()
			if !p.closed && p.held+st.Size() <= scratchKeepBytes {
				p.free, p.sizes = append(p.free, f), append(p.sizes, st.Size())
				p.held += st.Size()
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
		}
	}
	_ = f.Close()
	if named {
		_ = os.Remove(f.Name())
	}
}

// close closes the kept files; files released afterwards are closed at once.
func (p *scratchFiles) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.free {
		_ = f.Close()
	}
	p.free, p.sizes, p.held, p.closed = nil, nil, 0, true
}
