package commit

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// The committer side, run by the process whose tasks hold the connector's first partition: start rounds,
// gather the answers and apply each table's parts as one snapshot (the protocol: top of control.go).

// SummaryContributors is the snapshot summary property holding how many worker processes wrote
// the files of that snapshot.
const SummaryContributors = "connectd.commit.contributors"

// Trigger asks for an early round (a task's buffers are full); the commit loop acts on it.
func (ctl *control) Trigger() {
	select {
	case ctl.wants <- struct{}{}:
	default:
	}
}

// wantRound handles trigger on the commit loop: the leader starts a round, anyone else asks
// the leader (at most once a second).
func (ctl *control) wantRound() {
	if time.Since(ctl.lastTrigger) < time.Second {
		return
	}
	ctl.lastTrigger = time.Now()
	if lead, _ := ctl.leadership(); lead {
		select {
		case ctl.requests <- struct{}{}:
		default:
		}
		return
	}
	_ = ctl.send(ctlMsg{Type: ctlRequest})
}

// leadership reports whether this process commits (its tasks hold the first partition of the
// connector's topics) and all partitions of those topics.
func (ctl *control) leadership() (bool, []icetable.TP) {
	ctx, cancel := context.WithTimeout(ctl.ctx, controlRequestTimeout)
	defer cancel()
	var md connect.TopicMetadata
	var err error
	if ctl.opts.TopicsMatch != nil {
		md, err = ctl.admin.Metadata(ctx)
	} else {
		md, err = ctl.admin.Metadata(ctx, ctl.opts.Topics...)
	}
	if err != nil {
		return false, nil
	}
	var tps []icetable.TP
	for t, parts := range md.Partitions {
		if ctl.opts.TopicsMatch != nil && !ctl.opts.TopicsMatch(t) {
			continue
		}
		for _, p := range parts {
			tps = append(tps, icetable.TP{Topic: t, Partition: p})
		}
	}
	if len(tps) == 0 {
		return false, nil
	}
	slices.SortFunc(tps, icetable.CompareTP)
	first := tps[0]
	return ctl.tasks.Holds(first), tps
}

func (ctl *control) commitLoop() {
	defer ctl.wg.Done()
	c := ctl
	timer := time.NewTimer(c.opts.CommitInterval)
	defer timer.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ctl.wants:
			ctl.wantRound()
			continue
		case <-timer.C:
		case <-ctl.requests:
		}
		next := c.opts.CommitInterval
		lead, all := ctl.leadership()
		ctl.leading.Store(lead)
		if lead && !ctl.commitRound(all) {
			next = c.opts.RetryBackoff
		} else if lead {
			ctl.afterRound()
		}
		timer.Reset(next)
	}
}

// commitRound runs one round as the committer.
func (ctl *control) commitRound(all []icetable.TP) bool {
	c := ctl
	ctx := ctl.ctx
	round := uuid.NewString()
	began := time.Now()
	// drop DATA of earlier rounds still queued
	for len(ctl.datas) > 0 {
		<-ctl.datas
	}
	if err := ctl.send(ctlMsg{Type: ctlStart, Round: round}); err != nil {
		c.log.Warn("iceberg round: cannot start", "err", err)
		return false
	}
	need := make(map[icetable.TP]bool, len(all))
	for _, tp := range all {
		need[tp] = true
	}
	var answers []ctlMsg
	deadline := time.NewTimer(c.opts.CommitTimeout)
	defer deadline.Stop()
	// START is repeated while waiting: a process that started after it, or whose tasks got
	// partitions in a rebalance after it answered, then covers them (sendAssignment)
	repeat := time.NewTicker(max(c.opts.CommitTimeout/20, 500*time.Millisecond))
	defer repeat.Stop()
collect:
	for len(need) > 0 {
		select {
		case <-c.stop:
			return false
		case <-repeat.C:
			_ = ctl.send(ctlMsg{Type: ctlStart, Round: round})
		case <-deadline.C:
			c.log.Info("iceberg round: commit timeout reached; committing the answers received", "round", round, "missing_partitions", len(need))
			break collect
		case m := <-ctl.datas:
			if m.Round != round {
				continue
			}
			if m.Type == ctlData {
				answers = append(answers, m)
			}
			for _, tp := range m.Assigned {
				delete(need, icetable.TP{Topic: tp.Topic, Partition: tp.Partition})
			}
		}
	}
	ok := true
	var included []string
	perTable := map[string]*tableAnswer{}
	offsets := icetable.Offsets{}
	// Include each process's first DATA only (a producer retry may duplicate it), and no two
	// answers for one partition: a partition that moved in a rebalance during the round can be
	// answered by its old owner (drained before the revocation) and by its new owner (re-read
	// from the group offset, planned on the same head) - committing both would write its
	// records twice. The later answer is left out; that process plans its records again, and the
	// table offsets then skip what the earlier one committed.
	seen := map[string]bool{}
	owner := map[icetable.TP]string{}
answers:
	for _, m := range answers {
		if m.Error != "" || seen[m.From] {
			continue // an erroring process retries its records in a later round
		}
		for _, o := range m.Offsets {
			if other, ok := owner[icetable.TP{Topic: o.Topic, Partition: o.Partition}]; ok && other != m.From {
				c.log.Info("iceberg round: partition answered twice (rebalance); the later answer waits for the next round",
					"round", round, "partition", icetable.TP{Topic: o.Topic, Partition: o.Partition}.String(), "process", m.From)
				continue answers
			}
		}
		seen[m.From] = true
		included = append(included, m.From)
		for _, o := range m.Offsets {
			tp := icetable.TP{Topic: o.Topic, Partition: o.Partition}
			owner[tp] = m.From
			offsets[tp] = max(offsets[tp], o.Offset)
		}
		for _, t := range m.Tables {
			tp := perTable[t.Name]
			if tp == nil {
				tp = &tableAnswer{name: t.Name}
				perTable[t.Name] = tp
			}
			tp.parts = append(tp.parts, t)
			if len(t.Data)+len(t.Deletes) > 0 {
				tp.contributors++
			}
		}
	}
	if len(perTable) > 0 {
		if err := ctl.applyTables(ctx, round, sortedAnswers(perTable), offsets); err != nil {
			ok = false
			c.failed(err)
			c.log.Warn("iceberg round failed; every process retries its records in the next round", "round", round, "err", err)
		}
	}
	c.log.Info("iceberg round done", "round", round, "ok", ok, "answers", len(answers), "included", len(included),
		"tables", len(perTable), "missing_partitions", len(need), "took", time.Since(began).Round(time.Millisecond))
	c.led(ok)
	if err := ctl.send(ctlMsg{Type: ctlCommit, Round: round, OK: ok, Included: included}); err != nil {
		c.log.Warn("iceberg round: cannot announce the result (processes retry their records after their timeout)", "round", round, "err", err)
	}
	return ok
}

type tableAnswer struct {
	name         string
	parts        []ctlTable
	contributors int
}

func sortedAnswers(m map[string]*tableAnswer) []tableAnswer {
	out := make([]tableAnswer, 0, len(m))
	for _, v := range m {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// applyTables commits every table's parts as one snapshot: tombstone tables first (all of
// them), then the tables.
func (ctl *control) applyTables(ctx context.Context, round string, tables []tableAnswer, offsets icetable.Offsets) error {
	c := ctl
	cat, err := c.opts.Tables.Catalog(ctx)
	if err != nil {
		return fmt.Errorf("open catalog: %w", err)
	}
	ws := make([]*icetable.Writer, len(tables)) // the writer map is not for concurrent use
	for i, ta := range tables {
		ws[i] = c.opts.Tables.writer(cat, ta.name)
	}
	run := func(tombstones bool) error {
		return parallel(len(tables), c.opts.CommitThreads, func(i int) error {
			ta, w := tables[i], ws[i]
			var cts []ctlTable
			for _, p := range ta.parts {
				if !tombstones {
					cts = append(cts, p)
				} else if p.Tomb != nil && len(p.Tomb.Data)+len(p.Tomb.Deletes) > 0 {
					cts = append(cts, *p.Tomb)
				}
			}
			if len(cts) == 0 {
				return nil
			}
			var offs icetable.Offsets
			if tombstones {
				w = &icetable.Writer{Cat: cat, Ident: icetable.TombstoneIdent(w.Ident), IsTombstones: true, Opts: icetable.TableOptions{CommitBranch: w.Opts.CommitBranch}}
			} else {
				offs = offsets
			}
			props := map[string]string{icetable.SummaryCommitID: round, icetable.SummaryTaskID: c.opts.Connector, SummaryContributors: strconv.Itoa(ta.contributors)}
			cctx, cancel := context.WithTimeout(ctx, c.commitTimeout())
			defer cancel()
			st, err := ctl.applyTable(cctx, w, cts, offs, props)
			if err != nil {
				return fmt.Errorf("table %s: %w", ta.name, err)
			}
			c.countCommit(st, 0, 0)
			return nil
		})
	}
	if err := run(true); err != nil {
		return err
	}
	return run(false)
}

func (ctl *control) applyTable(ctx context.Context, w *icetable.Writer, cts []ctlTable, offsets icetable.Offsets, props map[string]string) (icetable.CommitStats, error) {
	if err := w.Load(ctx, nil); err != nil { // always the current head
		w.Tbl = nil
		return icetable.CommitStats{}, err
	}
	parts := make([]*icetable.Part, 0, len(cts))
	for _, ct := range cts {
		p, err := decodePart(w.Tbl, ct)
		if err != nil {
			return icetable.CommitStats{}, err
		}
		parts = append(parts, p)
	}
	return w.Apply(ctx, parts, offsets, props)
}

// RequestRound has the commit loop run a round now, as another process's request does: the committer starts
// one at once, without Trigger's pacing (benchmarks).
func (ctl *control) RequestRound() {
	select {
	case ctl.requests <- struct{}{}:
	default:
	}
}
