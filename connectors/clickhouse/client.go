package clickhouse

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
)

// pool is a fixed-size set of ch-go clients (ch.Client is not goroutine-safe and does not reconnect).
type pool struct {
	cfg  *Config
	idle chan *ch.Client
	sem  chan struct{}
	// dialOptions, when set, rewrites the options built from cfg before every dial, so that a configuration
	// naming one server (and trusting the system's roots) can be served by another. Set only by Task.dialOptions.
	dialOptions func(*ch.Options)
}

func newPool(cfg *Config, dialOptions func(*ch.Options)) *pool {
	return &pool{cfg: cfg, idle: make(chan *ch.Client, cfg.PoolSize), sem: make(chan struct{}, cfg.PoolSize),
		dialOptions: dialOptions}
}

func (p *pool) options() ch.Options {
	o := ch.Options{
		Address:     net.JoinHostPort(p.cfg.Host, strconv.Itoa(p.cfg.Port)),
		Database:    p.cfg.Database,
		User:        p.cfg.User,
		Password:    p.cfg.Password,
		ClientName:  "connectd-clickhouse-sink",
		DialTimeout: p.cfg.Timeout,
		ReadTimeout: p.cfg.InsertTimeout,
	}
	switch p.cfg.Compression {
	case "lz4", "":
		o.Compression = ch.CompressionLZ4
	case "zstd":
		o.Compression = ch.CompressionZSTD
	}
	if p.cfg.SSL {
		o.TLS = &tls.Config{ServerName: p.cfg.Host, MinVersion: tls.VersionTLS12}
	}
	if p.dialOptions != nil {
		p.dialOptions(&o)
	}
	return o
}

// do runs f with a connection; a connection that saw a non-server error is discarded.
func (p *pool) do(ctx context.Context, f func(c *ch.Client) error) error {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.sem }()
	var c *ch.Client
	select {
	case c = <-p.idle:
	default:
	}
	if c == nil || c.IsClosed() {
		dctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		var err error
		c, err = ch.Dial(dctx, p.options())
		cancel()
		if err != nil {
			return fmt.Errorf("clickhouse: connect %s:%d: %w", p.cfg.Host, p.cfg.Port, err)
		}
	}
	err := f(c)
	if err != nil && !ch.IsException(err) {
		_ = c.Close()
		return err
	}
	if ex, ok := ch.AsException(err); ok && ex.Code == codeAccessDenied {
		err = &AccessDeniedError{User: p.cfg.User, Err: err}
	}
	select {
	case p.idle <- c:
	default:
		_ = c.Close()
	}
	return err
}

func (p *pool) close() {
	for {
		select {
		case c := <-p.idle:
			_ = c.Close()
		default:
			return
		}
	}
}

// exec runs a statement without result.
func (p *pool) exec(ctx context.Context, sql string) error {
	return p.do(ctx, func(c *ch.Client) error {
		qctx, cancel := context.WithTimeout(ctx, p.cfg.InsertTimeout)
		defer cancel()
		return c.Do(qctx, ch.Query{Body: sql})
	})
}

// selectStrings runs a query whose columns are all String and returns its rows.
func (p *pool) selectStrings(ctx context.Context, sql string, ncols int) ([][]string, error) {
	var rows [][]string
	err := p.do(ctx, func(c *ch.Client) error {
		rows = nil
		cols := make([]proto.ColStr, ncols)
		res := make(proto.Results, ncols)
		for i := range cols {
			res[i] = proto.ResultColumn{Data: &cols[i]}
		}
		qctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
		return c.Do(qctx, ch.Query{Body: sql, Result: res, OnResult: func(ctx context.Context, b proto.Block) error {
			for r := 0; r < b.Rows; r++ {
				row := make([]string, ncols)
				for i := range cols {
					row[i] = cols[i].Row(r)
				}
				rows = append(rows, row)
			}
			return nil
		}})
	})
	return rows, err
}

// codeAccessDenied is ClickHouse's ACCESS_DENIED: a missing grant, which no retry fixes.
const codeAccessDenied proto.Error = 497

// AccessDeniedError is a statement the ClickHouse user has no grant for. It is not retriable: the task
// fails with it instead of retrying.
type AccessDeniedError struct {
	User string
	Err  error
}

func (e *AccessDeniedError) Error() string {
	return fmt.Sprintf("clickhouse: user %q lacks a grant (see \"Grants\" in the ClickHouse sink's README for what the sink needs): %v", e.User, e.Err)
}

func (e *AccessDeniedError) Unwrap() error { return e.Err }

// retriableCodes are the server error codes the official sink retries.
var retriableCodes = []proto.Error{3, 159, 164, 202, 203, 209, 210, 242, 252, 285, 319, 425, 999, 1002}

// isRetriable: server errors with a retriable code, and every network/protocol failure.
func isRetriable(err error) bool {
	var shared *SharedStateError
	if err == nil || errors.Is(err, context.Canceled) || errors.As(err, &shared) {
		return false
	}
	if ex, ok := ch.AsException(err); ok {
		for _, c := range retriableCodes {
			if ex.Code == c {
				return true
			}
		}
		return false
	}
	return true
}

func backoff(attempt int) time.Duration {
	d := 100 * time.Millisecond << min(attempt, 6)
	return min(d, 5*time.Second)
}
