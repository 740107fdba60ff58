package commit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// rounds is what every orchestrator shares: the options, the tasks, the tables and the counters.
type rounds struct {
	opts  Options
	tasks Tasks
	log   *slog.Logger
	stop  chan struct{} // closed by Close: the loops end

	roundMu sync.Mutex // one round of Local's at a time (local.go)

	mu     sync.Mutex
	counts Stats

	answers answerWait // apache protocol: answers no COMMIT_COMPLETE has covered yet (answers.go)
}

// tableRecs is the records of ds per table, in the order of ds. Each table's slice is made at its
// size: the round holds it beside the batches' own until it ends, while the tasks buffer the next
// interval's records.
func tableRecs(ds []Batch) map[string][]icetable.Rec {
	n := map[string]int{}
	for _, d := range ds {
		for name, recs := range d.Tables() {
			n[name] += len(recs)
		}
	}
	perTable := make(map[string][]icetable.Rec, len(n))
	for _, d := range ds {
		for name, recs := range d.Tables() {
			if perTable[name] == nil {
				perTable[name] = make([]icetable.Rec, 0, n[name])
			}
			perTable[name] = append(perTable[name], recs...)
		}
	}
	return perTable
}

// Stats counts commit rounds.
type Stats struct {
	Rounds, FailedRounds, Snapshots, DataFiles, DeleteFiles, Records, Skipped int64
	// LedRounds and LedFailed count the rounds this process ran as the committer (control.go).
	LedRounds, LedFailed int64
	LastError            string
	LastDurable          time.Time // when a round last made the tasks' positions durable
}

func newRounds(opts Options, tasks Tasks) *rounds {
	return &rounds{opts: opts, tasks: tasks, log: opts.Log, stop: make(chan struct{})}
}

// Tables is the catalog of one connector's commits in this process and the writers of its tables.
type Tables struct {
	open    func(ctx context.Context) (catalog.Catalog, error)
	options func(name string) icetable.TableOptions

	catMu   sync.Mutex
	cat     catalog.Catalog
	writers map[string]*icetable.Writer // the commit loop's own: no lock
	hooks   atomic.Pointer[Hooks]
}

// Hooks intervene in a round's table commits, the way franz-go's hooks observe a client: tests set them to
// fail a commit or to stop a round mid-way; nil (the default) changes nothing.
type Hooks struct {
	// BeforeTableCommit returning an error stops the round before that table as if the process died
	// there: neither it nor any later table commits, and nothing is rolled back.
	BeforeTableCommit func(table string) error
	// AfterTableCommit returning an error replaces a successful commit's answer (as if it was lost).
	AfterTableCommit func(table string) error
	// FailTableCommit returning an error fails that table's commit without making it (a catalog
	// outage, a lost compare-and-swap): the round fails and the other tables commit as usual.
	FailTableCommit func(table string) error
}

// NewTables is the tables of catalog open, each written with the options of its name.
func NewTables(open func(ctx context.Context) (catalog.Catalog, error), options func(name string) icetable.TableOptions) *Tables {
	return &Tables{open: open, options: options, writers: map[string]*icetable.Writer{}}
}

// Catalog opens the catalog once.
func (ts *Tables) Catalog(ctx context.Context) (catalog.Catalog, error) {
	ts.catMu.Lock()
	defer ts.catMu.Unlock()
	if ts.cat != nil {
		return ts.cat, nil
	}
	cat, err := ts.open(ctx)
	if err != nil {
		return nil, err
	}
	ts.cat = cat
	return cat, nil
}

// Options are the table options of name.
func (ts *Tables) Options(name string) icetable.TableOptions { return ts.options(name) }

func (ts *Tables) writer(cat catalog.Catalog, name string) *icetable.Writer {
	w, ok := ts.writers[name]
	if !ok {
		w = &icetable.Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: ts.options(name)}
		ts.writers[name] = w
	}
	return w
}

// Written are the tables this process has committed to. Only AfterRound may call it.
func (ts *Tables) Written() []string {
	out := make([]string, 0, len(ts.writers))
	for n := range ts.writers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Reload makes the next round plan on name's current head, not on a head someone else's commit fenced. Only
// AfterRound may call it.
func (ts *Tables) Reload(name string) {
	if w := ts.writers[name]; w != nil {
		w.Tbl = nil
		if w.Tombs != nil {
			w.Tombs.Tbl = nil // and on the head of <table>__deletes
		}
	}
}

// SetHooks sets the hooks of the table commits; nil removes them.
func (ts *Tables) SetHooks(h *Hooks) { ts.hooks.Store(h) }

// Close closes the catalog's clients.
func (ts *Tables) Close() {
	ts.catMu.Lock()
	defer ts.catMu.Unlock()
	if cl, ok := ts.cat.(interface{ Close() error }); ok {
		_ = cl.Close()
	}
}

// roundEnded records the end of a round this process took part in and tells the tasks.
func (r *rounds) roundEnded(ok bool) {
	r.mu.Lock()
	r.counts.Rounds++
	if !ok {
		r.counts.FailedRounds++
	} else {
		r.counts.LastDurable = time.Now()
	}
	r.mu.Unlock()
	r.tasks.RoundEnded(ok)
}

// failed records err as the last error of a round.
func (r *rounds) failed(err error) {
	r.mu.Lock()
	r.counts.LastError = err.Error()
	r.mu.Unlock()
}

// led counts a round this process ran as the committer.
func (r *rounds) led(ok bool) {
	r.mu.Lock()
	r.counts.LedRounds++
	if !ok {
		r.counts.LedFailed++
	}
	r.mu.Unlock()
}

// Stats returns a copy of the counters.
func (r *rounds) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts
}

// AnswerWaiting reports whether an answer of this process waits for a COMMIT_COMPLETE.
func (r *rounds) AnswerWaiting() bool {
	_, _, ok := r.answers.oldest()
	return ok
}

// tableError classifies a table's failure in a round. Apache semantics: with dynamic routing
// (or auto-create, for a round of key-only deletes) records for a missing table are skipped; a
// configured static table must exist; an error no retry can fix (bad data, incompatible schema)
// fails the tasks.
func (r *rounds) tableError(name string, records int, err error) (skip bool, _ error) {
	if errors.Is(err, catalog.ErrNoSuchTable) && r.opts.SkipMissingTables {
		r.log.Warn("table does not exist; records skipped", "table", name, "records", records)
		return true, nil
	}
	if errors.Is(err, catalog.ErrNoSuchTable) {
		err = &icetable.DataError{Err: err}
	}
	if isFatal(err) {
		r.tasks.Fail(fmt.Errorf("iceberg table %s: %w", name, err))
	}
	return false, fmt.Errorf("table %s: %w", name, err)
}

// countCommit adds a table commit to the stats.
func (r *rounds) countCommit(st icetable.CommitStats, records, skipped int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.DataFiles+st.DeleteFiles > 0 {
		r.counts.Snapshots++
	}
	r.counts.DataFiles += int64(st.DataFiles)
	r.counts.DeleteFiles += int64(st.DeleteFiles)
	r.counts.Records += records
	r.counts.Skipped += skipped
}

// parallel runs fn(0..n-1), at most threads at once, and joins their errors.
func parallel(n, threads int, fn func(i int) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, max(threads, 1))
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if err := fn(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// commitTimeout bounds one table commit.
func (r *rounds) commitTimeout() time.Duration {
	// the Apache commit timeout bounds the wait for workers; a table commit gets more room
	return max(r.opts.CommitTimeout, 30*time.Second) * 4
}

// isFatal tells errors that a retry cannot fix (bad data, incompatible schema, bad config).
func isFatal(err error) bool {
	if errors.Is(err, icetable.ErrFenced) || errors.Is(err, table.ErrCommitFailed) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var de *icetable.DataError
	var te *icetable.TableDefError
	return errors.As(err, &de) || errors.As(err, &te)
}
