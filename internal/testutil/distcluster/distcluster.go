// Package distcluster runs a group of `connectd distributed` processes (through workerproc) on one group id and
// its internal topics, for the end-to-end tests of distributed mode under test/e2e: start, kill and watch workers,
// read who runs which task, and feed a FileStreamSink and read back what it wrote.
package distcluster

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/workerproc"
)

// Cluster is the group: its broker, group id (also the prefix of its internal topics), a directory of the test's
// own and the workers started so far.
type Cluster struct {
	T     testing.TB
	Kafka string
	Group string
	Dir   string
	Extra string // worker properties every worker gets

	Mu      sync.Mutex // guards Workers (a test may read it from other goroutines)
	Workers []*Worker
}

// Worker is one `connectd distributed` process of the cluster.
type Worker struct {
	Name string
	Port int
	URL  string
	Cmd  *exec.Cmd
	Log  *workerproc.Buffer
	Done <-chan struct{} // closed when the process exited
}

// New is a cluster on the shared test broker with a group of its own; extra (properties lines) goes to every
// worker's properties.
func New(t testing.TB, extra string) *Cluster {
	g := fmt.Sprintf("dist-%d", time.Now().UnixNano())
	return &Cluster{T: t, Kafka: kafkatest.Bootstrap(t), Group: g, Dir: t.TempDir(), Extra: extra}
}

// Start launches a worker and waits until it completed its first rebalance; port 0 takes a free one.
func (c *Cluster) Start(name string, port int) *Worker {
	w := c.Launch(name, port)
	w.AwaitHealthy(c.T)
	return w
}

// Launch starts a worker process without waiting for it to join.
func (c *Cluster) Launch(name string, port int) *Worker {
	t := c.T
	if port == 0 {
		port = workerproc.FreePort(t)
	}
	props := workerproc.DistributedProps(c.Kafka, c.Group) + fmt.Sprintf(`key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
listeners=http://127.0.0.1:%d
offset.flush.interval.ms=500
%s
`, port, c.Extra)
	f := filepath.Join(c.Dir, name+".properties")
	require.NoError(t, os.WriteFile(f, []byte(props), 0o644))
	p := workerproc.Start(t, "distributed", f)
	p.Name = name
	w := &Worker{Name: name, Port: port, URL: fmt.Sprintf("http://127.0.0.1:%d", port), Cmd: p.Cmd, Log: p.Out, Done: p.Exited()}
	c.Mu.Lock()
	c.Workers = append(c.Workers, w)
	c.Mu.Unlock()
	return w
}

// Live is the set of worker ids (host:port) of the workers whose process still runs.
func (c *Cluster) Live() map[string]bool {
	out := map[string]bool{}
	for _, w := range c.AllWorkers() {
		if w.Alive() {
			out[w.ID()] = true
		}
	}
	return out
}

// LiveWorkers are the workers whose process still runs.
func (c *Cluster) LiveWorkers() []*Worker {
	return slices.DeleteFunc(c.AllWorkers(), func(w *Worker) bool { return !w.Alive() })
}

// AllWorkers are the workers started so far, running or gone.
func (c *Cluster) AllWorkers() []*Worker {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return slices.Clone(c.Workers)
}

// ID is the worker id the group and the statuses know the worker by.
func (w *Worker) ID() string { return fmt.Sprintf("127.0.0.1:%d", w.Port) }

// AwaitHealthy waits until the worker completed its first rebalance.
func (w *Worker) AwaitHealthy(t testing.TB) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := workerproc.Request("GET", w.URL+"/health", ""); code == 200 {
			return
		}
		require.True(t, w.Alive(), "%s exited:\n%s", w.Name, w.Log.String())
		require.True(t, time.Now().Before(deadline), "%s never became healthy:\n%s", w.Name, w.Log.String())
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill ends the process with SIGKILL (no graceful stop: it does not leave its groups) and waits for it.
func (w *Worker) Kill() {
	select {
	case <-w.Done:
	default:
		_ = w.Cmd.Process.Signal(syscall.SIGKILL)
		<-w.Done
	}
}

// Alive tells whether the process still runs.
func (w *Worker) Alive() bool {
	select {
	case <-w.Done:
		return false
	default:
		return true
	}
}

// Owners maps task id -> worker id when all n tasks of a connector are RUNNING on live workers, as w's REST
// API shows them.
func Owners(t testing.TB, w *Worker, name string, n int, live map[string]bool) (map[int]string, bool) {
	cs, ok := workerproc.ConnectorStatus(w.URL, name)
	if !ok || len(cs.Tasks) != n {
		return nil, false
	}
	out := map[int]string{}
	for _, ts := range cs.Tasks {
		if ts.State != "RUNNING" || !live[ts.WorkerID] {
			return nil, false
		}
		out[ts.ID] = ts.WorkerID
	}
	return out, true
}

// Producer writes "<prefix><n>" records round-robin over partitions until stopped; stop returns how many it
// wrote.
func Producer(t testing.TB, addr, topic, prefix string) (stop func() int) {
	p := kafkatest.NewClient(t, addr, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	var n int
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			batch := make([]*kgo.Record, 0, 20)
			for i := 0; i < 20; i++ {
				batch = append(batch, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s%d", prefix, n+i))})
			}
			if err := ProduceBatch(p, batch); err != nil {
				continue
			}
			n += len(batch)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() int {
		close(quit)
		<-done
		p.Close()
		return n
	}
}

// ProduceBatch sends a batch of a background producer and waits for it, a while at most.
func ProduceBatch(p *kgo.Client, batch []*kgo.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.ProduceSync(ctx, batch...).FirstErr()
}

// FileValues counts the lines of a FileStreamSink's file by content; nil while the file does not exist.
func FileValues(t testing.TB, path string) map[string]int {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out[sc.Text()]++
	}
	return out
}
