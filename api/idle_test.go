package api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// idleClientEnv makes the test binary one of the idle clients of TestIdleConnectionsClosed: "addr,count".
const idleClientEnv = "CONNECTD_TEST_IDLE_CLIENT"

// idleClient opens count keep-alive connections to addr, sends GET / on each and then nothing, and reports
// how many were answered and how many the server closed.
func idleClient(spec string) {
	addr, countS, _ := strings.Cut(spec, ",")
	count, _ := strconv.Atoi(countS)
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	lim.Cur = lim.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	var opened, answered, closed, failed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256) // dial a few hundred at a time
	for range count {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, 20*time.Second)
			<-sem
			if err != nil {
				failed.Add(1)
				return
			}
			defer c.Close()
			opened.Add(1)
			_ = c.SetDeadline(time.Now().Add(90 * time.Second))
			if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: w\r\n\r\n")); err == nil {
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					_ = resp.Body.Close()
					answered.Add(1)
				}
			}
			var b [1]byte
			for {
				if _, err := c.Read(b[:]); err != nil {
					if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
						closed.Add(1) // EOF or reset: the server closed it
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("opened=%d answered=%d closed=%d failed=%d\n", opened.Load(), answered.Load(), closed.Load(), failed.Load())
	os.Exit(0)
}

// 20,000 connections that send one request and then nothing are all closed by the server, and GET / on a
// new connection answers throughout: idle connections are closed after connectd.rest.idle.timeout.ms, and
// past connectd.rest.max.connections (by default half the file-handle limit) the longest-waiting one
// makes room. The clients run in two child processes (each process has 20,000 handles at most).
func TestIdleConnectionsClosed(t *testing.T) {
	if spec := os.Getenv(idleClientEnv); spec != "" {
		idleClient(spec)
	}
	if testing.Short() {
		t.Skip("opens 20,000 connections")
	}
	const idle = 2 * time.Second
	fh := newFakeHerder()
	s, url := startServer(t, fh, WithIdleTimeout(idle))
	addr := s.Addrs()[0].String()
	t.Logf("connection cap %d", s.conns.max)

	var outs [2]strings.Builder
	var wg sync.WaitGroup
	for i := range outs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestIdleConnectionsClosed$")
		cmd.Env = append(os.Environ(), idleClientEnv+"="+addr+",10000")
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = cmd.Wait() }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var gets, failures int
	var firstErr error
	peak := 0
	start := time.Now()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-time.After(50 * time.Millisecond):
		}
		peak = max(peak, s.conns.Open())
		gets++
		resp, err := client.Get(url + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		if err != nil {
			failures++
			if firstErr == nil {
				firstErr = err
			}
		}
		if time.Since(start) > 5*time.Minute {
			t.Fatal("the idle clients did not finish")
		}
	}
	total := map[string]int{}
	for i := range outs {
		out := outs[i].String()
		t.Logf("client %d: %s", i, strings.TrimSpace(out))
		for _, f := range strings.Fields(out) {
			if k, v, ok := strings.Cut(f, "="); ok {
				n, _ := strconv.Atoi(v)
				total[k] += n
			}
		}
	}
	t.Logf("%d GET / while the clients were connected, %d failed; at most %d server connections open", gets, failures, peak)
	if total["opened"] != 20000 {
		t.Fatalf("opened %d of 20000 connections (%v)", total["opened"], total)
	}
	if total["closed"] != total["opened"] {
		t.Fatalf("the server closed %d of %d idle connections", total["closed"], total["opened"])
	}
	if failures > 0 {
		t.Fatalf("%d of %d GET / failed while the idle connections were open; first: %v", failures, gets, firstErr)
	}
	deadline := time.Now().Add(2 * idle)
	for s.conns.Open() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := s.conns.Open(); n > 0 {
		t.Fatalf("%d connections still open", n)
	}
}
