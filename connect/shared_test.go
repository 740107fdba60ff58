package connect

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countedValue is a shared value that counts the values of its key alive at once.
type countedValue struct {
	live   *atomic.Int32
	closed atomic.Int32
	pause  time.Duration // Close takes this long
}

func (v *countedValue) Close() error {
	time.Sleep(v.pause)
	v.live.Add(-1)
	if v.closed.Add(1) > 1 {
		return errors.New("closed twice")
	}
	return nil
}

// TestSharedValuesLifecycle: the first Acquire creates the value, the next ones get it without creating,
// the release of the last hold closes it (once, whatever the releases called again), and the next Acquire
// creates a new one.
func TestSharedValuesLifecycle(t *testing.T) {
	var s SharedValues
	var live atomic.Int32
	creates := 0
	create := func() (io.Closer, error) {
		creates++
		live.Add(1)
		return &countedValue{live: &live}, nil
	}
	a, releaseA, err := s.Acquire("k", create)
	require.NoError(t, err)
	b, releaseB, err := s.Acquire("k", create)
	require.NoError(t, err)
	require.Same(t, a, b)
	require.Equal(t, 1, creates)
	other, releaseOther, err := s.Acquire("other", create)
	require.NoError(t, err)
	require.NotSame(t, a, other, "each key its own value")

	require.NoError(t, releaseA())
	require.NoError(t, releaseA(), "a release called again")
	require.Zero(t, a.(*countedValue).closed.Load(), "closed while b holds it")
	require.NoError(t, releaseB())
	require.EqualValues(t, 1, a.(*countedValue).closed.Load())
	require.NoError(t, releaseB())
	require.EqualValues(t, 1, a.(*countedValue).closed.Load())
	require.Zero(t, other.(*countedValue).closed.Load())

	c, releaseC, err := s.Acquire("k", create)
	require.NoError(t, err)
	require.NotSame(t, a, c, "a closed value is never handed out again")
	require.NoError(t, releaseC())
	require.NoError(t, releaseOther())
	require.Zero(t, live.Load())
}

// TestSharedValuesCreateFails: a create error is returned as it is and leaves the key without a value; the
// next Acquire creates again. A create that returns no value is an error too.
func TestSharedValuesCreateFails(t *testing.T) {
	var s SharedValues
	boom := errors.New("boom")
	_, _, err := s.Acquire("k", func() (io.Closer, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	_, _, err = s.Acquire("k", func() (io.Closer, error) { return nil, nil })
	require.ErrorContains(t, err, `"k"`)
	var live atomic.Int32
	v, release, err := s.Acquire("k", func() (io.Closer, error) { live.Add(1); return &countedValue{live: &live}, nil })
	require.NoError(t, err)
	require.NotNil(t, v)
	require.NoError(t, release())
	require.Zero(t, live.Load())
}

// TestSharedValuesCloseErrorReturned: the release that closes the value returns Close's error.
func TestSharedValuesCloseErrorReturned(t *testing.T) {
	var s SharedValues
	var live atomic.Int32
	v, release, err := s.Acquire("k", func() (io.Closer, error) { return &countedValue{live: &live}, nil })
	require.NoError(t, err)
	v.(*countedValue).closed.Store(1) // its Close now fails
	require.Error(t, release())
}

// TestSharedValuesConcurrent: goroutines acquire and release random keys at random moments, while values
// are created and closed slowly. A key never has two values alive at once, a holder's value is never
// closed under it, and once everything is released every value created was closed exactly once.
// SHARED_VALUES_SEED=<seed> repeats a run's choices (not its interleaving).
func TestSharedValuesConcurrent(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SHARED_VALUES_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d", seed)
	const goroutines, ops = 8, 200
	keys := []string{"a", "b", "c"}
	var s SharedValues
	live := map[string]*atomic.Int32{}
	for _, k := range keys {
		live[k] = &atomic.Int32{}
	}
	var mu sync.Mutex
	var created []*countedValue
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			pause := func() time.Duration { return time.Duration(rng.IntN(50)) * time.Microsecond }
			for range ops {
				key := keys[rng.IntN(len(keys))]
				failCreate := rng.IntN(10) == 0
				createPause, closePause := pause(), pause()
				v, release, err := s.Acquire(key, func() (io.Closer, error) {
					time.Sleep(createPause)
					if failCreate {
						return nil, errors.New("create failed")
					}
					if n := live[key].Add(1); n != 1 {
						return nil, fmt.Errorf("seed %d: key %s has %d values alive", seed, key, n)
					}
					cv := &countedValue{live: live[key], pause: closePause}
					mu.Lock()
					created = append(created, cv)
					mu.Unlock()
					return cv, nil
				})
				if err != nil {
					if failCreate && err.Error() == "create failed" {
						continue
					}
					errs <- err
					return
				}
				time.Sleep(pause())
				if v.(*countedValue).closed.Load() != 0 {
					errs <- fmt.Errorf("seed %d: a held value of key %s was closed", seed, key)
					return
				}
				if err := release(); err != nil {
					errs <- fmt.Errorf("seed %d: %w", seed, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for k, n := range live {
		require.Zero(t, n.Load(), "seed %d: key %s has a value alive after every release", seed, k)
	}
	for _, v := range created {
		require.EqualValues(t, 1, v.closed.Load(), "seed %d", seed)
	}
	require.Empty(t, s.entries, "seed %d", seed)
}

// sharedOp is one step of TestSharedValuesModel: an Acquire of key (whose create fails when fail is set), or
// the release of the hold-th hold taken so far (again, when it was released before).
type sharedOp struct {
	acquire bool
	key     string
	fail    bool
	hold    int
}

func (o sharedOp) String() string {
	if o.acquire {
		return fmt.Sprintf("acquire(%s, fail=%v)", o.key, o.fail)
	}
	return fmt.Sprintf("release(#%d)", o.hold)
}

// runSharedModel runs ops against a SharedValues and against the model (per key: the live value and its
// holds) and returns the first step where they differ.
func runSharedModel(ops []sharedOp) error {
	var s SharedValues
	type hold struct {
		key      string
		value    *countedValue
		release  func() error
		released bool
	}
	var holds []*hold
	current := map[string]*countedValue{} // the model: each key's live value
	holders := map[string]int{}
	var live atomic.Int32
	for i, op := range ops {
		if op.acquire {
			created := false
			v, release, err := s.Acquire(op.key, func() (io.Closer, error) {
				created = true
				if op.fail {
					return nil, errors.New("create failed")
				}
				live.Add(1)
				return &countedValue{live: &live}, nil
			})
			want := current[op.key]
			switch {
			case want == nil && !created:
				return fmt.Errorf("step %d %v: no value, and create was not called", i, op)
			case want != nil && created:
				return fmt.Errorf("step %d %v: create called while a value lives", i, op)
			case want == nil && op.fail:
				if err == nil {
					return fmt.Errorf("step %d %v: create's error was not returned", i, op)
				}
				continue
			case err != nil:
				return fmt.Errorf("step %d %v: %w", i, op, err)
			case want != nil && v != want:
				return fmt.Errorf("step %d %v: another value than the live one", i, op)
			}
			cv := v.(*countedValue)
			if cv.closed.Load() != 0 {
				return fmt.Errorf("step %d %v: a closed value", i, op)
			}
			current[op.key] = cv
			holders[op.key]++
			holds = append(holds, &hold{key: op.key, value: cv, release: release})
			continue
		}
		if len(holds) == 0 {
			continue
		}
		h := holds[op.hold%len(holds)]
		before := h.value.closed.Load()
		if err := h.release(); err != nil {
			return fmt.Errorf("step %d %v: %w", i, op, err)
		}
		wantClosed := before
		if !h.released {
			h.released = true
			holders[h.key]--
			if holders[h.key] == 0 {
				delete(current, h.key)
				wantClosed++
			}
		}
		if got := h.value.closed.Load(); got != wantClosed {
			return fmt.Errorf("step %d %v: value of %s closed %d times, want %d", i, op, h.key, got, wantClosed)
		}
	}
	if n := int(live.Load()); n != len(current) {
		return fmt.Errorf("after %d steps: %d values alive, the model has %d", len(ops), n, len(current))
	}
	return nil
}

// TestSharedValuesModel: random sequences of acquires (some whose create fails) and releases (some called
// again) of two keys behave as the model says: a key's value is created by the Acquire that finds none,
// handed to the next ones, closed exactly when its last hold is released, and never handed out again. A
// failing sequence is shrunk to the shortest that still fails. SHARED_VALUES_SEED=<seed> repeats a run.
func TestSharedValuesModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SHARED_VALUES_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := range 200 {
		ops := make([]sharedOp, 1+rng.IntN(40))
		for i := range ops {
			if rng.IntN(2) == 0 {
				ops[i] = sharedOp{acquire: true, key: []string{"a", "b"}[rng.IntN(2)], fail: rng.IntN(6) == 0}
			} else {
				ops[i] = sharedOp{hold: rng.IntN(64)}
			}
		}
		err := runSharedModel(ops)
		if err == nil {
			continue
		}
		for shrunk := true; shrunk; { // drop steps while it still fails
			shrunk = false
			for i := range ops {
				shorter := append(slices.Clone(ops[:i]), ops[i+1:]...)
				if e := runSharedModel(shorter); e != nil {
					ops, err, shrunk = shorter, e, true
					break
				}
			}
		}
		t.Fatalf("seed %d round %d: %v\nshortest failing sequence: %v", seed, round, err, ops)
	}
}
