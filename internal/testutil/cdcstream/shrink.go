package cdcstream

import (
	"math/rand"
	"slices"
)

// Trial is a sub-stream to run with a commit schedule: Phases[i] is the phase of Events[i] (non-decreasing);
// a runner delivers phase by phase and waits for the sink to commit between phases, so a phase change is a
// commit boundary.
type Trial struct {
	Events []Event
	Phases []int
}

// Boundaries counts the commit boundaries of a trial.
func (t Trial) Boundaries() int {
	n := 0
	for i := 1; i < len(t.Phases); i++ {
		if t.Phases[i] != t.Phases[i-1] {
			n++
		}
	}
	return n
}

// Runner runs trials through the real path together (disjoint key spaces) and reports which of them end in
// a state other than the model's.
type Runner func(trials []Trial) ([]bool, error)

// Shrinker minimises a failing stream by delta debugging (ddmin) over its events, keeping their order
// (so per-key order holds), then over its commit boundaries. Every candidate is tried under several
// schedules, as the failure may need events in one commit or split over several: the failing schedule
// carried over from the larger stream, all in one commit, one commit per event, a single commit boundary at
// each place, and Random random ones; a candidate of at most six events under every placement of commit
// boundaries.
type Shrinker struct {
	Run    Runner
	Rand   *rand.Rand
	Random int // random schedules per candidate
	// Continue is asked before every round; false stops with the smallest failing trial so far.
	Continue func() bool
	// Rounds counts the runs made; Stopped tells that Continue ended the shrinking early.
	Rounds  int
	Stopped bool
}

func onePhase(n int) []int { return make([]int, n) }

func eachPhase(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

func (s *Shrinker) randomPhases(n int) []int {
	p := make([]int, n)
	for i := 1; i < n; i++ {
		p[i] = p[i-1]
		if s.Rand.Intn(2) == 0 {
			p[i]++
		}
	}
	return p
}

// schedules are the trials of one candidate: carried (may be nil) first.
func (s *Shrinker) schedules(events []Event, carried []int) []Trial {
	var out []Trial
	add := func(p []int) {
		for _, t := range out {
			if slices.Equal(t.Phases, p) {
				return
			}
		}
		out = append(out, Trial{Events: events, Phases: p})
	}
	if carried != nil {
		add(carried)
	}
	if n := len(events); n >= 1 && n-1 <= exhaustiveBoundaries {
		// short: every placement of commit boundaries
		for mask := 0; mask < 1<<(n-1); mask++ {
			p := make([]int, n)
			for i := 1; i < n; i++ {
				p[i] = p[i-1]
				if mask&(1<<(i-1)) != 0 {
					p[i]++
				}
			}
			add(p)
		}
		return out
	}
	add(onePhase(len(events)))
	add(eachPhase(len(events)))
	// one commit boundary at each place: the shape of "something committed, then a commit that meets it"
	for i := 1; i < len(events); i++ {
		p := make([]int, len(events))
		for j := i; j < len(p); j++ {
			p[j] = 1
		}
		add(p)
	}
	for i := 0; i < s.Random; i++ {
		add(s.randomPhases(len(events)))
	}
	return out
}

// exhaustiveBoundaries: candidates of up to this many gaps between events are tried under every schedule.
const exhaustiveBoundaries = 5

// candidate is a subsequence of the current stream: the indexes kept.
type candidate []int

func project(events []Event, phases []int, keep candidate) ([]Event, []int) {
	ev := make([]Event, len(keep))
	ph := make([]int, len(keep))
	for i, k := range keep {
		ev[i], ph[i] = events[k], phases[k]
	}
	return ev, ph
}

// firstFailing runs the trials of all candidates in one go and returns the smallest failing one.
func (s *Shrinker) firstFailing(trials []Trial) (Trial, int, bool, error) {
	if len(trials) == 0 {
		return Trial{}, -1, false, nil
	}
	if s.Continue != nil && !s.Continue() {
		s.Stopped = true
		return Trial{}, -1, false, nil
	}
	s.Rounds++
	failed, err := s.Run(trials)
	if err != nil {
		return Trial{}, -1, false, err
	}
	best := -1
	for i, f := range failed {
		if f && (best < 0 || len(trials[i].Events) < len(trials[best].Events) ||
			len(trials[i].Events) == len(trials[best].Events) && trials[i].Boundaries() < trials[best].Boundaries()) {
			best = i
		}
	}
	if best < 0 {
		return Trial{}, -1, false, nil
	}
	return trials[best], best, true, nil
}

// Shrink reproduces the failure of events under some schedule and minimises it. ok is false when no schedule
// reproduces it (the failure needed a crash or a timing that the runs without kills did not hit) or when
// Continue stopped it before the first run (Stopped).
func (s *Shrinker) Shrink(events []Event) (minimal Trial, ok bool, err error) {
	cur, _, ok, err := s.firstFailing(s.schedules(events, nil))
	if err != nil || !ok {
		return Trial{}, false, err
	}
	// ddmin over events: try every chunk and every complement at granularity n, all in one run
	n := 2
	for len(cur.Events) >= 2 {
		chunks := split(len(cur.Events), n)
		var trials []Trial
		var owner []candidate
		for _, c := range chunks {
			for _, keep := range []candidate{c, complement(len(cur.Events), c)} {
				if len(keep) == 0 || len(keep) == len(cur.Events) {
					continue
				}
				ev, ph := project(cur.Events, cur.Phases, keep)
				for _, t := range s.schedules(ev, normalize(ph)) {
					trials = append(trials, t)
					owner = append(owner, keep)
				}
			}
		}
		found, idx, ok, err := s.firstFailing(trials)
		if err != nil {
			return cur, true, err
		}
		if s.Stopped {
			return cur, true, nil
		}
		if ok {
			sub := len(owner[idx]) <= len(cur.Events)/n+1
			cur = found
			if sub {
				n = 2
			} else {
				n = max(n-1, 2)
			}
			continue
		}
		if n >= len(cur.Events) {
			break
		}
		n = min(2*n, len(cur.Events))
	}
	// then the commit boundaries: drop one at a time while the failure stays
	for cur.Boundaries() > 0 {
		var trials []Trial
		for i := 1; i < len(cur.Phases); i++ {
			if cur.Phases[i] == cur.Phases[i-1] {
				continue
			}
			p := slices.Clone(cur.Phases)
			for j := i; j < len(p); j++ {
				p[j]--
			}
			trials = append(trials, Trial{Events: cur.Events, Phases: p})
		}
		found, _, ok, err := s.firstFailing(trials)
		if err != nil || !ok {
			return cur, true, err
		}
		cur = found
	}
	return cur, true, nil
}

// normalize renumbers phases densely from 0, keeping their order.
func normalize(p []int) []int {
	out := make([]int, len(p))
	for i := 1; i < len(p); i++ {
		out[i] = out[i-1]
		if p[i] != p[i-1] {
			out[i]++
		}
	}
	return out
}

// split cuts 0..n-1 into k contiguous chunks of near-equal size.
func split(n, k int) []candidate {
	var out []candidate
	for i := 0; i < k; i++ {
		lo, hi := i*n/k, (i+1)*n/k
		if lo == hi {
			continue
		}
		c := make(candidate, 0, hi-lo)
		for j := lo; j < hi; j++ {
			c = append(c, j)
		}
		out = append(out, c)
	}
	return out
}

func complement(n int, c candidate) candidate {
	in := make([]bool, n)
	for _, i := range c {
		in[i] = true
	}
	var out candidate
	for i := 0; i < n; i++ {
		if !in[i] {
			out = append(out, i)
		}
	}
	return out
}
