// Package gcpace paces the Go collector of a worker process when GOGC is not set: Go's default pacing while
// the runtime's memory is small, a heap that grows by half of what is live beyond, under a soft memory limit
// set after each collection.
package gcpace

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// The collector's pacing when GOGC is not set. A sink worker's live heap is mostly buffered records,
// so its peak memory follows the collector's headroom: once the Go runtime's memory is past gcFloor,
// the heap may grow by half of what is live (GOGC=50, where Go's default is twice what is live). Below
// gcFloor the collector paces as Go's default does (GOGC=100): a small heap's headroom costs little
// memory, and the collector runs half as often. After each cycle a soft memory limit (GOMEMLIMIT's) of
// the larger of gcFloor and 1.5 times the live heap plus the runtime's memory outside the heap holds
// the heap to the tighter pace. GOGC and GOMEMLIMIT set in the environment take precedence, as for any Go program.
const (
	defaultGCPercent   = 50
	smallHeapGCPercent = 100
	gcFloor            = 160 << 20
)

// Setup sets the collector's pacing for the rest of the process; the soft memory limit never exceeds
// ceiling (0: none).
func Setup(ceiling int64) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		debug.SetGCPercent(defaultGCPercent)
		return
	}
	debug.SetGCPercent(smallHeapGCPercent)
	p := newGCPacer(ceiling)
	p.adjust()
	p.arm()
}

// gcPacer sets the soft memory limit after each collection.
type gcPacer struct {
	ceiling int64
	samples []metrics.Sample // the live heap, all the runtime's memory, then the heap's parts of it
}

func newGCPacer(ceiling int64) *gcPacer {
	p := &gcPacer{ceiling: ceiling}
	for _, m := range []string{"/gc/heap/live:bytes", "/memory/classes/total:bytes", "/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes", "/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes"} {
		p.samples = append(p.samples, metrics.Sample{Name: m})
	}
	return p
}

// gcCycle is an object the collector frees each cycle: its cleanup is the pacer's hook. It holds a
// pointer so that the tiny allocator does not batch it with other objects.
type gcCycle struct{ _ *int }

func (p *gcPacer) arm() {
	runtime.AddCleanup(&gcCycle{}, func(p *gcPacer) { p.adjust(); p.arm() }, p)
}

func (p *gcPacer) adjust() {
	metrics.Read(p.samples)
	v := func(i int) int64 { return int64(p.samples[i].Value.Uint64()) }
	live, nonHeap := v(0), v(1)-v(2)-v(3)-v(4)-v(5)
	debug.SetMemoryLimit(gcMemoryLimit(live, nonHeap, p.ceiling))
}

// gcMemoryLimit is the soft memory limit after a collection that left live bytes of heap, with the
// runtime holding nonHeap bytes outside the heap (stacks, its own structures): room for the heap to
// grow by defaultGCPercent of live, or for the runtime's memory to reach gcFloor, whichever is more,
// but no more than ceiling (0: none).
func gcMemoryLimit(live, nonHeap, ceiling int64) int64 {
	limit := live + live/100*defaultGCPercent + max(nonHeap, 0)
	if limit < live {
		limit = math.MaxInt64
	}
	limit = max(limit, gcFloor)
	if ceiling > 0 {
		limit = min(limit, ceiling)
	}
	return limit
}
