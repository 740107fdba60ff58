package icetable

import (
	"bufio"
	"fmt"
)

// JSONSpill is a local file of the bytes of upserts buffered as bytes (JSONSpills.Buffer), so that a
// commit interval's records cost disk and the heap keeps only their keys. A task writes one at a
// time; a drain ends it (flushes it and opens no more writes to it), and the round reads the bytes
// of the records it builds rows for back from it. It is closed once no buffered record is in it:
// when the round that took its records committed; a round given back hands its files back to the
// task with its records.
type JSONSpill struct {
	File scratchFile // unlinked at creation where the system allows it: nothing outlives the process
	Buf  *bufio.Writer
	Size int64
	Live int64 // bytes of records buffered in the file: maintained while the task writes it
	err  error // a failed write or flush: the records in this file cannot be read back
}

// A task's file also holds the superseded versions of its keys: once it is SpillCompactAt and
// SpillCompactRatio times the bytes of its records still buffered, the task copies those to a new
// file (JSONSpills.Compact), so that the disk a commit interval takes is bounded by the keys, not by
// the throughput.
const (
	SpillCompactAt    = 256 << 20
	SpillCompactRatio = 4
)

func NewJSONSpill(files *ScratchFiles, dir string) (*JSONSpill, error) {
	f, err := files.Create(dir, "connectd-iceberg-*.json")
	if err != nil {
		return nil, err
	}
	return &JSONSpill{File: f, Buf: bufio.NewWriterSize(f, spoolIOBuffer)}, nil
}

// Write appends b and returns where it starts.
func (s *JSONSpill) Write(b []byte) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	off := s.Size
	if _, err := s.Buf.Write(b); err != nil {
		s.err = fmt.Errorf("iceberg spool: %w", err)
		return 0, s.err
	}
	s.Size += int64(len(b))
	return off, nil
}

func (s *JSONSpill) Flush() error {
	if s.err == nil {
		if err := s.Buf.Flush(); err != nil {
			s.err = fmt.Errorf("iceberg spool: %w", err)
		}
	}
	return s.err
}

// End flushes the file: from here on it is only read.
func (s *JSONSpill) End() {
	_ = s.Flush()
	s.Buf = nil
}

// Read returns the n bytes at off, in buf when it is large enough. The file must have ended.
func (s *JSONSpill) Read(buf []byte, off int64, n int) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := s.File.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("iceberg spool: reading a buffered record back: %w", err)
	}
	return buf, nil
}

// spillWindowBytes is the size of spillWindow's reads.
const spillWindowBytes = 1 << 20

// spillWindow reads records of an ended file in rising offset order through reads of
// spillWindowBytes.
type spillWindow struct {
	s   *JSONSpill
	buf []byte
	at  int64 // the file offset of buf[0]
}

// read returns the n bytes at off, valid until the next read.
func (w *spillWindow) read(off int64, n int) ([]byte, error) {
	if off >= w.at && off+int64(n) <= w.at+int64(len(w.buf)) {
		return w.buf[off-w.at:][:n], nil
	}
	size := int(max(min(int64(spillWindowBytes), w.s.Size-off), int64(n)))
	b, err := w.s.Read(w.buf, off, size)
	if err != nil {
		return nil, err
	}
	w.buf, w.at = b, off
	return b[:n], nil
}

// Close gives the file back to the task's files: nothing reads it any more.
func (s *JSONSpill) Close() {
	s.File.release(s.err != nil)
}
