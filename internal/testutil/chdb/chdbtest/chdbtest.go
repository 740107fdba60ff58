// Package chdbtest shares one chDB engine session per test binary.
//
// chDB runs one engine per process and is heavy to start (a ~566 MB library),
// so tests use Session to get the process-wide session and call Main from
// their TestMain to close it before exit. If libchdb.so is not cached,
// scripts/chdb.sh fetches it; if that fails the test fails (it never skips).
package chdbtest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/connectd/connectd/internal/testutil/chdb"
)

var (
	once    sync.Once
	shared  *chdb.Session
	openErr error
	dbSeq   atomic.Int64
)

// Open returns the shared session, opening it on first use.
func Open() (*chdb.Session, error) {
	once.Do(func() {
		path, err := chdb.LibPath()
		if err != nil {
			openErr = err
			return
		}
		if err := chdb.Load(path); err != nil {
			openErr = err
			return
		}
		shared, openErr = chdb.Open("")
	})
	return shared, openErr
}

// Session returns the shared session or fails the test.
func Session(tb testing.TB) *chdb.Session {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the chDB engine: skipped under -short")
	}
	s, err := Open()
	if err != nil {
		tb.Fatalf("chDB engine unavailable (libchdb.so is fetched by scripts/chdb.sh fetch): %v", err)
	}
	return s
}

// Database creates a fresh database with a unique name derived from the test
// name and returns its name. It is dropped when the test ends.
func Database(tb testing.TB) string {
	tb.Helper()
	s := Session(tb)
	name := fmt.Sprintf("t%d_%s", dbSeq.Add(1), sanitize(tb.Name()))
	if len(name) > 60 {
		name = name[:60]
	}
	MustExec(tb, s, "CREATE DATABASE `"+name+"`")
	tb.Cleanup(func() { _, _ = s.Query("DROP DATABASE IF EXISTS `"+name+"` SYNC", "") })
	return name
}

// MustExec runs sql or fails the test.
func MustExec(tb testing.TB, s *chdb.Session, sql string) {
	tb.Helper()
	if _, err := s.Query(sql, ""); err != nil {
		tb.Fatalf("%v", err)
	}
}

// MustQuery runs sql and returns its TabSeparated output, trimmed.
func MustQuery(tb testing.TB, s *chdb.Session, sql string) string {
	tb.Helper()
	out, err := s.Query(sql, "TabSeparated")
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return strings.TrimRight(string(out), "\n")
}

// Main runs the tests, then closes the shared session and stops the engine
// before the process exits. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Close()
	os.Exit(code)
}

// Close closes the shared session and stops the engine; for a TestMain that does more than Main.
func Close() {
	if shared != nil {
		_ = shared.Close()
		shared = nil
		chdb.Shutdown()
	}
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
