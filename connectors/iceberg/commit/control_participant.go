package commit

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// The participant side of a round, run by every process: answer START with DATA (or ASSIGN when
// repeated), then settle the drained records on COMMIT or give them back (the protocol: top of control.go).

type pendingRound struct {
	id       string
	ds       []Batch
	deadline time.Time
}

func (ctl *control) participate() {
	defer ctl.wg.Done()
	c := ctl
	var pending *pendingRound
	var last string // the last round answered
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			if pending != nil {
				ctl.resolve(pending, false)
			}
			return
		case m := <-ctl.pmsgs:
			if m.Type == ctlCommit {
				if pending != nil && m.Round == pending.id {
					ctl.resolve(pending, m.OK && slices.Contains(m.Included, ctl.id))
					pending = nil
				}
				continue
			}
			if m.Round == last {
				// the committer repeats START while it waits: tell it the partitions we hold now
				// (a rebalance after our answer), so that it need not wait for the timeout
				if pending != nil {
					ctl.sendAssignment(m.Round)
				}
				continue
			}
			if pending != nil {
				ctl.resolve(pending, false) // a newer round started: ours may never be committed
			}
			last = m.Round
			pending = ctl.prepare(m)
		case <-tick.C:
			if pending != nil && time.Now().After(pending.deadline) {
				c.log.Warn("no commit for the round; its records are retried in the next round", "round", pending.id)
				ctl.resolve(pending, false)
				pending = nil
			}
		}
	}
}

// sendAssignment answers a repeated START with the partitions this process's tasks hold now
// and nothing else: no files, no positions (what was not drained goes in a later round).
func (ctl *control) sendAssignment(round string) {
	c := ctl
	msg := ctlMsg{Type: ctlAssign, Round: round}
	for _, tp := range ctl.tasks.Assignment() {
		msg.Assigned = append(msg.Assigned, ctlTP{Topic: tp.Topic, Partition: tp.Partition})
	}
	if err := ctl.send(msg); err != nil {
		c.log.Warn("iceberg round: cannot update the committer", "round", round, "err", err)
	}
}

// resolve ends a round for this process's tasks.
func (ctl *control) resolve(p *pendingRound, ok bool) {
	for _, d := range p.ds {
		if ok {
			d.Committed(!ctl.apache)
		} else {
			d.Failed()
		}
	}
	ctl.roundEnded(ok)
}

func (ctl *control) pwriter(cat catalog.Catalog, name string) *icetable.Writer {
	w, ok := ctl.pwriters[name]
	if !ok {
		w = &icetable.Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: ctl.opts.Tables.Options(name)}
		ctl.pwriters[name] = w
	}
	return w
}

// prepare drains the tasks, writes this process's files for the round and sends DATA.
func (ctl *control) prepare(start ctlMsg) *pendingRound {
	c := ctl
	ctx := ctl.ctx
	p := &pendingRound{id: start.Round, deadline: time.Now().Add(2*c.commitTimeout() + c.opts.CommitTimeout)}
	positions := icetable.Offsets{}
	msg := ctlMsg{Type: ctlData, Round: start.Round}
	p.ds = ctl.tasks.Drain()
	perTable := tableRecs(p.ds)
	for _, d := range p.ds {
		for tp, o := range d.Positions() {
			positions[tp] = max(positions[tp], o)
		}
		for _, tp := range d.Assigned() {
			msg.Assigned = append(msg.Assigned, ctlTP{Topic: tp.Topic, Partition: tp.Partition})
		}
	}
	for _, tp := range icetable.SortedTPs(positions) {
		msg.Offsets = append(msg.Offsets, ctlTP{Topic: tp.Topic, Partition: tp.Partition, Offset: positions[tp]})
	}
	tables, err := ctl.prepareTables(ctx, perTable)
	if err != nil {
		msg.Error = err.Error()
		c.failed(err)
		c.log.Warn("iceberg round: preparing files failed; its records are retried in the next round", "round", start.Round, "err", err)
	}
	msg.Tables = tables
	if err := ctl.send(msg); err != nil {
		c.log.Warn("iceberg round: cannot answer the committer; its records are retried in the next round", "round", start.Round, "err", err)
		ctl.resolve(p, false)
		return nil
	}
	if msg.Error != "" {
		ctl.resolve(p, false)
		return nil
	}
	return p
}

func (ctl *control) prepareTables(ctx context.Context, perTable map[string][]icetable.Rec) ([]ctlTable, error) {
	parts, err := ctl.prepareParts(ctx, perTable)
	if err != nil {
		return nil, err
	}
	out := make([]ctlTable, 0, len(parts))
	for _, pp := range parts {
		ct, err := encodePart(pp.name, pp.w.Tbl, pp.part)
		if err == nil && pp.part.Tombstones != nil {
			var tt ctlTable
			tt, err = encodePart(pp.name+icetable.TombstoneSuffix, pp.w.Tombs.Tbl, pp.part.Tombstones)
			ct.Tomb = &tt
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ct)
	}
	return out, nil
}

// preparedPart is one table's files of a round, written by this process for another to commit.
type preparedPart struct {
	name string
	w    *icetable.Writer // w.Tbl: the metadata the part was planned on
	part *icetable.Part
}

// prepareParts plans and writes every table's records on the table's current head; tables
// skipped by tableError (dropped, or not created with dynamic routing) are left out.
func (ctl *control) prepareParts(ctx context.Context, perTable map[string][]icetable.Rec) ([]preparedPart, error) {
	c := ctl
	if len(perTable) == 0 {
		return nil, nil
	}
	cat, err := c.opts.Tables.Catalog(ctx)
	if err != nil {
		return nil, fmt.Errorf("open catalog: %w", err)
	}
	names := make([]string, 0, len(perTable))
	for n := range perTable {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]preparedPart, len(names))
	skip := make([]bool, len(names))
	for i, name := range names { // the writer map is not for concurrent use
		w := ctl.pwriter(cat, name)
		w.Tbl = nil // another process commits: plan on the current head
		out[i] = preparedPart{name: name, w: w}
	}
	err = parallel(len(names), c.opts.CommitThreads, func(i int) error {
		name, recs := names[i], perTable[names[i]]
		cctx, cancel := context.WithTimeout(ctx, c.commitTimeout())
		defer cancel()
		part, err := out[i].w.Prepare(cctx, recs)
		out[i].part = part
		if err != nil {
			skip[i], err = c.tableError(name, len(recs), err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for i, pp := range out {
		if !skip[i] {
			kept = append(kept, pp)
		}
	}
	return kept, nil
}
