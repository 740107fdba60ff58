package commit

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
)

// A model of the tasks' answer producers (control_apache_producers.go): tasks of a few configs (with the Apache
// sink's transactional suffix, with a task id only, with neither) start and stop in any order, some configs
// twice at once, and the orchestrator closes at some point. After every step: each id of a running task has
// exactly one open producer, the one its tasks' keys hold, named as the Apache sink names it (or the fallback);
// no other producer is open; no producer is closed twice.

// fakeTxnClients are Kafka clients whose transactional producers only record whether they are open.
type fakeTxnClients struct {
	connect.KafkaClients
	mu    sync.Mutex
	made  []*fakeTxnProducer
	fails map[string]error // NewTransactionalProducer fails for these ids
}

type fakeTxnProducer struct {
	connect.TransactionalProducer
	c      *fakeTxnClients
	id     string
	closes int
}

func (c *fakeTxnClients) NewTransactionalProducer(_ map[string]string, id string) (connect.TransactionalProducer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.fails[id]; err != nil {
		return nil, err
	}
	p := &fakeTxnProducer{c: c, id: id}
	c.made = append(c.made, p)
	return p, nil
}

func (p *fakeTxnProducer) Close() {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.closes++
}

type producerOp struct {
	kind string // start, stop, close
	n    int    // start: the config; stop: which running task (modulo their number)
}

func (o producerOp) String() string { return o.kind + " " + strconv.Itoa(o.n) }

var producerModelConfigs = []TaskConfig{
	{ID: "0", TransactionalSuffix: "-txn-a-0"},
	{ID: "1", TransactionalSuffix: "-txn-a-1"},
	{ID: "2"},
	{ID: "3"},
	{}, // a config naming no task
}

func producerModelID(task TaskConfig) string {
	switch {
	case task.TransactionalSuffix != "":
		return "pre-worker" + task.TransactionalSuffix
	case task.ID != "":
		return "pre-connectd-grp-" + task.ID
	}
	return "pre-connectd-grp-w:8083"
}

// runProducerModel runs ops and returns the first broken rule.
func runProducerModel(ops []producerOp) error {
	clients := &fakeTxnClients{fails: map[string]error{"pre-connectd-grp-3": fmt.Errorf("broker down")}}
	ctl := &control{
		rounds: newRounds(Options{GroupID: "grp", TransactionalPrefix: "pre-", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil),
		kc:     clients, props: map[string]string{}, workerID: "w:8083", producers: map[string]*taskProducer{},
	}
	type running struct {
		cfg TaskConfig
		key TaskKey
	}
	var tasks []running
	closed := false
	for i, op := range ops {
		switch op.kind {
		case "start":
			cfg := producerModelConfigs[op.n%len(producerModelConfigs)]
			key, err := ctl.startTaskProducer(cfg)
			want := closed || producerModelID(cfg) == "pre-connectd-grp-3"
			if (err != nil) != want {
				return fmt.Errorf("step %d (%v): error %v, want one: %v", i, op, err, want)
			}
			if err == nil {
				tasks = append(tasks, running{cfg, key})
			}
		case "stop":
			if len(tasks) == 0 {
				continue
			}
			j := op.n % len(tasks)
			ctl.stopTaskProducer(tasks[j].key)
			tasks = append(tasks[:j], tasks[j+1:]...)
		case "close":
			ctl.closeProducers()
			closed = true
		}
		// the rules
		clients.mu.Lock()
		open := map[string][]*fakeTxnProducer{}
		for _, p := range clients.made {
			if strings.Contains(p.id, "coordinator") { // the JVM coordinator's fencing: in the background
				continue
			}
			if p.closes > 1 {
				clients.mu.Unlock()
				return fmt.Errorf("step %d (%v): producer %s closed %d times", i, op, p.id, p.closes)
			}
			if p.closes == 0 {
				open[p.id] = append(open[p.id], p)
			}
		}
		clients.mu.Unlock()
		live := map[string]bool{}
		if !closed {
			for _, rt := range tasks {
				id := producerModelID(rt.cfg)
				live[id] = true
				if rt.key.p == nil || rt.key.p.id != id {
					return fmt.Errorf("step %d (%v): a task of config %+v holds %+v, want id %s", i, op, rt.cfg, rt.key.p, id)
				}
				if len(open[id]) != 1 || rt.key.p.prod != open[id][0] {
					return fmt.Errorf("step %d (%v): id %s of a running task: %d producers open, the task's among them: %v",
						i, op, id, len(open[id]), len(open[id]) == 1 && rt.key.p.prod == open[id][0])
				}
			}
		}
		for id, ps := range open {
			if !live[id] {
				return fmt.Errorf("step %d (%v): %d producers of %s open and no running task has that id", i, op, len(ps), id)
			}
		}
	}
	return nil
}

func genProducerOps(r *rand.Rand) []producerOp {
	ops := make([]producerOp, 5+r.Intn(40))
	for i := range ops {
		switch k := r.Intn(10); {
		case k < 5:
			ops[i] = producerOp{"start", r.Intn(len(producerModelConfigs))}
		case k < 9:
			ops[i] = producerOp{"stop", r.Intn(8)}
		default:
			ops[i] = producerOp{"close", 0}
		}
	}
	return ops
}

// shrinkProducerOps drops steps while the run still breaks a rule.
func shrinkProducerOps(ops []producerOp) []producerOp {
	for changed := true; changed; {
		changed = false
		for i := range ops {
			cand := append(append([]producerOp{}, ops[:i]...), ops[i+1:]...)
			if runProducerModel(cand) != nil {
				ops, changed = cand, true
				break
			}
		}
	}
	return ops
}

// TestTaskProducersModel: random task starts and stops against the rules above (PRODUCERS_SEED,
// PRODUCERS_SEEDS to replay or widen).
func TestTaskProducersModel(t *testing.T) {
	base, seeds := modelSeeds(t, "PRODUCERS_SEED", int64(1), 500)
	for n := range seeds {
		seed := base + int64(n)
		ops := genProducerOps(rand.New(rand.NewSource(seed)))
		if err := runProducerModel(ops); err != nil {
			small := shrinkProducerOps(ops)
			t.Fatalf("seed %d: %v\nshrunk to %v: %v", seed, err, small, runProducerModel(small))
		}
	}
}
