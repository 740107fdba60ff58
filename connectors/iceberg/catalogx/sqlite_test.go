package catalogx_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/catalogx"
)

var testSchema = ice.NewSchema(0, ice.NestedField{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true})

// openSQLite opens the catalog as the sink does, from JVM JdbcCatalog properties.
func openSQLite(t *testing.T, dir, uri string, extra map[string]string) catalog.Catalog {
	t.Helper()
	props := map[string]string{
		"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
		"uri":          uri,
		"warehouse":    filepath.Join(dir, "warehouse"),
	}
	for k, v := range extra {
		props[k] = v
	}
	cat, err := catalogx.Open(context.Background(), "shared", props)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cat.(interface{ Close() error }).Close() })
	return cat
}

// otherWriter opens the same file as a second process would with sqlite-jdbc's defaults: deferred
// transactions, a 3 s busy timeout, the journal mode left alone.
func otherWriter(t *testing.T, dir, file string) (*sql.DB, catalog.Catalog) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+file+"?_busy_timeout=3000")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	cat, err := sqlcat.NewCatalog("shared", db, sqlcat.SQLite, ice.Properties{"warehouse": "file://" + filepath.Join(dir, "warehouse")})
	require.NoError(t, err)
	return db, cat
}

func journalMode(t *testing.T, file string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+file)
	require.NoError(t, err)
	defer db.Close()
	var mode string
	require.NoError(t, db.QueryRow("pragma journal_mode").Scan(&mode))
	return strings.ToLower(mode)
}

func createTable(t *testing.T, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, catalog.ToIdentifier("db"), nil); err != nil {
		require.ErrorIs(t, err, catalog.ErrNamespaceAlreadyExists)
	}
	tbl, err := cat.CreateTable(ctx, catalog.ToIdentifier("db", name), testSchema)
	require.NoError(t, err)
	return tbl
}

// commitProperty makes one metadata-only commit (a property change) on the table's current head.
func commitProperty(ctx context.Context, cat catalog.Catalog, name string, i int) error {
	tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier("db", name))
	if err != nil {
		return err
	}
	txn := tbl.NewTransaction()
	if err := txn.SetProperties(ice.Properties{"round": fmt.Sprint(i)}); err != nil {
		return err
	}
	_, err = txn.Commit(ctx)
	return err
}

func isLocked(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "database is locked") || strings.Contains(err.Error(), "SQLITE_BUSY"))
}

// TestSQLiteCatalogKeepsJournalMode: opening and committing leave the file's journal mode (the one a file
// keeps: rollback or WAL) as another process set it; a journal_mode the URL asks for is applied, as
// sqlite-jdbc applies it.
func TestSQLiteCatalogKeepsJournalMode(t *testing.T) {
	for _, mode := range []string{"delete", "wal"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "catalog.db")
			db, err := sql.Open("sqlite", "file:"+file)
			require.NoError(t, err)
			_, err = db.Exec("pragma journal_mode = " + mode)
			require.NoError(t, err)
			require.NoError(t, db.Close())

			cat := openSQLite(t, dir, "jdbc:sqlite:"+file, nil)
			createTable(t, cat, "t")
			require.NoError(t, commitProperty(context.Background(), cat, "t", 1))
			require.Equal(t, mode, journalMode(t, file))
		})
	}
	t.Run("asked", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "catalog.db")
		cat := openSQLite(t, dir, "jdbc:sqlite:"+file+"?journal_mode=WAL&foreign_keys=on", nil)
		createTable(t, cat, "t")
		require.Equal(t, "wal", journalMode(t, file))
	})
	t.Run("new file", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "sub", "catalog.db")
		cat := openSQLite(t, dir, "jdbc:sqlite:"+file, nil)
		createTable(t, cat, "t")
		require.Equal(t, "delete", journalMode(t, file)) // SQLite's default, what sqlite-jdbc creates too
	})
}

func TestSQLiteCatalogBusyTimeoutSetting(t *testing.T) {
	dir := t.TempDir()
	_, err := catalogx.Open(context.Background(), "x", map[string]string{
		"catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog", "uri": "jdbc:sqlite:" + filepath.Join(dir, "c.db"),
		"warehouse": dir, "jdbc.busy_timeout": "soon",
	})
	require.ErrorContains(t, err, `busy_timeout "soon" is not a number of milliseconds`)
	p, err := catalogx.Props(map[string]string{"uri": "jdbc:sqlite:" + filepath.Join(dir, "c.db") + "?busy_timeout=250", "jdbc.journal_mode": "wal"})
	require.NoError(t, err)
	require.Contains(t, p["uri"], "_busy_timeout=250")
	require.Contains(t, p["uri"], "_journal_mode=WAL")
	require.NotContains(t, p, "jdbc.journal_mode")
	p, err = catalogx.Props(map[string]string{"uri": "jdbc:sqlite:" + filepath.Join(dir, "c.db")})
	require.NoError(t, err)
	require.Contains(t, p["uri"], fmt.Sprintf("_busy_timeout=%d", catalogx.DefaultSQLiteBusyTimeout.Milliseconds()))
	require.NotContains(t, p["uri"], "journal_mode")
}

// TestSQLiteCatalogLockedFailsVisibly: another process holding a transaction on the file past the busy
// timeout (a read transaction keeps a commit from finishing, a write transaction keeps it from starting)
// makes the commit fail with the lock error within about the timeout, not wait on; once it ends, commits
// go through.
func TestSQLiteCatalogLockedFailsVisibly(t *testing.T) {
	for _, hold := range []string{"read", "write"} {
		t.Run(hold, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "catalog.db")
			cat := openSQLite(t, dir, "jdbc:sqlite:"+file, map[string]string{"jdbc.busy_timeout": "300"})
			createTable(t, cat, "t")
			other, _ := otherWriter(t, dir, file)
			ctx := context.Background()
			conn, err := other.Conn(ctx)
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.ExecContext(ctx, "begin")
			require.NoError(t, err)
			if hold == "read" {
				var n int
				require.NoError(t, conn.QueryRowContext(ctx, "select count(*) from iceberg_tables").Scan(&n))
			} else {
				_, err = conn.ExecContext(ctx, "update iceberg_tables set previous_metadata_location = previous_metadata_location")
				require.NoError(t, err)
			}

			start := time.Now()
			err = commitProperty(ctx, cat, "t", 1)
			took := time.Since(start)
			require.Error(t, err)
			require.True(t, isLocked(err), "want the lock error, got %v", err)
			require.GreaterOrEqual(t, took, 250*time.Millisecond)
			require.Less(t, took, 5*time.Second, "the commit waited past its busy timeout")

			_, err = conn.ExecContext(ctx, "rollback")
			require.NoError(t, err)
			require.NoError(t, commitProperty(ctx, cat, "t", 2))
		})
	}
}

// TestSQLiteCatalogTwoWriters: connectd and a second process (sqlite-jdbc's defaults) commit to one
// catalog file in a loop while a third connection keeps taking short read transactions, the way a JVM
// JdbcCatalog reads table metadata locations. Both writers make progress; a commit that fails does so
// with the lock error, within its busy timeout.
func TestSQLiteCatalogTwoWriters(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "catalog.db")
	ours := openSQLite(t, dir, "jdbc:sqlite:"+file, map[string]string{"jdbc.busy_timeout": "2000"})
	createTable(t, ours, "ours")
	otherDB, theirs := otherWriter(t, dir, file)
	createTable(t, theirs, "theirs")

	run := 3 * time.Second
	if testing.Short() {
		run = 1500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	var wg sync.WaitGroup
	type result struct {
		ok, failed atomic.Int64
		slowest    atomic.Int64
		otherErr   atomic.Pointer[error]
	}
	var rs [2]result
	writer := func(r *result, cat catalog.Catalog, name string) {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			start := time.Now()
			err := commitProperty(context.Background(), cat, name, i)
			if d := int64(time.Since(start)); d > r.slowest.Load() {
				r.slowest.Store(d)
			}
			switch {
			case err == nil:
				r.ok.Add(1)
			case isLocked(err):
				r.failed.Add(1)
			default:
				r.otherErr.Store(&err)
				return
			}
		}
	}
	wg.Add(3)
	go writer(&rs[0], ours, "ours")
	go writer(&rs[1], theirs, "theirs")
	go func() { // the reader: short read transactions, back to back
		defer wg.Done()
		for ctx.Err() == nil {
			tx, err := otherDB.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
			if err != nil {
				continue
			}
			var n int
			_ = tx.QueryRow("select count(*) from iceberg_tables").Scan(&n)
			time.Sleep(5 * time.Millisecond)
			_ = tx.Rollback()
		}
	}()
	wg.Wait()
	for i, name := range []string{"connectd", "other process"} {
		r := &rs[i]
		if e := r.otherErr.Load(); e != nil {
			t.Fatalf("%s: commit failed with an error that is not the lock error: %v", name, *e)
		}
		t.Logf("%s: %d commits, %d lock failures, slowest %v", name, r.ok.Load(), r.failed.Load(), time.Duration(r.slowest.Load()))
		require.GreaterOrEqual(t, r.ok.Load(), int64(3), "%s made no progress", name)
		require.Less(t, time.Duration(r.slowest.Load()), 3*time.Second+2*time.Second, "%s: a commit waited past its busy timeout", name)
	}
	require.Equal(t, "delete", journalMode(t, file))
}
