// Package chshim is a TEST SHIM: a loopback server that speaks enough of
// ClickHouse's native TCP protocol (via ch-go's proto package) for the real
// ch-go client to connect, and executes every statement on the real ClickHouse
// engine embedded in the process (chDB, see internal/testutil/chdb).
//
// It is NOT a ClickHouse server and does not test ClickHouse's own TCPHandler:
// it answers Hello/Ping/Query/Data/Cancel, runs DDL and SELECT on chDB (results
// are produced by chDB as FORMAT Native and relayed as protocol Data blocks),
// and for INSERT sends the table's header block, receives the client's
// (optionally compressed) Data blocks, copies their column bytes verbatim into
// FORMAT Native and streams them into one chDB INSERT. Query settings sent by
// the client (insert_deduplication_token, async_insert, ...) are applied to a
// chDB connection opened for that query only. It exists because no ClickHouse
// server that ch-go can talk to can be installed on the build machines; see
// docs/design/clickhouse-sink.md.
//
// Listen only on loopback addresses.
package chshim

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/ClickHouse/ch-go/proto"

	"github.com/connectd/connectd/internal/testutil/chdb"
)

// QueryInfo describes a statement received from a client, for test hooks.
type QueryInfo struct {
	ID       string
	Body     string
	Settings map[string]string
	Database string
	Insert   bool
	Blocks   int // INSERT: data blocks received
	Rows     int // INSERT: rows received
}

// Server is the test shim server.
type Server struct {
	engine *chdb.Session
	ln     net.Listener
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	log   []QueryInfo

	closed atomic.Bool

	beforeInsert, afterInsert, beforeQuery func(q QueryInfo) error
}

// SetBeforeQuery installs a hook that runs before a statement other than an INSERT with data (DDL,
// SELECT, ALTER ...) is executed; ErrDropConnection closes the connection without an answer.
func (s *Server) SetBeforeQuery(f func(q QueryInfo) error) {
	s.mu.Lock()
	s.beforeQuery = f
	s.mu.Unlock()
}

// SetBeforeInsert installs a hook that runs after an INSERT's data was received
// and before it is executed. Returning ErrDropConnection closes the connection
// without an answer (a network fault); another error is sent as an exception.
// nil removes it.
func (s *Server) SetBeforeInsert(f func(q QueryInfo) error) {
	s.mu.Lock()
	s.beforeInsert = f
	s.mu.Unlock()
}

// SetAfterInsert installs a hook that runs after an INSERT was executed and
// before the client is answered; ErrDropConnection simulates a lost
// acknowledgement.
func (s *Server) SetAfterInsert(f func(q QueryInfo) error) {
	s.mu.Lock()
	s.afterInsert = f
	s.mu.Unlock()
}

func (s *Server) hooks() (before, after func(QueryInfo) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.beforeInsert, s.afterInsert
}

// ErrDropConnection makes a hook close the client connection abruptly.
var ErrDropConnection = errors.New("chshim: drop connection")

// Exception is an error to send to the client as a server exception.
type Exception struct {
	Code    int
	Name    string
	Message string
}

func (e *Exception) Error() string { return fmt.Sprintf("%s (%d): %s", e.Name, e.Code, e.Message) }

// New returns a shim executing on the engine that session belongs to.
func New(engine *chdb.Session) *Server {
	return &Server{engine: engine, conns: map[net.Conn]struct{}{}}
}

// Start listens on a free loopback port and serves in the background.
func (s *Server) Start() error { return s.StartTLS(nil) }

// StartTLS is Start with TLS (the native protocol's secure port) when cfg is not nil.
func (s *Server) StartTLS(cfg *tls.Config) error { return s.Listen("127.0.0.1:0", cfg) }

// Listen serves on addr, which must be a loopback address (port 0: a free one), with TLS when cfg is
// not nil.
func (s *Server) Listen(addr string, cfg *tls.Config) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("chshim: %s is not a loopback address", addr)
	}
	var ln net.Listener
	if cfg != nil {
		ln, err = tls.Listen("tcp", addr, cfg)
	} else {
		ln, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return err
	}
	s.ln = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() {
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					_ = c.Close()
				}()
				sc := &serverConn{srv: s, conn: c, r: proto.NewReader(c), buf: new(proto.Buffer), db: "default"}
				_ = sc.handle()
			}()
		}
	}()
	return nil
}

// Addr is the host:port the shim listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Host and Port split Addr.
func (s *Server) Host() string { h, _, _ := net.SplitHostPort(s.Addr()); return h }

// Port returns the listening port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Queries returns the statements received so far.
func (s *Server) Queries() []QueryInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]QueryInfo(nil), s.log...)
}

// DropConnections closes every client connection (a network fault).
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.Close()
	}
}

// Close stops listening and closes client connections.
func (s *Server) Close() error {
	if s.closed.Swap(true) || s.ln == nil {
		return nil
	}
	err := s.ln.Close()
	s.DropConnections()
	s.wg.Wait()
	return err
}

type serverConn struct {
	srv  *Server
	conn net.Conn
	r    *proto.Reader
	buf  *proto.Buffer
	ver  int
	db   string
	comp *compress.Writer
}

const serverRevision = proto.Version

func (c *serverConn) flush() error {
	_, err := c.conn.Write(c.buf.Buf)
	c.buf.Reset()
	return err
}

func (c *serverConn) handle() error {
	code, err := c.r.UVarInt()
	if err != nil {
		return err
	}
	if proto.ClientCode(code) != proto.ClientCodeHello {
		return fmt.Errorf("chshim: expected hello, got %d", code)
	}
	var hello proto.ClientHello
	if err := hello.Decode(c.r); err != nil {
		return err
	}
	c.ver = min(hello.ProtocolVersion, serverRevision)
	if hello.Database != "" {
		c.db = hello.Database
	}
	sh := proto.ServerHello{
		Name: "ClickHouse (chDB test shim)", Major: 26, Minor: 7, Patch: 2, Revision: serverRevision,
		Timezone: "UTC", DisplayName: "chshim",
	}
	sh.EncodeAware(c.buf, c.ver)
	if err := c.flush(); err != nil {
		return err
	}
	if proto.FeatureAddendum.In(c.ver) {
		if _, err := c.r.Str(); err != nil { // quota key
			return err
		}
	}
	for {
		code, err := c.r.UVarInt()
		if err != nil {
			return err
		}
		switch proto.ClientCode(code) {
		case proto.ClientCodePing:
			proto.ServerCodePong.Encode(c.buf)
			if err := c.flush(); err != nil {
				return err
			}
		case proto.ClientCodeQuery:
			if err := c.handleQuery(); err != nil {
				return err
			}
		case proto.ClientCodeCancel:
			// Nothing runs asynchronously; the client closes the connection.
		default:
			return fmt.Errorf("chshim: unsupported client packet %d", code)
		}
	}
}

// readData reads one client Data packet (after its code) and returns the block
// re-framed as FORMAT Native.
func (c *serverConn) readData(compressed bool, out *proto.Buffer) (blockHeader, error) {
	var cd proto.ClientData
	if err := cd.DecodeAware(c.r, c.ver); err != nil {
		return blockHeader{}, err
	}
	if compressed {
		c.r.EnableCompression()
		defer c.r.DisableCompression()
	}
	return transcodeBlock(c.r, out, layoutFor(c.ver), nativeLayout)
}

var insertRe = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+(?:TABLE\s+)?((?:"[^"]*"|` + "`[^`]*`" + `|[\w.])+)\s*(\(.*?\))?\s*(SETTINGS\s+.*?)?\s*(?:VALUES|FORMAT\s+Native)?\s*;?\s*$`)

func (c *serverConn) handleQuery() error {
	var q proto.Query
	if err := q.DecodeAware(c.r, c.ver); err != nil {
		return err
	}
	compressed := q.Compression == proto.CompressionEnabled
	// External data: not supported; the client sends one data packet, and only the empty block (no external
	// tables) is accepted.
	code, err := c.r.UVarInt()
	if err != nil {
		return err
	}
	if proto.ClientCode(code) != proto.ClientCodeData {
		return fmt.Errorf("chshim: expected data packet, got %d", code)
	}
	var sink proto.Buffer
	h, err := c.readData(compressed, &sink)
	if err != nil {
		return err
	}
	if h.columns != 0 || h.rows != 0 {
		return c.exception(&Exception{Code: 48, Name: "DB::Exception", Message: "chshim: external tables are not supported"})
	}
	info := QueryInfo{ID: q.ID, Body: q.Body, Settings: map[string]string{}, Database: c.db}
	var args []string
	for _, st := range q.Settings {
		info.Settings[st.Key] = st.Value
		args = append(args, "--"+st.Key+"="+st.Value)
	}
	if m := insertRe.FindStringSubmatch(q.Body); m != nil {
		info.Insert = true
		return c.handleInsert(q, info, args, m[1], m[2], m[3], compressed)
	}
	c.srv.record(info)
	c.srv.mu.Lock()
	bq := c.srv.beforeQuery
	c.srv.mu.Unlock()
	if bq != nil {
		if err := bq(info); err != nil {
			if errors.Is(err, ErrDropConnection) {
				return err
			}
			return c.exception(err)
		}
	}
	sess, err := c.session(args)
	if err != nil {
		return c.exception(err)
	}
	defer sess.Close()
	out, err := sess.Query(q.Body, "Native")
	if err != nil {
		return c.exception(err)
	}
	// Relay chDB's Native blocks as protocol Data packets.
	pr := proto.NewReader(bytes.NewReader(out))
	for {
		var blk proto.Buffer
		_, err := transcodeBlock(pr, &blk, nativeLayout, layoutFor(c.ver))
		if errors.Is(err, errEndOfBlocks) {
			break
		}
		if err != nil {
			return c.exception(fmt.Errorf("chshim: relaying result: %w", err))
		}
		if err := c.sendData(blk.Buf, compressed); err != nil {
			return err
		}
	}
	proto.ServerCodeEndOfStream.Encode(c.buf)
	return c.flush()
}

func (c *serverConn) sendData(block []byte, compressed bool) error {
	proto.ServerCodeData.Encode(c.buf)
	c.buf.PutString("") // temporary table name
	if compressed {
		if c.comp == nil {
			c.comp = compress.NewWriter(compress.LevelZero, compress.LZ4)
		}
		if err := c.comp.Compress(block); err != nil {
			return err
		}
		c.buf.Buf = append(c.buf.Buf, c.comp.Data...)
	} else {
		c.buf.Buf = append(c.buf.Buf, block...)
	}
	return c.flush()
}

func (c *serverConn) session(args []string) (*chdb.Session, error) {
	sess, err := chdb.OpenWith(c.srv.engine.Path(), args...)
	if err != nil {
		return nil, &Exception{Code: 115, Name: "DB::Exception", Message: fmt.Sprintf("chshim: settings %v rejected: %v", args, err)}
	}
	if c.db != "" && c.db != "default" {
		if _, err := sess.Query("USE `"+strings.ReplaceAll(c.db, "`", "\\`")+"`", ""); err != nil {
			sess.Close()
			return nil, err
		}
	}
	return sess, nil
}

func (c *serverConn) handleInsert(q proto.Query, info QueryInfo, args []string, table, cols, settings string, compressed bool) error {
	sess, err := c.session(args)
	if err != nil {
		c.srv.record(info)
		return c.exception(err)
	}
	defer sess.Close()
	// Header block: the columns the INSERT expects, as chDB sees them.
	sel := "*"
	if cols != "" {
		sel = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cols), "("), ")")
	}
	desc, err := sess.Query("DESCRIBE (SELECT "+sel+" FROM "+table+")", "TabSeparated")
	if err != nil {
		c.srv.record(info)
		return c.exception(err)
	}
	var header proto.Buffer
	var names, types []string
	for _, line := range strings.Split(strings.TrimRight(string(desc), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 2 {
			continue
		}
		names = append(names, unescapeTSV(f[0]))
		types = append(types, unescapeTSV(f[1]))
	}
	lay := layoutFor(c.ver)
	if lay.info {
		proto.BlockInfo{BucketNum: -1}.Encode(&header)
	}
	header.PutUVarInt(uint64(len(names)))
	header.PutUVarInt(0)
	for i := range names {
		header.PutString(names[i])
		header.PutString(types[i])
		if lay.customSerFlag {
			header.PutBool(false)
		}
	}
	if err := c.sendData(header.Buf, compressed); err != nil {
		return err
	}
	// Receive data blocks until the empty one.
	var chunks [][]byte
	for {
		code, err := c.r.UVarInt()
		if err != nil {
			return err
		}
		if proto.ClientCode(code) != proto.ClientCodeData {
			return fmt.Errorf("chshim: expected data packet during INSERT, got %d", code)
		}
		var blk proto.Buffer
		h, err := c.readData(compressed, &blk)
		if err != nil {
			return err
		}
		if h.columns == 0 && h.rows == 0 {
			break
		}
		info.Blocks++
		info.Rows += h.rows
		chunks = append(chunks, blk.Buf)
	}
	c.srv.record(info)
	before, after := c.srv.hooks()
	if f := before; f != nil {
		if err := f(info); err != nil {
			if errors.Is(err, ErrDropConnection) {
				return err
			}
			return c.exception(err)
		}
	}
	if len(chunks) > 0 {
		stmt := "INSERT INTO " + table + " " + cols
		if settings != "" {
			stmt += " " + settings
		}
		if _, err := sess.Insert(stmt, "Native", chunks...); err != nil {
			return c.exception(err)
		}
	}
	if f := after; f != nil {
		if err := f(info); err != nil {
			if errors.Is(err, ErrDropConnection) {
				return err
			}
			return c.exception(err)
		}
	}
	proto.ServerCodeEndOfStream.Encode(c.buf)
	return c.flush()
}

func (s *Server) record(q QueryInfo) {
	s.mu.Lock()
	s.log = append(s.log, q)
	s.mu.Unlock()
}

// exception sends err as a server exception packet; the connection stays usable.
func (c *serverConn) exception(err error) error {
	e := &Exception{Code: 1001, Name: "DB::Exception", Message: err.Error()}
	var ex *Exception
	var ce *chdb.Error
	switch {
	case errors.As(err, &ex):
		e = ex
	case errors.As(err, &ce):
		e.Code = ce.Code()
		e.Message = strings.TrimSpace(ce.Message)
	}
	proto.ServerCodeException.Encode(c.buf)
	(&proto.Exception{Code: proto.Error(e.Code), Name: e.Name, Message: e.Message}).EncodeAware(c.buf, c.ver)
	return c.flush()
}

func unescapeTSV(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\t`, "\t", `\n`, "\n", `\\`, `\`, `\'`, `'`)
	return r.Replace(s)
}
