package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/gcpace"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/testutil/race"
)

// rssBytes is the process's resident set size.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Fatalf("reading RSS: %v", err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// peakRSS samples the RSS until stop is closed and returns the highest sample.
func peakRSS(t *testing.T, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		var peak int64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if r := rssBytes(t); r > peak {
				peak = r
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

func startServer(t *testing.T, h any, opts ...Option) (*Server, string) {
	t.Helper()
	base := []Option{WithListeners("http://127.0.0.1:0"), WithRegistry(testRegistry), WithSinkConnectorConfigDef(baseSinkDef()),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithLoggers(logging.New(slog.NewTextHandler(io.Discard, nil), slog.LevelInfo))}
	var s *Server
	switch v := h.(type) {
	case *fakeHerder:
		s = NewServer(v, append(base, opts...)...)
	case distributedFake:
		s = NewServer(v, append(base, opts...)...)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s, "http://" + s.Addrs()[0].String()
}

// 32 parallel bodies of 1 MiB of small values on every body endpoint, with and without authentication, in a
// standalone and a distributed worker (task configs signed or not), keep the RSS under 256 MiB above idle.
func TestParallelLargeBodiesBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 32 MiB to each of 42 endpoint setups")
	}
	if race.Enabled {
		t.Skip("RSS under the race detector is its shadow memory's; make test measures the bound")
	}
	gcpace.Setup(0) // the collector paced as cmd/connectd paces it: the RSS is the worker's
	body := make([]byte, 0, 1<<20)
	body = append(body, '[')
	for len(body) < 1<<20-3 {
		body = append(body, '0', ',')
	}
	body = append(body, '0', ']')
	body = body[:min(len(body), 1<<20-1)]
	body[len(body)-1] = ']'
	jaas := writeJAAS(t, "alice=secret\n")
	// bodies that bind as far as they go, parsed whole: a wide string map, an offsets map of small values, a
	// list of empty task configs
	fill := func(head string, unit func(int) string, tail string) []byte {
		b := []byte(head)
		for i := 0; ; i++ {
			u := unit(i)
			if len(b)+1+len(u)+len(tail) > 1<<20-1 {
				break
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, u...)
		}
		return append(b, tail...)
	}
	fitting := map[string][]byte{
		"map":     fill("{", func(i int) string { return fmt.Sprintf(`"k%d":""`, i) }, "}"),
		"offsets": fill(`{"offsets":[{"partition":{"a":[`, func(int) string { return "0" }, `]},"offset":null}]}`),
		"tasks":   fill("[", func(int) string { return "{}" }, "]"),
	}
	fittingFor := func(path string) []byte {
		switch {
		case strings.HasSuffix(path, "/tasks"):
			return fitting["tasks"]
		case strings.HasSuffix(path, "/offsets"), path == "/connectors":
			return fitting["offsets"]
		}
		return fitting["map"]
	}

	type setup struct {
		name string
		h    any
	}
	signed := distributedFake{newFakeHerder()}
	signed.keyNeeded, signed.sessionKey = true, []byte("key")
	setups := []setup{{"standalone", newFakeHerder()}, {"distributed", distributedFake{newFakeHerder()}}, {"distributed-signed", signed}}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 64, MaxIdleConnsPerHost: 64}}

	runtime.GC()
	idle := rssBytes(t)
	stop := make(chan struct{})
	peak := peakRSS(t, stop)
	statuses := map[int]int{}
	var mu sync.Mutex
	for _, su := range setups {
		for _, auth := range []bool{false, true} {
			var opts []Option
			if auth {
				opts = append(opts, WithBasicAuth(jaas))
			}
			_, url := startServer(t, su.h, opts...)
			for _, ep := range jsonEndpoints {
				bodies := [][]byte{body}
				if su.name == "distributed" && !auth { // where every endpoint parses: the bodies parsed whole too
					bodies = append(bodies, fittingFor(ep.path))
				}
				for _, body := range bodies {
					var wg sync.WaitGroup
					for range 32 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							req, _ := http.NewRequest(ep.method, url+ep.path, bytes.NewReader(body))
							req.Header.Set("Content-Type", "application/json")
							resp, err := client.Do(req)
							if err != nil {
								t.Errorf("%s %s %s: %v", su.name, ep.method, ep.path, err)
								return
							}
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							mu.Lock()
							statuses[resp.StatusCode]++
							mu.Unlock()
						}()
					}
					wg.Wait()
				}
			}
		}
	}
	close(stop)
	grew := <-peak - idle
	t.Logf("RSS idle %d MiB, peak %d MiB above idle; answers %v", idle>>20, grew>>20, statuses)
	if grew > 256<<20 {
		t.Fatalf("RSS grew %d MiB above idle, want < 256 MiB", grew>>20)
	}
}
