package jvmmixed

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDistributedMixedJVMAndGoEager is TestDistributedMixedJVMAndGo with connect.protocol=eager on every
// worker: the group settles on the `default` sub-protocol, each rebalance revokes everything, and whoever
// leads, the other side decodes its V0 assignment; tasks spread over both kinds and records reach the sink.
func TestDistributedMixedJVMAndGoEager(t *testing.T) {
	t.Parallel()
	cp := jvmClasspath(t)
	const eager = "connect.protocol=eager\n"
	c := newCluster(t, eager)
	topic := c.Group + "-in"
	createTopic(t, c.Kafka, topic, 4)
	j := launchJVMWith(c, cp, jvmLaunch{props: eager}) // first member: the JVM leads
	g1 := c.Start("go1", 0)
	name := c.Group + "-eager"
	out := filepath.Join(c.Dir, "sink.txt")
	cfg := fmt.Sprintf(`{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","tasks.max":"4","topics":%q,"file":%q}`, topic, out)
	code, body := httpDo("PUT", g1.URL+"/connectors/"+name+"/config", cfg) // Go forwards to the JVM leader
	require.Contains(t, []int{200, 201}, code, body)
	spread := func(want map[string]bool) map[int]string {
		var own map[int]string
		require.Eventually(t, func() bool {
			live := c.Live()
			for k := range want {
				live[k] = true
			}
			o, ok := owners(t, g1, name, 4, live)
			if !ok {
				return false
			}
			seen := map[string]bool{}
			for _, x := range o {
				seen[x] = true
			}
			own = o
			return len(seen) == len(want)
		}, 90*time.Second, 200*time.Millisecond)
		return own
	}
	g1id := fmt.Sprintf("127.0.0.1:%d", g1.Port)
	t.Logf("JVM-led eager group: %v", spread(map[string]bool{j.ID: true, g1id: true}))
	require.Contains(t, g1.Log.String(), "protocol=0", "the group settled on the eager sub-protocol")
	require.NotContains(t, g1.Log.String(), "protocol=1")
	require.NotContains(t, g1.Log.String(), "protocol=2")
	stop := producer(t, c.Kafka, topic, "v-")
	time.Sleep(time.Second)
	n := stop()
	require.Eventually(t, func() bool { return len(fileValues(t, out)) == n }, 60*time.Second, 200*time.Millisecond)

	// the JVM leaves: the Go worker leads; a new JVM worker gets its share from the Go leader
	j.Stop()
	spread(map[string]bool{g1id: true})
	j2 := launchJVMWith(c, cp, jvmLaunch{props: eager})
	t.Logf("Go-led eager group: %v", spread(map[string]bool{j2.ID: true, g1id: true}))
	stop = producer(t, c.Kafka, topic, "w-")
	time.Sleep(time.Second)
	m := stop()
	require.Eventually(t, func() bool { return len(fileValues(t, out)) == n+m }, 60*time.Second, 200*time.Millisecond)
}
