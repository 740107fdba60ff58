package icetable

import (
	"bytes"
	"cmp"
	"os"
	"slices"

	"github.com/connectd/connectd/connect/jsonvalue"
)

// JSONSpills is a task's spill files of upserts buffered as bytes: the one it writes (nil: none
// since the last Drain) and every other file records of its buffer may be in. Its methods are
// called under the task's lock.
type JSONSpills struct {
	Scratch *ScratchFiles // where files come from and go back to
	Dir     string        // where files are made; "": os.TempDir
	Warn    func(error)   // told when a file cannot be made or written: the bytes stay in memory
	cur     *JSONSpill
	files   []*JSONSpill // cur included
	shared  map[string]*jsonvalue.Value
	last    *jsonvalue.Value // the value Shared last returned: the lookup of most records
}

// Current is the file being written, or nil.
func (s *JSONSpills) Current() *JSONSpill { return s.cur }

// Len is how many files records of the buffer may be in.
func (s *JSONSpills) Len() int { return len(s.files) }

func (s *JSONSpills) dir() string {
	if s.Dir != "" {
		return s.Dir
	}
	return os.TempDir()
}

// Shared is the jsonvalue.Value that the records of jv's topic without headers whose bytes are in a
// spill file share: one per topic rather than one per buffered key.
func (s *JSONSpills) Shared(jv *jsonvalue.Value) *jsonvalue.Value {
	if v := s.last; v != nil && v.Topic == jv.Topic {
		return v
	}
	v := s.shared[jv.Topic]
	if v == nil { // a task's values share its one value converter
		v = &jsonvalue.Value{Topic: jv.Topic, Conv: jv.Conv}
		if s.shared == nil {
			s.shared = map[string]*jsonvalue.Value{}
		}
		s.shared[jv.Topic] = v
	}
	s.last = v
	return v
}

// IsShared reports whether v is a value Shared returned.
func (s *JSONSpills) IsShared(v *jsonvalue.Value) bool { return v == s.shared[v.Topic] }

// Buffer buffers a JSON object value of a keyed table as its bytes (rec, without them) in
// bufs[table] through the table's key index x, as the latest of key at version ver: the bytes in
// the current file where they can be written there, else in memory. grew says that the buffer
// took one more record.
func (s *JSONSpills) Buffer(bufs map[string][]Rec, table string, x *KeyIndex, jv *jsonvalue.Value, rec Rec, key []byte, ver any) (grew bool) {
	// a slot only points at a record buffered since the index was last reset (drain, a round given
	// back, a rebalance): the bytes of the record this one takes the place of are no round's
	slot := x.Slot(key)
	buf, at, old, grew := x.Place(bufs[table], rec, slot, ver)
	bufs[table] = buf
	bk := old.Key
	if bk != nil {
		bk.Version = ver // the same key
	} else {
		bk = &BufferedKey{Key: slot.Key(), Version: ver}
	}
	buf[at].Key = bk
	jb := s.Put(jv.Bytes, bk, bufs)
	if jb == nil && len(jv.Headers) == 0 {
		buf[at].JSON = s.Shared(jv) // nothing of the value is in memory
		return grew
	}
	if prev := old.JSON; prev != nil && !s.IsShared(prev) {
		if jb != nil { // most updates of a key are about its size
			jb = append(prev.Bytes[:0], jb...)
		}
		prev.Bytes, prev.Topic, prev.Headers, prev.Conv = jb, jv.Topic, jv.Headers, jv.Conv
		buf[at].JSON = prev
	} else {
		buf[at].JSON = &jsonvalue.Value{Bytes: bytes.Clone(jb), Topic: jv.Topic, Headers: jv.Headers, Conv: jv.Conv}
	}
	return grew
}

// Put writes the bytes b of a record buffered as bytes to the current file and notes where in bk.
// It returns nil when it did, else b, which the record then keeps in memory (no file could be made
// or written: the round reads what it wrote before). bufs are the task's buffered records, which a
// compaction moves.
func (s *JSONSpills) Put(b []byte, bk *BufferedKey, bufs map[string][]Rec) []byte {
	if bk.Spill != nil && bk.Spill == s.cur {
		s.cur.Live -= int64(bk.Len) // the version this one supersedes
	}
	bk.Spill = nil
	if s.cur == nil {
		f, err := NewJSONSpill(s.Scratch, s.dir())
		if err != nil {
			s.Warn(err)
			return b
		}
		s.cur = f
		s.files = append(s.files, f)
	}
	off, err := s.cur.Write(b)
	if err != nil {
		s.Warn(err)
		return b
	}
	bk.Spill, bk.Off, bk.Len = s.cur, off, len(b)
	s.cur.Live += int64(len(b))
	if f := s.cur; f.Size >= SpillCompactAt && f.Size >= SpillCompactRatio*f.Live {
		s.Compact(bufs)
	}
	return nil
}

// Compact copies the bytes of the records of bufs in the current file to a new one, which is
// written from then on, and closes the old one. The records of rounds given back stay in their
// files. On an error the records already copied stay in the new file and the rest in the old, both
// kept until a round commits them.
func (s *JSONSpills) Compact(bufs map[string][]Rec) {
	old := s.cur
	if old.Flush() != nil {
		return // the round that reads the file fails with the error
	}
	f, err := NewJSONSpill(s.Scratch, s.dir())
	if err != nil {
		s.Warn(err)
		return
	}
	s.cur, s.files = f, append(s.files, f)
	var live []*BufferedKey
	for _, recs := range bufs {
		for i := range recs {
			if bk := recs[i].Key; bk != nil && bk.Spill == old {
				live = append(live, bk)
			}
		}
	}
	// in file order: the old file is read through a window of large reads, not a read per record
	slices.SortFunc(live, func(a, b *BufferedKey) int { return cmp.Compare(a.Off, b.Off) })
	w := spillWindow{s: old}
	for _, bk := range live {
		b, err := w.read(bk.Off, bk.Len)
		if err != nil {
			return
		}
		off, err := f.Write(b)
		if err != nil {
			return
		}
		bk.Spill, bk.Off = f, off
		f.Live += int64(bk.Len)
	}
	if f.Flush() != nil {
		return
	}
	old.Close()
	s.files = slices.DeleteFunc(s.files, func(x *JSONSpill) bool { return x == old })
}

// Drain ends the current file and hands over every file: a round reads its records from them.
func (s *JSONSpills) Drain() []*JSONSpill {
	if s.cur != nil {
		s.cur.End()
		s.cur = nil
	}
	files := s.files
	s.files = nil
	return files
}

// GiveBack takes the files of a round given back: its records are buffered again.
func (s *JSONSpills) GiveBack(files []*JSONSpill) {
	s.files = append(s.files, files...)
}

// Close closes every file: no record is read from them any more.
func (s *JSONSpills) Close() {
	for _, f := range s.files {
		f.Close()
	}
	s.cur, s.files = nil, nil
}
