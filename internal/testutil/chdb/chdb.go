// Package chdb loads the real ClickHouse engine (chDB's libchdb.so) into the Go
// process without cgo, through github.com/ebitengine/purego, and exposes a
// small binary-safe session API on top of chDB's stable C API
// (chdb_connect / chdb_query_n / chdb_stream_insert_n / chdb_close_conn).
//
// It exists to test the ClickHouse sink against the real engine: chDB runs
// ClickHouse's storage and query engine in-process (no network listener).
// The library is fetched from npm by scripts/chdb.sh and is never committed.
//
// chDB allows one engine (one data path) per process; all sessions of a
// process must share the data path of the first one.
package chdb

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// C API function pointers, bound once by Load.
var (
	fnConnect           func(argc int, argv **byte) *uintptr
	fnCloseConn         func(conn *uintptr)
	fnQueryN            func(conn uintptr, query *byte, queryLen uintptr, format *byte, formatLen uintptr) uintptr
	fnResultBuffer      func(res uintptr) *byte
	fnResultLength      func(res uintptr) uintptr
	fnResultError       func(res uintptr) *byte
	fnResultRowsRead    func(res uintptr) uint64
	fnResultRowsWritten func(res uintptr) uint64
	fnDestroyResult     func(res uintptr)
	fnStreamInsertN     func(conn uintptr, query *byte, queryLen uintptr, format *byte, formatLen uintptr) uintptr
	fnStreamAppend      func(stream uintptr, data *byte, n uintptr) int32
	fnStreamDone        func(stream uintptr) uintptr
	fnStreamInsertError func(stream uintptr) *byte
	fnDestroyInsert     func(stream uintptr)
	fnVersion           func() *byte
	fnSignalHandlers    func(enabled int32)
	fnShutdown          func() int32
)

var (
	loadOnce sync.Once
	loadErr  error
)

// Load dlopens libchdb.so at path (once per process) and binds the C API.
// Later calls with a different path return the first result.
func Load(path string) error {
	loadOnce.Do(func() {
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = fmt.Errorf("chdb: dlopen %s: %w", path, err)
			return
		}
		defer func() {
			if r := recover(); r != nil {
				loadErr = fmt.Errorf("chdb: binding C API of %s: %v", path, r)
			}
		}()
		purego.RegisterLibFunc(&fnConnect, h, "chdb_connect")
		purego.RegisterLibFunc(&fnCloseConn, h, "chdb_close_conn")
		purego.RegisterLibFunc(&fnQueryN, h, "chdb_query_n")
		purego.RegisterLibFunc(&fnResultBuffer, h, "chdb_result_buffer")
		purego.RegisterLibFunc(&fnResultLength, h, "chdb_result_length")
		purego.RegisterLibFunc(&fnResultError, h, "chdb_result_error")
		purego.RegisterLibFunc(&fnResultRowsRead, h, "chdb_result_rows_read")
		purego.RegisterLibFunc(&fnResultRowsWritten, h, "chdb_result_rows_written")
		purego.RegisterLibFunc(&fnDestroyResult, h, "chdb_destroy_query_result")
		purego.RegisterLibFunc(&fnStreamInsertN, h, "chdb_stream_insert_n")
		purego.RegisterLibFunc(&fnStreamAppend, h, "chdb_stream_append")
		purego.RegisterLibFunc(&fnStreamDone, h, "chdb_stream_done")
		purego.RegisterLibFunc(&fnStreamInsertError, h, "chdb_stream_insert_error")
		purego.RegisterLibFunc(&fnDestroyInsert, h, "chdb_destroy_insert_stream")
		purego.RegisterLibFunc(&fnVersion, h, "chdb_version")
		purego.RegisterLibFunc(&fnSignalHandlers, h, "chdb_set_signal_handlers_enabled")
		purego.RegisterLibFunc(&fnShutdown, h, "chdb_shutdown")
		// The Go runtime owns the process's signal handlers (SIGSEGV for nil
		// checks, SIGURG for preemption...): keep ClickHouse's away.
		fnSignalHandlers(0)
	})
	return loadErr
}

// Version returns chdb_version() of the loaded library.
func Version() string {
	if fnVersion == nil {
		return ""
	}
	return cString(fnVersion())
}

// LibPath finds libchdb.so: $CHDB_LIB_PATH if set, otherwise it runs
// `scripts/chdb.sh fetch` from the enclosing module (found by walking up from
// the working directory), which downloads it once into the cache.
func LibPath() (string, error) {
	if p := os.Getenv("CHDB_LIB_PATH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("chdb: CHDB_LIB_PATH=%s: %w", p, err)
		}
		return p, nil
	}
	script, err := findScript()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", script, "fetch")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("chdb: %s fetch failed: %v: %s", script, err, stderr.String())
	}
	p := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(p, '\n'); i >= 0 {
		p = p[i+1:]
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("chdb: %s fetch printed %q: %w", script, p, err)
	}
	return p, nil
}

func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		s := filepath.Join(dir, "scripts", "chdb.sh")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(s); err == nil {
				return s, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("chdb: scripts/chdb.sh not found above the working directory; set CHDB_LIB_PATH")
		}
		dir = parent
	}
}

// Error is an error reported by the engine for one statement.
type Error struct {
	Query   string
	Message string
}

func (e *Error) Error() string {
	q := e.Query
	if len(q) > 200 {
		q = q[:200] + "..."
	}
	return fmt.Sprintf("chdb: %s (query: %s)", strings.TrimSpace(e.Message), q)
}

// Code extracts the ClickHouse error code ("Code: 60. DB::Exception...") or 0.
func (e *Error) Code() int {
	var code int
	msg := strings.TrimSpace(e.Message)
	if i := strings.Index(msg, "Code: "); i >= 0 {
		fmt.Sscanf(msg[i:], "Code: %d", &code)
	}
	return code
}

// Session is one chDB connection. Statements on a session are serialised.
type Session struct {
	mu     sync.Mutex
	conn   *uintptr // chdb_connection* (pointer to the handle)
	path   string
	ownDir bool
}

var (
	enginesMu   sync.Mutex
	enginePath  string
	openSession int
)

// Open opens a session on the engine whose data lives in dataPath (created if
// missing). An empty dataPath makes a temporary directory that Close removes.
// libchdb.so must have been loaded with Load. All sessions of a process must use
// the same data path while any is open.
func Open(dataPath string) (*Session, error) { return OpenWith(dataPath) }

// OpenWith is Open with extra engine arguments; arguments naming a query-level
// setting ("--insert_deduplication_token=x", "--max_threads=2") apply to this
// connection only, as if it had run SET.
func OpenWith(dataPath string, extraArgs ...string) (*Session, error) {
	if fnConnect == nil {
		if loadErr != nil {
			return nil, loadErr
		}
		return nil, errors.New("chdb: library not loaded (call Load)")
	}
	own := false
	if dataPath == "" {
		d, err := os.MkdirTemp("", "chdb-")
		if err != nil {
			return nil, err
		}
		dataPath, own = d, true
	} else if err := os.MkdirAll(dataPath, 0o755); err != nil {
		return nil, err
	}
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if openSession > 0 && enginePath != dataPath {
		return nil, fmt.Errorf("chdb: engine already open on %s; one data path per process", enginePath)
	}
	args := append([]string{"clickhouse", "--path=" + dataPath}, extraArgs...)
	cargs := make([][]byte, len(args))
	ptrs := make([]*byte, len(args)+1)
	for i, a := range args {
		cargs[i] = append([]byte(a), 0)
		ptrs[i] = &cargs[i][0]
	}
	conn := fnConnect(len(args), &ptrs[0])
	if conn == nil || *conn == 0 {
		if own {
			os.RemoveAll(dataPath)
		}
		return nil, fmt.Errorf("chdb: chdb_connect(--path=%s) failed", dataPath)
	}
	openSession++
	enginePath = dataPath
	return &Session{conn: conn, path: dataPath, ownDir: own}, nil
}

// Path returns the data directory.
func (s *Session) Path() string { return s.path }

func (s *Session) handle() (uintptr, error) {
	if s.conn == nil {
		return 0, errors.New("chdb: session closed")
	}
	return *s.conn, nil
}

// Result holds a statement's output and statistics.
type Result struct {
	Data        []byte
	RowsRead    uint64
	RowsWritten uint64
}

// Query runs one statement and returns its output in the given format
// (e.g. "TabSeparated", "JSONEachRow", "Native"; "" = engine default).
// The statement may carry binary data (e.g. INSERT ... FORMAT Native\n<bytes>).
func (s *Session) Query(sql, format string) ([]byte, error) {
	r, err := s.Exec(sql, format)
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}

// Exec is Query with statistics.
func (s *Session) Exec(sql, format string) (*Result, error) {
	if format == "" {
		format = "TabSeparated"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.handle()
	if err != nil {
		return nil, err
	}
	q := append([]byte(sql), 0)
	f := append([]byte(format), 0)
	res := fnQueryN(h, &q[0], uintptr(len(sql)), &f[0], uintptr(len(format)))
	if res == 0 {
		return nil, &Error{Query: sql, Message: "chdb_query_n returned NULL"}
	}
	defer fnDestroyResult(res)
	if e := fnResultError(res); e != nil {
		return nil, &Error{Query: sql, Message: cString(e)}
	}
	out := &Result{RowsRead: fnResultRowsRead(res), RowsWritten: fnResultRowsWritten(res)}
	if n := fnResultLength(res); n > 0 {
		if b := fnResultBuffer(res); b != nil {
			out.Data = append([]byte(nil), unsafe.Slice(b, n)...)
		}
	}
	return out, nil
}

// Insert streams data in the given input format into an INSERT statement
// without FORMAT clause (e.g. "INSERT INTO t SETTINGS insert_deduplication_token='x'")
// through chdb_stream_insert_n, and returns the rows written.
func (s *Session) Insert(insert, format string, chunks ...[]byte) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.handle()
	if err != nil {
		return 0, err
	}
	q := append([]byte(insert), 0)
	f := append([]byte(format), 0)
	st := fnStreamInsertN(h, &q[0], uintptr(len(insert)), &f[0], uintptr(len(format)))
	if st == 0 {
		return 0, &Error{Query: insert, Message: "chdb_stream_insert_n returned NULL"}
	}
	defer fnDestroyInsert(st)
	if e := fnStreamInsertError(st); e != nil {
		return 0, &Error{Query: insert, Message: cString(e)}
	}
	for _, c := range chunks {
		if len(c) == 0 {
			continue
		}
		if fnStreamAppend(st, &c[0], uintptr(len(c))) != 0 {
			msg := "chdb_stream_append failed"
			if e := fnStreamInsertError(st); e != nil {
				msg = cString(e)
			}
			return 0, &Error{Query: insert, Message: msg}
		}
	}
	res := fnStreamDone(st)
	if res == 0 {
		return 0, &Error{Query: insert, Message: "chdb_stream_done returned NULL"}
	}
	defer fnDestroyResult(res)
	if e := fnResultError(res); e != nil {
		return 0, &Error{Query: insert, Message: cString(e)}
	}
	return fnResultRowsWritten(res), nil
}

// Close closes the session; the temporary data directory (if Open made one)
// is removed once the last session is closed.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	fnCloseConn(s.conn)
	s.conn = nil
	enginesMu.Lock()
	openSession--
	last := openSession == 0
	enginesMu.Unlock()
	if last && s.ownDir {
		return os.RemoveAll(s.path)
	}
	return nil
}

// Shutdown stops the engine's threads (chdb_shutdown). Call it after the last
// session is closed, e.g. at the end of TestMain; the library cannot be used
// afterwards in this process.
func Shutdown() {
	if fnShutdown != nil {
		fnShutdown()
	}
}

func cString(p *byte) string {
	if p == nil {
		return ""
	}
	var n int
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
