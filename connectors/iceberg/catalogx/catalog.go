package catalogx

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

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
//     with jdbc.user / jdbc.password folded into the DSN.
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
		driver, dialect, dsn, err := sqlDSN(uri, p["jdbc.user"], p["jdbc.password"])
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
		delete(p, "jdbc.user")
		delete(p, "jdbc.password")
	}
	delete(p, "io-impl")
	delete(p, "s3.path-style-access")
	if w := p["warehouse"]; w != "" && strings.HasPrefix(w, "/") {
		p["warehouse"] = "file://" + w
	}
	return p, nil
}

func sqlDSN(uri, user, password string) (driver, dialect, dsn string, err error) {
	u := strings.TrimPrefix(uri, "jdbc:")
	switch {
	case strings.HasPrefix(u, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(u, "sqlite:"), "//")
		return "sqlite", "sqlite", sqliteDSN(path), nil
	case strings.HasPrefix(u, "file:"):
		return "sqlite", "sqlite", sqliteDSN(strings.TrimPrefix(u, "file:")), nil
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

func sqliteDSN(path string) string {
	if p, _, _ := strings.Cut(path, "?"); p != "" && !strings.HasPrefix(p, ":memory:") {
		_ = os.MkdirAll(filepath.Dir(p), 0o755) // SQLite creates the file, not its directory
	}
	if strings.Contains(path, "?") {
		return "file:" + path
	}
	// Transactions take the write lock when they begin: a deferred one that reads and then writes (a table
	// create or commit) gets SQLITE_BUSY at once in WAL mode when another connection wrote in between, which
	// busy_timeout does not wait out.
	return "file:" + path + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate"
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
