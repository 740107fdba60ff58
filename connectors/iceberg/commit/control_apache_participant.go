package commit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// The participant side of the apache protocol (control_apache.go), run by every process: on START_COMMIT,
// drain the tasks, write the files and send DATA_WRITTEN per table and DATA_COMPLETE with the source offsets
// in one transaction, as the Apache sink's Worker does.

// apacheParticipate answers the START_COMMIT events the reader hands over, each once.
func (ctl *control) apacheParticipate() {
	defer ctl.wg.Done()
	answered := map[uuid.UUID]bool{}
	for {
		select {
		case <-ctl.stop:
			return
		case id := <-ctl.astarts:
			if answered[id] {
				continue
			}
			answered[id] = true
			if len(answered) > 1024 {
				clear(answered)
				answered[id] = true
			}
			ctl.answerApache(id)
		}
	}
}

// awaitApacheAnswer waits for an answer in progress: a task gives up partitions (a rebalance) only after
// the transaction holding their offsets has ended, so their next owner starts where the answer left off,
// as a JVM task's close() runs on the thread that answers.
func (ctl *control) awaitApacheAnswer() {
	ctl.answerMu.Lock()
	defer ctl.answerMu.Unlock() //nolint:staticcheck // empty critical section: a barrier
}

// answerApache answers one START_COMMIT.
func (ctl *control) answerApache(commitID uuid.UUID) {
	ctl.answerMu.Lock()
	defer ctl.answerMu.Unlock()
	c := ctl
	p := &pendingRound{id: commitID.String(), ds: c.tasks.Drain()}
	if len(p.ds) == 0 {
		return
	}
	perTable := map[string][]icetable.Rec{}
	positions := icetable.Offsets{}
	var assigned []icetable.TP
	for _, d := range p.ds {
		for name, recs := range d.Tables() {
			perTable[name] = append(perTable[name], recs...)
		}
		for tp, o := range d.Positions() {
			positions[tp] = max(positions[tp], o)
		}
		assigned = append(assigned, d.Assigned()...)
	}
	parts, err := ctl.prepareParts(ctl.ctx, perTable)
	if err != nil {
		c.failed(err)
		c.log.Warn("iceberg commit: preparing files failed; their records are written again for the next commit", "commit", commitID, "err", err)
		ctl.resolve(p, false)
		return
	}
	msgs, err := ctl.apacheAnswer(commitID, parts, assigned, positions)
	if err != nil {
		c.log.Warn("iceberg commit: cannot encode the answer; its records are written again for the next commit", "commit", commitID, "err", err)
		ctl.resolve(p, false)
		return
	}
	records := 0
	for _, d := range p.ds {
		records += d.Rows()
	}
	// recorded before it is sent: the COMMIT_COMPLETE covering it may be read before sendTxn returns
	c.answers.sent(commitID, time.Now(), records > 0)
	if err := ctl.sendTxn(msgs, positions); err != nil {
		c.answers.forget(commitID)
		var fatal *txnFatal
		if errors.As(err, &fatal) {
			// the offsets may be committed with the files, or the producer is fenced: only re-reading from
			// the group offsets is safe
			ctl.resolve(p, false)
			c.tasks.Fail(err)
			return
		}
		c.log.Warn("iceberg commit: answer aborted; its records are written again for the next commit", "commit", commitID, "err", err)
		ctl.resolve(p, false)
		return
	}
	files := 0
	for _, pp := range parts {
		files += len(pp.part.Data) + len(pp.part.Deletes)
	}
	c.log.Info("iceberg commit: answered", "commit", commitID, "tables", len(parts), "files", files, "partitions", len(assigned))
	ctl.resolve(p, true)
}

// apacheAnswer builds DATA_WRITTEN per table with files and the closing DATA_COMPLETE, which lists every
// partition the tasks hold (the committer counts them to know when all have answered).
func (ctl *control) apacheAnswer(commitID uuid.UUID, parts []preparedPart, assigned []icetable.TP, positions icetable.Offsets) ([]*connect.ProducerRecord, error) {
	var msgs []*connect.ProducerRecord
	for _, pp := range parts {
		if !pp.part.Files() {
			continue
		}
		md := pp.w.Tbl.Metadata()
		sc := schemaByID(md, pp.part.SchemaID)
		if sc == nil {
			return nil, fmt.Errorf("table %s: schema %d not in metadata", pp.name, pp.part.SchemaID)
		}
		specID := md.DefaultPartitionSpec()
		if len(pp.part.Data) > 0 {
			specID = int(pp.part.Data[0].SpecID())
		} else if len(pp.part.Deletes) > 0 {
			specID = int(pp.part.Deletes[0].SpecID())
		}
		spec := md.PartitionSpecByID(specID)
		if spec == nil {
			return nil, fmt.Errorf("table %s: partition spec %d not in metadata", pp.name, specID)
		}
		e := ctl.newApacheEvent(ae.DataWritten, commitID)
		e.Table = tableRef(ctl.opts.CatalogName, pp.name)
		e.PartitionType = *spec.PartitionType(sc)
		e.DataFiles, e.DeleteFiles = pp.part.Data, pp.part.Deletes
		m, err := ctl.apacheMessage(e)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", pp.name, err)
		}
		msgs = append(msgs, m)
	}
	done := ctl.newApacheEvent(ae.DataComplete, commitID)
	done.Assignments = make([]ae.TopicPartitionOffset, 0, len(assigned))
	slices.SortFunc(assigned, icetable.CompareTP)
	for _, tp := range assigned {
		tpo := ae.TopicPartitionOffset{Topic: tp.Topic, Partition: tp.Partition}
		if o, ok := positions[tp]; ok {
			tpo.Offset = &o
		}
		done.Assignments = append(done.Assignments, tpo)
	}
	m, err := ctl.apacheMessage(done)
	if err != nil {
		return nil, err
	}
	return append(msgs, m), nil
}

// txnFatal is a transaction whose outcome is unknown (it may have committed the source offsets with the
// files), or a transactional producer that can no longer begin one (fenced by a newer one of its id).
type txnFatal struct{ err error }

func (e *txnFatal) Error() string {
	return "iceberg commit: the control topic transaction failed beyond recovery (" + e.err.Error() +
		"); the task restarts from the committed offsets"
}
func (e *txnFatal) Unwrap() error { return e.err }

// sendTxn sends the events and commits the source offsets to the connector's group in one transaction. Its
// requests are not cancelled midway (by close): an answer cut off there would leave its outcome unknown.
func (ctl *control) sendTxn(msgs []*connect.ProducerRecord, positions icetable.Offsets) error {
	ctx := context.Background()
	prod := ctl.txn
	if err := prod.BeginTransaction(); err != nil {
		return &txnFatal{fmt.Errorf("begin transaction: %w", err)}
	}
	if err := prod.Produce(ctx, msgs...); err != nil {
		return ctl.abortTxn(ctx, fmt.Errorf("send events: %w", err))
	}
	if len(positions) > 0 {
		offs := make([]connect.TopicPartitionOffset, 0, len(positions))
		for _, tp := range icetable.SortedTPs(positions) {
			offs = append(offs, connect.TopicPartitionOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: positions[tp]})
		}
		if err := prod.SendOffsetsToTransaction(ctx, ctl.opts.GroupID, offs); err != nil {
			return ctl.abortTxn(ctx, fmt.Errorf("add source offsets to the transaction: %w", err))
		}
	}
	if err := prod.CommitTransaction(ctx); err != nil {
		err = fmt.Errorf("commit transaction: %w", err)
		if errors.Is(err, connect.ErrTransactionOutcomeUnknown) {
			_ = prod.AbortTransaction(ctx) // readies the producer; the commit may have happened all the same
			return &txnFatal{err}
		}
		return ctl.abortTxn(ctx, err)
	}
	return nil
}

// abortTxn aborts the open transaction after cause; when even that fails, its outcome is unknown.
func (ctl *control) abortTxn(ctx context.Context, cause error) error {
	if err := ctl.txn.AbortTransaction(ctx); err != nil {
		return &txnFatal{fmt.Errorf("%w; abort: %v", cause, err)}
	}
	return cause
}

// nowMicros is the events' timestamp precision (Java's truncatedTo(MICROS)).
func nowMicros() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
