package catalogx

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest" // registers "rest", "http", "https"
	_ "github.com/apache/iceberg-go/catalog/sql"  // registers "sql"
	_ "github.com/jackc/pgx/v5/stdlib"            // database/sql driver "pgx"
	_ "modernc.org/sqlite"                        // database/sql driver "sqlite"
)

// Props translates the sink's `iceberg.catalog.*` properties (prefix stripped), as
// written for the JVM sinks, into iceberg-go catalog properties:
//   - catalog-impl / type: JdbcCatalog|jdbc|sql -> sql, RESTCatalog|rest -> rest,
//     GlueCatalog|glue -> glue, HiveCatalog|hive -> hive, HadoopCatalog|hadoop -> hadoop.
//   - uri jdbc:sqlite:/path -> sqlite (modernc), jdbc:postgresql://h:p/db -> postgres (pgx),
//     with jdbc.user / jdbc.password folded into the DSN; for SQLite, busy_timeout and journal_mode from the
//     URL or jdbc.* as sqlite-jdbc takes them (sqliteDSN).
//   - io-impl and Hadoop-only keys are ignored (iceberg-go picks the FileIO from the location
//     scheme); s3.* / client.* pass through; s3.path-style-access is implied by s3.endpoint.
func Props(in map[string]string) (ice.Properties, error) {
	p := ice.Properties{}
	for k, v := range in {
		p[k] = v
	}
	typ := strings.ToLower(p["type"])
	impl := p["catalog-impl"]
	delete(p, "catalog-impl")
	switch {
	case strings.HasSuffix(impl, "JdbcCatalog"):
		typ = "sql"
	case strings.HasSuffix(impl, "RESTCatalog"):
		typ = "rest"
	case strings.HasSuffix(impl, "GlueCatalog"):
		typ = "glue"
	case strings.HasSuffix(impl, "HiveCatalog"):
		typ = "hive"
	case strings.HasSuffix(impl, "HadoopCatalog"):
		typ = "hadoop"
	}
	uri := p["uri"]
	if typ == "" || typ == "jdbc" {
		switch {
		case strings.HasPrefix(uri, "jdbc:"), strings.HasPrefix(uri, "sqlite:"), strings.HasPrefix(uri, "postgres"), strings.HasPrefix(uri, "file:"):
			typ = "sql"
		case strings.HasPrefix(uri, "http"):
			typ = "rest"
		case strings.HasPrefix(uri, "thrift:"):
			typ = "hive"
		}
	}
	if typ == "" {
		return nil, fmt.Errorf("iceberg.catalog.type (or catalog-impl, or a uri) is required")
	}
	p["type"] = typ
	if typ == "sql" {
		driver, dialect, dsn, err := sqlDSN(uri, p)
		if err != nil {
			return nil, err
		}
		if p["sql.driver"] == "" {
			p["sql.driver"] = driver
		}
		if p["sql.dialect"] == "" {
			p["sql.dialect"] = dialect
		}
		p["uri"] = dsn
		for _, k := range []string{"jdbc.user", "jdbc.password", "jdbc." + sqliteBusyTimeoutKey, "jdbc." + sqliteJournalModeKey} {
			delete(p, k) // the driver's connection properties, folded into the DSN
		}
	}
	delete(p, "io-impl")
	delete(p, "s3.path-style-access")
	if w := p["warehouse"]; w != "" && strings.HasPrefix(w, "/") {
		p["warehouse"] = "file://" + w
	}
	return p, nil
}

// SQLite settings of the catalog: sqlite-jdbc reads them from the JDBC URL's query (`jdbc:sqlite:/path?busy_timeout=5000`)
// or from the JdbcCatalog's `jdbc.*` properties, which it passes to the driver as connection properties.
const (
	sqliteBusyTimeoutKey = "busy_timeout" // milliseconds to wait for a lock another connection holds
	sqliteJournalModeKey = "journal_mode"
	// DefaultSQLiteBusyTimeout bounds the wait for a lock held by another connection or process; past it the
	// operation fails with "database is locked" (SQLITE_BUSY) and the commit round that needed it fails visibly.
	DefaultSQLiteBusyTimeout = 5 * time.Second
)

func sqlDSN(uri string, props ice.Properties) (driver, dialect, dsn string, err error) {
	user, password := props["jdbc.user"], props["jdbc.password"]
	u := strings.TrimPrefix(uri, "jdbc:")
	switch {
	case strings.HasPrefix(u, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(u, "sqlite:"), "//")
		dsn, err := sqliteDSN(path, props)
		return "sqlite", "sqlite", dsn, err
	case strings.HasPrefix(u, "file:"):
		dsn, err := sqliteDSN(strings.TrimPrefix(u, "file:"), props)
		return "sqlite", "sqlite", dsn, err
	case strings.HasPrefix(u, "postgresql:"), strings.HasPrefix(u, "postgres:"):
		pu, perr := url.Parse(strings.Replace(u, "postgresql:", "postgres:", 1))
		if perr != nil {
			return "", "", "", perr
		}
		q := pu.Query()
		if user == "" {
			user = q.Get("user")
		}
		if password == "" {
			password = q.Get("password")
		}
		q.Del("user")
		q.Del("password")
		if user != "" {
			pu.User = url.UserPassword(user, password)
		}
		if q.Get("sslmode") == "" {
			q.Set("sslmode", "disable")
		}
		pu.RawQuery = q.Encode()
		return "pgx", "postgres", pu.String(), nil
	}
	return "", "", "", fmt.Errorf("unsupported SQL catalog uri %q (want jdbc:sqlite:/path or jdbc:postgresql://host/db)", uri)
}

// sqliteDSN is the modernc DSN of a SQLite catalog file that other processes may share (a JVM JdbcCatalog
// through sqlite-jdbc):
//   - the journal mode is left as the file has it: changing it needs the file to itself, and a connection
//     that waits for that holds the PENDING lock, which keeps every other process out while it waits. A
//     journal_mode given in the URL or as jdbc.journal_mode is applied, as sqlite-jdbc applies it;
//   - every lock wait is bounded by busy_timeout (URL or jdbc.busy_timeout, milliseconds; default
//     DefaultSQLiteBusyTimeout), after which the statement fails with SQLITE_BUSY instead of waiting on;
//   - write transactions take the write lock when they begin (read-only ones do not): one that read and
//     then wrote would find the lock taken by another writer and fail at once, where waiting for it is
//     what busy_timeout is for. The other side waits at most for one short transaction of ours.
//
// The URL's other sqlite-jdbc settings are not SQLite pragmas of the catalog and are ignored.
func sqliteDSN(path string, props ice.Properties) (string, error) {
	path, rawQuery, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", fmt.Errorf("SQLite catalog uri: %w", err)
	}
	setting := func(key string) string {
		if v := props["jdbc."+key]; v != "" {
			return v
		}
		return q.Get(key)
	}
	if path != "" && !strings.HasPrefix(path, ":memory:") {
		_ = os.MkdirAll(filepath.Dir(path), 0o755) // SQLite creates the file, not its directory
	}
	busy := DefaultSQLiteBusyTimeout.Milliseconds()
	if v := setting(sqliteBusyTimeoutKey); v != "" {
		ms, err := strconv.ParseInt(v, 10, 32)
		if err != nil || ms < 0 {
			return "", fmt.Errorf("SQLite catalog: %s %q is not a number of milliseconds", sqliteBusyTimeoutKey, v)
		}
		busy = ms
	}
	out := url.Values{}
	out.Set("_busy_timeout", strconv.FormatInt(busy, 10))
	out.Set("_txlock", "immediate")
	if v := setting(sqliteJournalModeKey); v != "" {
		out.Set("_journal_mode", strings.ToUpper(v))
	}
	return "file:" + path + "?" + out.Encode(), nil
}

// Open loads the catalog named name from sink catalog properties.
func Open(ctx context.Context, name string, in map[string]string) (catalog.Catalog, error) {
	p, err := Props(in)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = "iceberg"
	}
	return catalog.Load(ctx, name, p)
}
