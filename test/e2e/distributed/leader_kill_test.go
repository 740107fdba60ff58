package distributed

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// leaderOf returns the worker that led the last rebalance all live workers completed together.
func leaderOf(t testing.TB, c *cluster) *dworker {
	var leader *dworker
	require.Eventually(t, func() bool {
		leader = nil
		gen := ""
		for _, w := range c.LiveWorkers() {
			g, lead, ok := lastRebalance(w)
			if !ok || (gen != "" && g != gen) {
				return false
			}
			gen = g
			if lead {
				leader = w
			}
		}
		return leader != nil
	}, 60*time.Second, 50*time.Millisecond, "the workers never completed a rebalance together")
	return leader
}

// TestDistributedLeaderKill: the group's leader is SIGKILLed. The survivors probe its REST listener, find it
// refused and remove it on its behalf, so its tasks run on the survivors well before its session timeout
// (10 s) would have ended its membership. Meanwhile a `POST /connectors` sent to a survivor, which forwards to
// the leader, is answered 201 (forwarded to the next leader) or 409 (the client retries), never 500.
func TestDistributedLeaderKill(t *testing.T) {
	const workers, connectors, tasks = 3, 6, 2
	c := newCluster(t, "")
	for i := range workers {
		c.Start(fmt.Sprintf("w%d", i+1), 0)
	}
	var names, topics []string
	for i := range connectors {
		tp := fmt.Sprintf("%s-t%d", c.Group, i)
		createTopic(t, c.Kafka, tp, tasks)
		topics = append(topics, tp)
		names = append(names, fmt.Sprintf("%s-c%d", c.Group, i))
	}
	awaitTopics(t, c.Kafka, topics, tasks)
	sinkConfig := func(name, topic string) string {
		return fmt.Sprintf(`{"name":%q,"config":{"connector.class":"FileStreamSink","tasks.max":"%d","topics":%q,"file":%q}}`,
			name, tasks, topic, filepath.Join(c.Dir, name+".txt"))
	}
	for i, n := range names {
		code, body := httpDo("POST", c.Workers[i%workers].URL+"/connectors", sinkConfig(n, topics[i]))
		require.Equal(t, 201, code, "POST %s: %s", n, body)
	}
	require.Eventually(t, func() bool {
		own, ok := runningOn(c.Workers[0], names, tasks, c.Live())
		if !ok {
			return false
		}
		on := map[string]bool{}
		for _, w := range own {
			on[w] = true
		}
		return len(on) == workers // the leader runs tasks of its own
	}, 3*time.Minute, 100*time.Millisecond, "tasks not running on every worker")

	leader := leaderOf(t, c)
	var survivor *dworker
	for _, w := range c.Workers {
		if w != leader {
			survivor = w
			break
		}
	}
	leader.Kill()
	killed := time.Now()

	// POSTs to the survivor, one after another, until its tasks run again
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var codes []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n := fmt.Sprintf("%s-during-%d", c.Group, i)
			sent := time.Now()
			code, body := httpDo("POST", survivor.URL+"/connectors", sinkConfig(n, topics[0]))
			codes = append(codes, fmt.Sprintf("%d after %v (%v)", code, sent.Sub(killed).Round(time.Millisecond), time.Since(sent).Round(time.Millisecond)))
			if code != 201 && code != 409 {
				t.Errorf("POST %s during the leader's death: %d %s", n, code, body)
			}
		}
	}()
	require.Eventually(t, func() bool {
		_, ok := runningOn(survivor, names, tasks, c.Live())
		return ok
	}, 3*time.Minute, 50*time.Millisecond, "tasks of the SIGKILLed leader not running on the survivors")
	took := time.Since(killed)
	close(stop)
	wg.Wait()
	t.Logf("SIGKILL of the leader %s -> every task RUNNING on the survivors in %v; POSTs to %s: %v",
		leader.Name, took.Round(time.Millisecond), survivor.Name, codes)
	require.NotEmpty(t, codes)
	// the session timeout (10 s) alone takes longer than that from the kill to the next rebalance
	require.Less(t, took, 8*time.Second, "the dead leader was not found by the probe")
}
