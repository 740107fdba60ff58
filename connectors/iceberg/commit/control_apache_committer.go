package commit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
	"github.com/connectd/connectd/connectors/iceberg/icetable"
)

// The committer side of the apache protocol (control_apache.go), run by the process whose tasks hold the
// connector's first partition, like the Apache sink's Coordinator: every commit interval START_COMMIT, then
// commit the files of every DATA_WRITTEN read since the last commit once DATA_COMPLETE has covered every
// partition (or at the commit timeout), one snapshot per table, then COMMIT_TO_TABLE and COMMIT_COMPLETE.

// envelope is one control topic record as the committer reads it; ev is nil for a record that is not an
// Apache event (another connector's, or not this group's).
type envelope struct {
	partition int32
	offset    int64
	ev        *ae.Event
}

// apacheCommitter reads the control topic read_committed from the committer group's offsets.
type apacheCommitter struct {
	c     *rounds
	topic string
	group string // the connector's consumer group
	emit  func(*ae.Event) error
	// commitRead commits the committer group's offsets: how far the committed events go
	commitRead func(apacheOffsets)
	envs       chan envelope
	done       chan struct{}
	closers    []func()
	foreign    *foreignCommitter // nil: no JVM coordinator is watched for

	read    apacheOffsets // next offset per control partition, of the records taken from envs
	written []envelope    // DATA_WRITTEN of this group not committed yet, in topic order
}

func newApacheCommitter(c *rounds, topic string, emit func(*ae.Event) error, commitRead func(apacheOffsets)) *apacheCommitter {
	return &apacheCommitter{c: c, topic: topic, group: c.opts.GroupID, emit: emit, commitRead: commitRead,
		envs: make(chan envelope, 1024), done: make(chan struct{}), read: apacheOffsets{}}
}

func (ac *apacheCommitter) newEvent(t ae.PayloadType, commitID uuid.UUID) *ae.Event {
	return &ae.Event{ID: uuid.New(), Type: t, Timestamp: nowMicros(), GroupID: ac.group, CommitID: commitID, Ext: connectdMark}
}

// errForeignCommit stops a commit during which a JVM coordinator started one (control_apache_standby.go).
var errForeignCommit = errors.New("a JVM task's coordinator of this connector started a commit; connectd's committer stands by")

// committerGroup is the consumer group of the Apache sink's coordinator, to which it commits how far it read.
func (ctl *control) committerGroup() string { return ctl.opts.GroupID + "-coord" }

func (ctl *control) startApacheCommitter() (*apacheCommitter, error) {
	group := ctl.committerGroup()
	ctx, cancel := context.WithTimeout(ctl.ctx, controlRequestTimeout)
	defer cancel()
	md, err := ctl.admin.Metadata(ctx, ctl.topic)
	if err != nil {
		return nil, err
	}
	committed, err := ctl.admin.GroupOffsets(ctx, group, ctl.topic)
	if err != nil {
		return nil, fmt.Errorf("committer group %s: %w", group, err)
	}
	positions := map[int32]connect.ReadPosition{}
	for _, p := range md.Partitions[ctl.topic] {
		if next, ok := committed[p]; ok {
			positions[p] = connect.ReadPosition{Offset: next}
		} else {
			// no committer has committed yet: read from when this process joined, so that the answers it and
			// others gave since (to a JVM coordinator that never committed) are not skipped, as the Apache
			// sink's "latest" would; the tables' offsets keep anything committed since from a second commit
			positions[p] = connect.ReadPosition{After: ctl.started}
		}
	}
	reader, err := ctl.kc.NewTopicReader(ctl.props, connect.TopicReaderSpec{Topic: ctl.topic, Partitions: positions, ReadCommitted: true})
	if err != nil {
		return nil, fmt.Errorf("consume control topic %s: %w", ctl.topic, err)
	}
	emit := func(e *ae.Event) error {
		m, err := ctl.apacheMessage(e, []byte(ctl.producerKey))
		if err == nil {
			err = ctl.prod.Produce(ctl.ctx, m)
		}
		return err
	}
	commitRead := func(read apacheOffsets) {
		offs := make([]connect.TopicPartitionOffset, 0, len(read))
		for p, o := range read {
			offs = append(offs, connect.TopicPartitionOffset{Topic: ctl.topic, Partition: p, Offset: o})
		}
		if len(offs) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(ctl.ctx, controlRequestTimeout)
		defer cancel()
		// a failure only makes the next committer read further back: the tables' offsets keep files from being committed twice
		if err := ctl.admin.CommitGroupOffsets(ctx, group, offs); err != nil {
			ctl.log.Debug("iceberg commit: cannot commit the committer group's offsets", "group", group, "err", err)
		}
	}
	ac := newApacheCommitter(ctl.rounds, ctl.topic, emit, commitRead)
	ac.foreign = ctl.foreign
	ac.closers = append(ac.closers, reader.Close)
	go ac.consume(reader)
	ctl.log.Info("iceberg commit coordinator started (Apache sink protocol)", "group", group)
	return ac, nil
}

func (ac *apacheCommitter) close() {
	select {
	case <-ac.done:
		return
	default:
	}
	close(ac.done)
	for _, f := range ac.closers {
		f()
	}
}

func (ac *apacheCommitter) consume(r connect.TopicReader) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-ac.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		recs, err := r.Poll(ctx)
		if err != nil {
			return
		}
		for _, rec := range recs {
			env := envelope{partition: rec.Partition, offset: rec.Offset}
			if ev, err := ae.Decode(rec.Value); err == nil && ev.GroupID == ac.group && !isConnectdJSON(ev.Ext) {
				env.ev = ev
			}
			select {
			case ac.envs <- env:
			case <-ac.done:
				return
			}
		}
	}
}

// take records one envelope: the position always, a DATA_WRITTEN of this group for the next commit.
func (ac *apacheCommitter) take(env envelope) {
	ac.read[env.partition] = max(ac.read[env.partition], env.offset+1)
	if env.ev != nil && env.ev.Type == ae.DataWritten {
		ac.written = append(ac.written, env)
	}
}

// round runs one commit: START_COMMIT, wait for the answers, commit. It reports whether the commit succeeded.
func (ac *apacheCommitter) round(partitions int) bool {
	c := ac.c
	for n := len(ac.envs); n > 0; n-- {
		ac.take(<-ac.envs)
	}
	commitID := uuid.New()
	began := time.Now()
	if err := ac.emit(ac.newEvent(ae.StartCommit, commitID)); err != nil {
		c.log.Warn("iceberg commit: cannot start", "err", err)
		return false
	}
	covered, partial := 0, false
	deadline := time.NewTimer(c.opts.CommitTimeout)
	defer deadline.Stop()
wait:
	for covered < partitions {
		select {
		case <-c.stop:
			return false
		case <-deadline.C:
			partial = true
			c.log.Info("iceberg commit: commit timeout reached; committing the answers received", "commit", commitID,
				"partitions", partitions, "answered", covered)
			break wait
		case env := <-ac.envs:
			ac.take(env)
			if env.ev != nil && env.ev.Type == ae.DataComplete && env.ev.CommitID == commitID {
				covered += len(env.ev.Assignments)
			}
		}
	}
	_ = partial // valid-through timestamps: connectd's answers carry none, so commits name none
	tables, err := ac.commit(commitID, began)
	ok := err == nil
	if err != nil {
		c.failed(err)
		c.log.Warn("iceberg commit failed; the files are committed by the next one", "commit", commitID, "err", err)
	}
	c.led(ok)
	c.log.Info("iceberg commit done", "commit", commitID, "ok", ok, "tables", tables, "partitions", partitions,
		"answered", covered, "took", time.Since(began).Round(time.Millisecond))
	return ok
}

// commit commits every DATA_WRITTEN read so far: one snapshot per table, holding the files of the events at
// or past the table's recorded control topic offsets. Only when every table succeeded are the events dropped,
// the committer group's offsets moved and COMMIT_COMPLETE sent.
func (ac *apacheCommitter) commit(commitID uuid.UUID, began time.Time) (int, error) {
	c := ac.c
	byTable := map[string][]envelope{}
	var names []string
	for _, env := range ac.written {
		name := refName(env.ev.Table)
		if _, ok := byTable[name]; !ok {
			names = append(names, name)
		}
		byTable[name] = append(byTable[name], env)
	}
	sort.Strings(names)
	read := make(apacheOffsets, len(ac.read))
	for p, o := range ac.read {
		read[p] = o
	}
	if len(names) > 0 {
		cat, err := c.opts.Tables.Catalog(context.Background())
		if err != nil {
			return 0, fmt.Errorf("open catalog: %w", err)
		}
		for _, name := range names {
			if ac.foreign.startedSince(began) {
				return 0, errForeignCommit
			}
			snap, err := ac.commitTable(cat, name, byTable[name], read, commitID)
			if err != nil {
				return 0, fmt.Errorf("table %s: %w", name, err)
			}
			if snap == 0 {
				continue
			}
			e := ac.newEvent(ae.CommitToTable, commitID)
			e.Table = byTable[name][0].ev.Table
			e.SnapshotID = &snap
			_ = ac.emit(e) // informational: no committer or participant waits for it
		}
	}
	ac.written = ac.written[:0]
	ac.commitRead(read)
	if err := ac.emit(ac.newEvent(ae.CommitComplete, commitID)); err != nil {
		c.log.Warn("iceberg commit: cannot announce the commit", "commit", commitID, "err", err)
	}
	return len(names), nil
}

// commitTable commits one table's files; a head moved meanwhile (another committer) is reloaded and the
// events filtered again. It returns the new snapshot's id, 0 when there was nothing to commit.
func (ac *apacheCommitter) commitTable(cat catalog.Catalog, name string, envs []envelope, read apacheOffsets, commitID uuid.UUID) (int64, error) {
	c := ac.c
	opts := c.opts.Tables.Options(name)
	opts.OffsetsKey = "" // the Apache committer records control topic offsets instead
	w := &icetable.Writer{Cat: cat, Ident: catalog.ToIdentifier(name), Opts: opts}
	key := ApacheOffsetsSummaryKey(ac.topic, ac.group)
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), c.commitTimeout())
		var snap int64
		snap, err = ac.commitTableOnce(ctx, w, envs, read, key, commitID)
		cancel()
		if !errors.Is(err, icetable.ErrFenced) {
			return snap, err
		}
	}
	return 0, err
}

func (ac *apacheCommitter) commitTableOnce(ctx context.Context, w *icetable.Writer, envs []envelope, read apacheOffsets, key string, commitID uuid.UUID) (int64, error) {
	if err := w.Load(ctx, nil); err != nil {
		if errors.Is(err, catalog.ErrNoSuchTable) {
			ac.c.log.Warn("table not found, skipping commit", "table", w.Ident)
			return 0, nil
		}
		return 0, err
	}
	tbl := w.Tbl
	committed := apacheOffsets{}
	if v, ok := summaryValue(tbl, w.Opts.CommitBranch, key); ok {
		var err error
		if committed, err = parseApacheOffsets(v); err != nil {
			return 0, fmt.Errorf("summary %s: %w", key, err)
		}
	}
	md := tbl.Metadata()
	part := &icetable.Part{Base: icetable.HeadID(tbl, w.Opts.CommitBranch), SchemaID: md.CurrentSchema().ID}
	for _, env := range envs {
		if min, ok := committed[env.partition]; ok && env.offset < min {
			continue // committed before
		}
		data, dels, err := eventFiles(env.ev, md)
		if err != nil {
			return 0, fmt.Errorf("files of the event at control offset %d/%d: %w", env.partition, env.offset, err)
		}
		for _, f := range data {
			if f.Count() > 0 {
				part.Data = append(part.Data, f)
			}
		}
		for _, f := range dels {
			if f.Count() > 0 {
				part.Deletes = append(part.Deletes, f)
			}
		}
	}
	if !part.Files() {
		return 0, nil
	}
	merged := apacheOffsets{}
	for p, o := range committed {
		merged[p] = o
	}
	for p, o := range read {
		merged[p] = max(merged[p], o)
	}
	props := map[string]string{key: merged.encode(), ApacheSummaryCommitID: commitID.String(), icetable.SummaryTaskID: ac.c.opts.Connector}
	hooks := ac.c.opts.Tables.hooks.Load()
	if hooks != nil && hooks.BeforeTableCommit != nil {
		if err := hooks.BeforeTableCommit(strings.Join(w.Ident, ".")); err != nil {
			return 0, err
		}
	}
	st, err := w.Apply(ctx, []*icetable.Part{part}, nil, props)
	if err != nil {
		return 0, err
	}
	ac.c.countCommit(st, 0, 0)
	if hooks != nil && hooks.AfterTableCommit != nil {
		if err := hooks.AfterTableCommit(strings.Join(w.Ident, ".")); err != nil {
			return 0, err
		}
	}
	return st.SnapshotID, nil
}

// summaryValue is key's value in the head's summary or, when a foreign commit (maintenance) left it out,
// in the nearest ancestor's.
func summaryValue(tbl *table.Table, branch, key string) (string, bool) {
	for cur := icetable.BranchHead(tbl, branch); cur != nil; {
		if cur.Summary != nil {
			if v, ok := cur.Summary.Properties[key]; ok {
				return v, true
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = tbl.SnapshotByID(*cur.ParentSnapshotID)
	}
	return "", false
}

// standBy takes what was read and drops the DATA_WRITTEN events the tables hold already (below their recorded
// control topic offsets), so that what waits is only what no committer has committed.
func (ac *apacheCommitter) standBy() {
	for n := len(ac.envs); n > 0; n-- {
		ac.take(<-ac.envs)
	}
	if len(ac.written) == 0 {
		return
	}
	cat, err := ac.c.opts.Tables.Catalog(context.Background())
	if err != nil {
		return
	}
	committed := map[string]apacheOffsets{}
	kept := ac.written[:0]
	for _, env := range ac.written {
		name := refName(env.ev.Table)
		offs, ok := committed[name]
		if !ok {
			offs = ac.tableOffsets(cat, name)
			committed[name] = offs
		}
		if min, ok := offs[env.partition]; ok && env.offset < min {
			continue
		}
		kept = append(kept, env)
	}
	clear(ac.written[len(kept):])
	ac.written = kept
}

// tableOffsets are the control topic offsets table name's head records (none when it cannot be read).
func (ac *apacheCommitter) tableOffsets(cat catalog.Catalog, name string) apacheOffsets {
	ctx, cancel := context.WithTimeout(context.Background(), ac.c.commitTimeout())
	defer cancel()
	opts := ac.c.opts.Tables.Options(name)
	tbl, err := cat.LoadTable(ctx, catalog.ToIdentifier(name))
	if err != nil {
		return nil
	}
	v, ok := summaryValue(tbl, opts.CommitBranch, ApacheOffsetsSummaryKey(ac.topic, ac.group))
	if !ok {
		return nil
	}
	offs, err := parseApacheOffsets(v)
	if err != nil {
		return nil
	}
	return offs
}

// foreignLeft reports whether the committer group has no member: no JVM coordinator of the connector runs.
func (ctl *control) foreignLeft() bool {
	ctx, cancel := context.WithTimeout(ctl.ctx, controlRequestTimeout)
	defer cancel()
	n, err := ctl.admin.GroupMembers(ctx, ctl.committerGroup())
	return err == nil && n == 0
}

// apacheCommitLoop runs the committer while this process leads.
func (ctl *control) apacheCommitLoop() {
	defer ctl.wg.Done()
	c := ctl
	var ac *apacheCommitter
	standingBy := false
	defer func() {
		if ac != nil {
			ac.close()
		}
	}()
	timer := time.NewTimer(c.opts.CommitInterval)
	defer timer.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ctl.wants:
			continue // early commits: only the committer's interval starts one, as in the Apache sink
		case <-timer.C:
		}
		next := c.opts.CommitInterval
		lead, all := ctl.leadership()
		ctl.leading.Store(lead)
		switch {
		case !lead && ac != nil:
			ac.close()
			ac = nil
			c.log.Info("iceberg commit coordinator stopped: the first partition moved")
		case lead && ac == nil:
			var err error
			if ac, err = ctl.startApacheCommitter(); err != nil {
				c.log.Warn("iceberg commit coordinator cannot start", "err", err)
				next = c.opts.RetryBackoff
			}
		}
		active, until := ctl.foreign.activeUntil(time.Now())
		if lead && ac != nil && active && ctl.foreignLeft() {
			c.log.Info("iceberg commit: the JVM task's coordinator left the committer group; taking over", "group", ctl.committerGroup())
			ctl.foreign.forget()
			active = false
		}
		if lead && ac != nil && active {
			// a JVM coordinator commits: read along, keeping only what it has not committed yet, and look again
			// when its next event is overdue
			if !standingBy {
				c.log.Info("iceberg commit: a JVM task's coordinator commits for this connector; standing by while it does",
					"expect_next_event_by", until.Format(time.RFC3339Nano))
				standingBy = true
			}
			ac.standBy()
			timer.Reset(min(next, foreignProbe, time.Until(until)+time.Millisecond))
			continue
		}
		if standingBy {
			c.log.Info("iceberg commit: no JVM coordinator commits any more")
			standingBy = false
		}
		if lead && ac != nil {
			if !ac.round(len(all)) {
				next = c.opts.RetryBackoff
			} else {
				ctl.afterRound()
			}
		}
		timer.Reset(next)
	}
}
