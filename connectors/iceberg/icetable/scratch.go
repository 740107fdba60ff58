package icetable

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// ScratchFiles keeps a task's spool and spill files once their records are committed or dropped,
// open for the next ones. Writing over pages the system already caches for a file costs about a
// third of the CPU of writing a new file (whose pages and disk blocks are allocated as it grows,
// and freed again when it is closed), and a busy task writes every record it buffers to such a
// file. The files have no name (where the system allows it), so nothing outlives the process; the
// disk they take is bounded by scratchKeepBytes besides the files in use. A nil *scratchFiles keeps
// nothing.
type ScratchFiles struct {
	mu     sync.Mutex
	Free   []KeptFile
	held   int64 // bytes of the free files
	closed bool
}

type KeptFile struct {
	File *os.File
	size int64
}

// scratchFile is a file create returned, until its release.
type scratchFile struct {
	*os.File
	Named bool // the system kept the file's name: removed when the file is closed
	from  *ScratchFiles
}

// Release gives the file back: nothing reads it any more. A file whose write failed is closed.
func (f scratchFile) release(failed bool) { f.from.Release(f, failed) }

// ScratchKeepBytes bounds the bytes of the files a task keeps for reuse.
const ScratchKeepBytes = 512 << 20

// Create returns a file to write from its start: a kept one, or a new one in dir named after
// pattern (os.CreateTemp), unlinked at once where the system allows it.
func (p *ScratchFiles) Create(dir, pattern string) (scratchFile, error) {
	var kept *os.File
	if p != nil {
		p.mu.Lock()
		if n := len(p.Free); n > 0 {
			kept = p.Free[n-1].File
			p.held -= p.Free[n-1].size
			p.Free = p.Free[:n-1]
		}
		p.mu.Unlock()
	}
	if kept != nil {
		if _, err := kept.Seek(0, io.SeekStart); err == nil {
			return scratchFile{File: kept, from: p}, nil
		}
		_ = kept.Close()
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return scratchFile{}, fmt.Errorf("iceberg spool: %w", err)
	}
	// unlinked at once (the open descriptor keeps the data): a spool file must not outlive its
	// process, and a SIGKILL gives no chance to clean up
	return scratchFile{File: f, Named: os.Remove(f.Name()) != nil, from: p}, nil
}

// Release keeps f for reuse when it has no name, its write did not fail and it fits in
// scratchKeepBytes; else it closes f (and removes its name, when it has one).
func (p *ScratchFiles) Release(f scratchFile, failed bool) {
	if p != nil && !f.Named && !failed {
		if st, err := f.Stat(); err == nil {
			p.mu.Lock()
			if !p.closed && p.held+st.Size() <= ScratchKeepBytes {
				p.Free = append(p.Free, KeptFile{f.File, st.Size()})
				p.held += st.Size()
				p.mu.Unlock()
				return
			}
			p.mu.Unlock()
		}
	}
	_ = f.Close()
	if f.Named {
		_ = os.Remove(f.Name())
	}
}

// Close closes the kept files; files released afterwards are closed at once.
func (p *ScratchFiles) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range p.Free {
		_ = k.File.Close()
	}
	p.Free, p.held, p.closed = nil, 0, true
}
