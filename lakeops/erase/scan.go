package erase

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// needles are the keys looked for in files: per key, one matcher per key column value. A row holds a
// key when each of its matchers matches a cell of the row.
type needles [][]matcher

// FileHit is a file that holds one of the keys.
type FileHit struct {
	Path string `json:"path"`
	// Reach says how a reader gets to it: "live" (the current snapshot), "snapshot" (an older snapshot,
	// time travel) or "unreferenced" (no snapshot; anyone reading the storage).
	Reach string `json:"reach"`
	Rows  int    `json:"rows,omitempty"` // rows holding a key (Parquet files)
}

// normPath makes local paths comparable whatever their scheme spelling.
func normPath(p string) string {
	for _, pfx := range []string{"file://", "file:"} {
		if strings.HasPrefix(p, pfx) {
			return strings.TrimPrefix(p, pfx)
		}
	}
	return p
}

// references lists every file a snapshot of tbl references (manifest lists, manifests, data and delete
// files), and apart those the current snapshot references.
func references(ctx context.Context, tbl *table.Table) (all, live map[string]bool, err error) {
	all, live = map[string]bool{}, map[string]bool{}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	cur := tbl.CurrentSnapshot()
	for _, s := range tbl.Metadata().Snapshots() {
		isLive := cur != nil && s.SnapshotID == cur.SnapshotID
		add := func(p string) {
			all[normPath(p)] = true
			if isLive {
				live[normPath(p)] = true
			}
		}
		add(s.ManifestList)
		ms, err := s.Manifests(fsys)
		if err != nil {
			return nil, nil, fmt.Errorf("manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range ms {
			add(m.FilePath())
			for e, err := range m.Entries(fsys, true) {
				if err != nil {
					return nil, nil, fmt.Errorf("manifest %s: %w", m.FilePath(), err)
				}
				add(e.DataFile().FilePath())
			}
		}
	}
	return all, live, nil
}

// scanLocation reads every file under the table's location: Parquet files (data and delete files, live
// or not) row by row, manifests as bytes (their column bounds hold values) for string keys. It returns
// the files holding one of the keys and how many files it read.
func scanLocation(ctx context.Context, tbl *table.Table, nd needles) ([]FileHit, int, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, 0, err
	}
	lfs, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return nil, 0, fmt.Errorf("the storage of %s cannot be listed: the files cannot be verified", tbl.Location())
	}
	all, live, err := references(ctx, tbl)
	if err != nil {
		return nil, 0, err
	}
	hits := []FileHit{}
	read := 0
	err = lfs.WalkDir(tbl.Location(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var rows int
		switch {
		case strings.HasSuffix(path, ".parquet"):
			rows, err = parquetRows(ctx, fsys, path, nd)
		case strings.HasSuffix(path, ".avro"):
			rows, err = rawHolds(fsys, path, nd)
		default:
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		read++
		if rows > 0 {
			h := FileHit{Path: path, Reach: "unreferenced"}
			if strings.HasSuffix(path, ".parquet") {
				h.Rows = rows
			}
			switch p := normPath(path); {
			case live[p]:
				h.Reach = "live"
			case all[p]:
				h.Reach = "snapshot"
			}
			hits = append(hits, h)
		}
		return nil
	})
	sort.Slice(hits, func(i, j int) bool { return hits[i].Path < hits[j].Path })
	return hits, read, err
}

// parquetRows counts the rows of a Parquet file that hold one of the keys, over every column.
func parquetRows(ctx context.Context, fsys icebergio.IO, path string, nd needles) (int, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return 0, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return 0, err
	}
	defer rr.Release()
	n := 0
	for rr.Next() {
		n += batchRows(rr.RecordBatch(), nd)
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	return n, nil
}

func batchRows(rec arrow.RecordBatch, nd needles) int {
	cols := rec.Columns()
	n := 0
	found := make([][]bool, len(nd))
	for i := range nd {
		found[i] = make([]bool, len(nd[i]))
	}
	for r := 0; r < int(rec.NumRows()); r++ {
		for i := range found {
			clear(found[i])
		}
		for _, c := range cols {
			if c.IsNull(r) {
				continue
			}
			cell := cellText(c, r)
			for i, ms := range nd {
				for j, m := range ms {
					if !found[i][j] && m.in(cell) {
						found[i][j] = true
					}
				}
			}
		}
		for i := range found {
			all := true
			for _, ok := range found[i] {
				all = all && ok
			}
			if all {
				n++
				break
			}
		}
	}
	return n
}

func cellText(c arrow.Array, r int) string {
	switch a := c.(type) {
	case *array.String:
		return a.Value(r)
	case *array.LargeString:
		return a.Value(r)
	case *array.Binary:
		return string(a.Value(r))
	}
	return c.ValueStr(r)
}

// rawHolds tells whether a file's bytes hold a string key's values (column bounds in manifests).
func rawHolds(fsys icebergio.IO, path string, nd needles) (int, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	s := string(b)
	for _, ms := range nd {
		all := true
		for _, m := range ms {
			if m.num != nil || len(m.value) < 4 {
				all = false // a short or numeric value is found by chance in binary data
				break
			}
			all = all && strings.Contains(s, m.value)
		}
		if all {
			return 1, nil
		}
	}
	return 0, nil
}
