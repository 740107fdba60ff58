package iceberg_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
)

// killInsideCommit kills a worker process while it is inside a table commit: its data files,
// manifests and new table metadata are written and the catalog does not point at them yet.
//
// It holds the write lock of the SQLite catalog database (an immediate transaction, as a second
// writer would), so a catalog commit blocks in its UPDATE while reads go on (WAL). A table
// metadata file that appears in the warehouse while the lock is held belongs to a commit that
// is blocked right there: the SQL catalog writes the metadata file first and then updates the
// table's row. kill is called at that moment, before the lock is released. It reports false,
// without calling kill, when no commit reached the catalog within wait.
func killInsideCommit(t *testing.T, catDB, warehouse string, wait time.Duration, kill func()) bool {
	t.Helper()
	props, err := catalogx.Props(map[string]string{"uri": "jdbc:sqlite:" + catDB})
	require.NoError(t, err)
	db, err := sql.Open("sqlite", props["uri"])
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil) // _txlock=immediate: the write lock is taken here
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()

	before := metadataFiles(t, warehouse)
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		for f := range metadataFiles(t, warehouse) {
			if !before[f] {
				kill()
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// metadataFiles lists the table metadata files (*.metadata.json) under the warehouse.
func metadataFiles(t *testing.T, warehouse string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(warehouse, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a directory being created or a file being renamed
		}
		if !d.IsDir() && strings.HasSuffix(path, ".metadata.json") {
			out[path] = true
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
