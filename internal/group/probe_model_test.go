package group

import (
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"
)

// probeStep is one probe round of the model: which members are probed, and which of them listen.
type probeStep struct {
	targets   []string
	listening map[string]bool
}

// TestProbeModel drives the prober with random rounds (members joining and leaving the probed set, their
// listeners opening and closing) and compares every round's verdict with a model: a member is reported dead
// once it refused probeRefusals probes in a row while it was probed; an accepted probe or a round in which it is
// not probed starts its count again. A failing sequence is shrunk to its shortest failing prefix; the seed is
// printed.
func TestProbeModel(t *testing.T) {
	members := []string{"a", "b", "c"}
	addrs := map[string]string{}
	for _, id := range members {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[id] = l.Addr().String()
		l.Close()
	}
	for run := range 20 {
		seed := uint64(time.Now().UnixNano()) + uint64(run)
		steps := randomProbeSteps(rand.New(rand.NewPCG(seed, 0)), members, 12)
		if err := checkProbeSteps(addrs, steps); err != nil {
			n := len(steps)
			for n > 1 && checkProbeSteps(addrs, steps[:n-1]) != nil {
				n--
			}
			t.Fatalf("seed %d: %v\nshortest failing sequence (%d rounds): %+v", seed, checkProbeSteps(addrs, steps[:n]), n, steps[:n])
		}
	}
}

func randomProbeSteps(r *rand.Rand, members []string, n int) []probeStep {
	steps := make([]probeStep, n)
	for i := range steps {
		s := probeStep{listening: map[string]bool{}}
		for _, id := range members {
			if r.IntN(4) > 0 { // probed in most rounds
				s.targets = append(s.targets, id)
			}
			s.listening[id] = r.IntN(2) == 0
		}
		steps[i] = s
	}
	return steps
}

// checkProbeSteps runs steps on a fresh prober with real listeners and returns the first verdict that
// differs from the model's.
func checkProbeSteps(addrs map[string]string, steps []probeStep) error {
	p := &peerProber{timeout: 500 * time.Millisecond}
	model := map[string]int{}
	open := map[string]net.Listener{}
	defer func() {
		for _, l := range open {
			l.Close()
		}
	}()
	for i, s := range steps {
		for id, addr := range addrs {
			switch l := open[id]; {
			case s.listening[id] && l == nil:
				nl, err := net.Listen("tcp", addr)
				if err != nil {
					return fmt.Errorf("round %d: listening again on %s: %w", i, addr, err)
				}
				open[id] = nl
			case !s.listening[id] && l != nil:
				l.Close()
				delete(open, id)
			}
		}
		targets := map[string]string{}
		for _, id := range s.targets {
			targets[id] = addrs[id]
		}
		got := p.probe(targets)
		slices.Sort(got)
		var want []string
		for id := range model {
			if !slices.Contains(s.targets, id) {
				delete(model, id)
			}
		}
		for _, id := range s.targets {
			if s.listening[id] {
				model[id] = 0
				continue
			}
			if model[id]++; model[id] >= probeRefusals {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("round %d: reported dead %v, model %v", i, got, want)
		}
	}
	return nil
}
