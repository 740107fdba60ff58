package distributed

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

var rebalanceDoneRe = regexp.MustCompile(`msg="rebalance done" .*generation=(\d+) leader=(true|false)`)

// lastRebalance is the generation and leadership of a worker's last completed rebalance, from its log.
func lastRebalance(w *dworker) (gen string, leader bool, ok bool) {
	m := rebalanceDoneRe.FindAllStringSubmatch(w.Log.String(), -1)
	if len(m) == 0 {
		return "", false, false
	}
	last := m[len(m)-1]
	return last[1], last[2] == "true", true
}

// BenchmarkDistributedCreateConnector measures `POST /connectors` on two `connectd distributed` workers:
// each iteration creates one FileStreamSink connector (tasks.max=6) on the leader and one on the other
// worker, which forwards it to the leader. Every connector added also starts a rebalance, as in a real
// roll-out of many connectors. Metrics: leader_ms and forwarded_ms, the mean latency of a POST answered by
// the leader itself and of one received by the other worker and forwarded, with the p50 and p90 of each.
//
//	scripts/with-kafka.sh go test -run '^$' -bench DistributedCreateConnector -benchtime 40x ./test/e2e/distributed/
func BenchmarkDistributedCreateConnector(b *testing.B) {
	c := newCluster(b, "")
	w1 := c.Start("w1", 0)
	w2 := c.Start("w2", 0)
	var leader, other *dworker
	deadline := time.Now().Add(60 * time.Second)
	for leader == nil {
		g1, l1, ok1 := lastRebalance(w1)
		g2, l2, ok2 := lastRebalance(w2)
		if ok1 && ok2 && g1 == g2 && l1 != l2 {
			leader, other = w1, w2
			if l2 {
				leader, other = w2, w1
			}
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the two workers never completed a rebalance together")
		}
		time.Sleep(50 * time.Millisecond)
	}
	topic := c.Group + "-in"
	createTopic(b, c.Kafka, topic, 6)
	cl := &http.Client{Timeout: 60 * time.Second} // keep-alive, as a deployment tool's client
	post := func(w *dworker, name string) time.Duration {
		body := fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","tasks.max":"6","topics":%q,"file":%q}}`,
			name, topic, filepath.Join(c.Dir, name+".txt"))
		start := time.Now()
		resp, err := cl.Post(w.URL+"/connectors", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != 201 {
			b.Fatalf("POST to %s: %d %s", w.Name, resp.StatusCode, data)
		}
		return took
	}
	var direct, forwarded []time.Duration
	i := 0
	b.ResetTimer()
	for b.Loop() {
		direct = append(direct, post(leader, fmt.Sprintf("l%d", i)))
		forwarded = append(forwarded, post(other, fmt.Sprintf("f%d", i)))
		i++
	}
	b.StopTimer()
	report := func(name string, ds []time.Duration) {
		ds = append([]time.Duration(nil), ds...)
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(sum)/float64(len(ds)), name+"_ms")
		b.ReportMetric(ms(ds[len(ds)/2]), name+"_p50_ms")
		b.ReportMetric(ms(ds[len(ds)*9/10]), name+"_p90_ms")
	}
	report("leader", direct)
	report("forwarded", forwarded)
	b.ReportMetric(0, "ns/op")
}
