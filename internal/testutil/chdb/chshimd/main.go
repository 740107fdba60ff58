// Command chshimd runs the chshim TEST SHIM as a process, for the local demo of the whole pipeline
// (scripts/demo-pipeline.sh): the real ClickHouse engine (chDB, libchdb.so from npm) behind the shim's
// subset of the native TCP protocol, plus the query part of ClickHouse's HTTP interface
// (`curl 'http://127.0.0.1:8123/' --data-binary 'SELECT ...'`), so that the same commands work against a
// ClickHouse server.
//
// It is test infrastructure, NOT a ClickHouse server and not part of connectd: no authentication, no
// query cancellation, loopback addresses only. connectd speaks the native protocol to whatever server
// it is pointed at; this one stands in for a server on a machine that has none.
//
//	go run ./internal/testutil/chdb/chshimd -native 127.0.0.1:9000 -http 127.0.0.1:8123 -data dev-data/clickhouse
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/connectd/connectd/internal/testutil/chdb"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

func main() {
	native := flag.String("native", "127.0.0.1:9000", "native-protocol listener (loopback only)")
	httpAddr := flag.String("http", "127.0.0.1:8123", "HTTP query listener (loopback only; empty: none)")
	data := flag.String("data", "chdb-data", "the engine's data directory (kept across runs)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("chshimd: ")
	if err := run(*native, *httpAddr, *data); err != nil {
		log.Fatal(err)
	}
}

func run(native, httpAddr, data string) error {
	data, err := filepath.Abs(data)
	if err != nil {
		return err
	}
	lib, err := chdb.LibPath()
	if err != nil {
		return err
	}
	if err := chdb.Load(lib); err != nil {
		return err
	}
	engine, err := chdb.Open(data)
	if err != nil {
		return err
	}
	defer engine.Close()
	srv := chshim.New(engine)
	if err := srv.Listen(native, nil); err != nil {
		return fmt.Errorf("native listener: %w", err)
	}
	defer srv.Close()
	log.Printf("ClickHouse %s (chDB) on %s, native protocol (test shim) on %s", chdb.Version(), data, srv.Addr())
	var hs *http.Server
	if httpAddr != "" {
		if err := loopback(httpAddr); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", httpAddr)
		if err != nil {
			return fmt.Errorf("http listener: %w", err)
		}
		hs = &http.Server{Handler: queryHandler(engine), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		log.Printf("HTTP queries on http://%s/", ln.Addr())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	if hs != nil {
		_ = hs.Close()
	}
	return nil
}

func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address", addr)
	}
	return nil
}

// queryHandler answers like ClickHouse's HTTP interface for queries: the statement is the `query`
// parameter and/or the body (joined by a newline), `database` selects the database, the output is
// TabSeparated unless the statement says FORMAT, and an error is a 500 with the engine's message.
func queryHandler(engine *chdb.Session) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		q := strings.TrimSpace(strings.Join(nonEmpty(r.URL.Query().Get("query"), string(body)), "\n"))
		if q == "" {
			_, _ = io.WriteString(w, "Ok.\n")
			return
		}
		// a connection of its own, so that USE applies to this query only
		sess, err := chdb.OpenWith(engine.Path())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer sess.Close()
		if db := r.URL.Query().Get("database"); db != "" {
			if _, err := sess.Query("USE `"+strings.ReplaceAll(db, "`", "\\`")+"`", ""); err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
		}
		out, err := sess.Query(q, "TabSeparated")
		if err != nil {
			var ce *chdb.Error
			msg := err.Error()
			if errors.As(err, &ce) {
				msg = ce.Message
			}
			http.Error(w, msg, http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(out)
	})
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
