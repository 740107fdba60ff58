package reconcile

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"time"
)

// A layer's rows, reduced to what the comparison needs: per key, one hash per compared column, the
// source version and the bucket.
type digest struct {
	cols []mapping
	rows map[string]*digestRow
	// duplicates counts keys seen more than once (a table that is not a current state per key).
	duplicates int
}

type digestRow struct {
	hashes  []uint64
	version string
	bucket  string
}

func newDigest(cols []mapping) *digest {
	return &digest{cols: cols, rows: map[string]*digestRow{}}
}

func hashText(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// add records one row given as canonical texts (one per compared column).
func (d *digest) add(key string, texts []string, version, bucket string) {
	r := &digestRow{hashes: make([]uint64, len(texts)), version: version, bucket: bucket}
	for i, t := range texts {
		r.hashes[i] = hashText(d.cols[i].Name, t)
	}
	if _, dup := d.rows[key]; dup {
		d.duplicates++
	}
	d.rows[key] = r
}

func (r *digestRow) rowHash(key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	var b [8]byte
	for _, x := range r.hashes {
		for i := range b {
			b[i] = byte(x >> (8 * i))
		}
		_, _ = h.Write(b[:])
	}
	_, _ = h.Write([]byte(r.version)) // empty when versions are not compared
	return h.Sum64()
}

// LayerTotals are the order-independent figures of one layer (or one bucket of it).
type LayerTotals struct {
	Rows int64 `json:"rows"`
	// KeyChecksum and RowChecksum are the sums (mod 2^64) of a 64-bit FNV-1a hash of each key and of each
	// whole row (key, compared columns in canonical form, source version when compared): equal sets give
	// equal sums in any order.
	KeyChecksum string `json:"key_checksum"`
	RowChecksum string `json:"row_checksum"`
	MaxVersion  string `json:"max_version,omitempty"`

	keySum, rowSum uint64
}

func (t *LayerTotals) add(key string, r *digestRow) {
	t.Rows++
	t.keySum += hashText(key)
	t.rowSum += r.rowHash(key)
	if versionLess(t.MaxVersion, r.version) {
		t.MaxVersion = r.version
	}
}

func (t *LayerTotals) finish() {
	t.KeyChecksum = fmt.Sprintf("%016x", t.keySum)
	t.RowChecksum = fmt.Sprintf("%016x", t.rowSum)
}

// Bucket compares one partition of the key space or one time bucket.
type Bucket struct {
	Bucket     string      `json:"bucket"`
	Iceberg    LayerTotals `json:"iceberg"`
	ClickHouse LayerTotals `json:"clickhouse"`
	Match      bool        `json:"match"`
}

// Mismatch is one key that differs.
type Mismatch struct {
	Key string `json:"key"`
	// Kind is missing_in_clickhouse, extra_in_clickhouse or different.
	Kind string `json:"kind"`
	// Columns lists the columns that differ (kind different); "version" is the source version.
	Columns []string `json:"columns,omitempty"`
}

// Mismatch kinds.
const (
	MissingInClickHouse = "missing_in_clickhouse"
	ExtraInClickHouse   = "extra_in_clickhouse"
	Different           = "different"
)

// compareDigests computes per-bucket totals and the mismatching keys (all counted, up to maxKeys listed,
// in key order). Keys in skip are left out of both sides.
func compareDigests(lake, serve *digest, maxKeys int, skip map[string]bool) (ice, chT LayerTotals, buckets []Bucket, mism []Mismatch, counts map[string]int) {
	counts = map[string]int{}
	byName := map[string]*Bucket{}
	bucket := func(name string) *Bucket {
		b := byName[name]
		if b == nil {
			b = &Bucket{Bucket: name}
			byName[name] = b
		}
		return b
	}
	var keys []string
	for k, r := range lake.rows {
		if skip[k] {
			continue
		}
		ice.add(k, r)
		bucket(r.bucket).Iceberg.add(k, r)
		o, ok := serve.rows[k]
		switch {
		case !ok:
			counts[MissingInClickHouse]++
			keys = append(keys, k)
		case o.rowHash(k) != r.rowHash(k):
			counts[Different]++
			keys = append(keys, k)
		}
	}
	for k, r := range serve.rows {
		if skip[k] {
			continue
		}
		chT.add(k, r)
		bucket(r.bucket).ClickHouse.add(k, r)
		if _, ok := lake.rows[k]; !ok {
			counts[ExtraInClickHouse]++
			keys = append(keys, k)
		}
	}
	ice.finish()
	chT.finish()
	for _, b := range byName {
		b.Iceberg.finish()
		b.ClickHouse.finish()
		b.Match = b.Iceberg.Rows == b.ClickHouse.Rows && b.Iceberg.keySum == b.ClickHouse.keySum &&
			b.Iceberg.rowSum == b.ClickHouse.rowSum && b.Iceberg.MaxVersion == b.ClickHouse.MaxVersion
		buckets = append(buckets, *b)
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].Bucket < buckets[j].Bucket })
	sort.Strings(keys)
	for _, k := range keys {
		if len(mism) >= maxKeys {
			break
		}
		l, lok := lake.rows[k]
		s, sok := serve.rows[k]
		m := Mismatch{Key: k}
		switch {
		case !sok:
			m.Kind = MissingInClickHouse
		case !lok:
			m.Kind = ExtraInClickHouse
		default:
			m.Kind = Different
			for i, c := range lake.cols {
				if l.hashes[i] != s.hashes[i] {
					m.Columns = append(m.Columns, c.Name)
				}
			}
			if l.version != s.version {
				m.Columns = append(m.Columns, "version")
			}
		}
		mism = append(mism, m)
	}
	return ice, chT, buckets, mism, counts
}

// bucketer names the bucket of a row.
type bucketer struct {
	col     int // index of the bucket column among the compared columns, -1: key hash
	kind    kind
	width   time.Duration
	buckets int
}

func (b bucketer) of(key string, texts []string) string {
	if b.col < 0 {
		return fmt.Sprintf("hash-%03d", hashText(key)%uint64(b.buckets))
	}
	t := texts[b.col]
	if t == nullText {
		return "null"
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return "unparsable"
	}
	var at time.Time
	switch b.kind {
	case kindDate:
		at = time.Unix(n*86400, 0).UTC()
	case kindTimestamp:
		at = time.UnixMicro(n).UTC()
	default:
		return t
	}
	return at.Truncate(b.width).Format(time.RFC3339)
}
