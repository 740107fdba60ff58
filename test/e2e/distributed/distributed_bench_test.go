package distributed

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkDistributedRebalance measures, with real `connectd distributed` processes and the default group
// timings (session.timeout.ms=10000, heartbeat.interval.ms=1000, scheduled.rebalance.max.delay.ms=1000):
//
//   - join_s:     a new worker starts -> it runs its share of a 6-task sink connector (all 6 RUNNING)
//
//   - failover_s: SIGKILL of a worker holding tasks -> all 6 tasks RUNNING on the survivors
//
//     go test -run '^$' -bench DistributedRebalance -benchtime 3x ./test/e2e/distributed/
func BenchmarkDistributedRebalance(b *testing.B) {
	var joins, failovers time.Duration
	for i := 0; i < b.N; i++ {
		c := newCluster(b, "")
		w1 := c.Start("w1", 0)
		c.Start("w2", 0)
		topic := c.Group + "-in"
		createTopic(b, c.Kafka, topic, 6)
		name := c.Group + "-sink"
		cfg := fmt.Sprintf(`{"connector.class":"FileStreamSink","tasks.max":"6","topics":%q,"file":%q}`, topic, filepath.Join(c.Dir, "out.txt"))
		if code, body := httpDo("PUT", w1.URL+"/connectors/"+name+"/config", cfg); code != 201 {
			b.Fatalf("create: %d %s", code, body)
		}
		waitSpread := func(want int, timeout time.Duration) time.Duration {
			start := time.Now()
			for time.Since(start) < timeout {
				if own, ok := owners(b, w1, name, 6, c.Live()); ok {
					ws := map[string]bool{}
					for _, w := range own {
						ws[w] = true
					}
					if len(ws) == want {
						return time.Since(start)
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
			b.Fatalf("tasks not spread over %d workers within %v", want, timeout)
			return 0
		}
		waitSpread(2, 60*time.Second)
		joinStart := time.Now()
		w3 := c.Start("w3", 0)
		waitSpread(3, 60*time.Second)
		joins += time.Since(joinStart)
		w3.Kill()
		failovers += waitSpread(2, 60*time.Second)
	}
	b.ReportMetric(joins.Seconds()/float64(b.N), "join_s")
	b.ReportMetric(failovers.Seconds()/float64(b.N), "failover_s")
}
