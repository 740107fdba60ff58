package commit

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
)

// The tasks' producers under the apache protocol. Each task answers with a transactional producer of its
// own, under the Apache sink task's transactional id (<prefix>worker<suffix>, the suffix one per task in the
// task configs), connected when the task starts and closed when it stops, as the Apache sink's Worker does.
// Whoever runs a task next, a JVM worker or a connectd one, thus initializes the same id: that aborts the
// transaction a dead holder left open and fences a holder still alive. A transaction left open would otherwise
// stop every read_committed reader of the control topic, the committers included, until the broker's
// transaction timeout. The task's coordinator, when a JVM task ran it, had its own id
// (<prefix>coordinator<suffix>): a task starting here ends its transactions too.
//
// A task config without a suffix (written by an older connectd) keeps a per-task id, <prefix>connectd-<group>-
// <task id>; one naming no task shares the process's, <prefix>connectd-<group>-<worker id>. Tasks of one
// process with one id share its producer.

// taskProducer is the transactional producer that answers for the tasks of one transactional id here.
// answerMu guards closed; producersMu guards refs.
type taskProducer struct {
	id     string
	prod   connect.TransactionalProducer
	key    []byte // the key of its events: the Apache sink keys by producer, to keep its events in order
	refs   int
	closed bool
}

// taskTransactionalIDs are the transactional ids of task: its answers', and the JVM task's coordinator's.
func (ctl *control) taskTransactionalIDs(task TaskConfig) (answers, jvmCoordinator string) {
	prefix := ctl.opts.TransactionalPrefix
	switch {
	case task.TransactionalSuffix != "":
		return prefix + "worker" + task.TransactionalSuffix, prefix + "coordinator" + task.TransactionalSuffix
	case task.ID != "":
		return prefix + "connectd-" + ctl.opts.GroupID + "-" + task.ID, ""
	}
	return prefix + "connectd-" + ctl.opts.GroupID + "-" + ctl.workerID, ""
}

// startTaskProducer connects the answer producer of task (or shares the one of its id here).
func (ctl *control) startTaskProducer(task TaskConfig) (TaskKey, error) {
	id, coord := ctl.taskTransactionalIDs(task)
	if coord != "" {
		ctl.fenceJVMCoordinator(coord)
	}
	ctl.producersMu.Lock()
	defer ctl.producersMu.Unlock()
	if ctl.producers == nil {
		return TaskKey{}, errors.New("iceberg: the connector's coordinator in this worker has closed")
	}
	if p, ok := ctl.producers[id]; ok {
		p.refs++
		return TaskKey{p}, nil
	}
	prod, err := ctl.kc.NewTransactionalProducer(ctl.props, id) // InitProducerId: aborts, fences
	if err != nil {
		return TaskKey{}, fmt.Errorf("control topic transactional producer %s: %w", id, err)
	}
	p := &taskProducer{id: id, prod: prod, key: []byte(uuid.NewString()), refs: 1}
	ctl.producers[id] = p
	return TaskKey{p}, nil
}

// stopTaskProducer drops a task's hold on its producer, and closes it after the answer in progress, if any,
// when no task holds it any more.
func (ctl *control) stopTaskProducer(key TaskKey) {
	p := key.p
	if p == nil {
		return
	}
	ctl.answerMu.Lock()
	defer ctl.answerMu.Unlock()
	ctl.producersMu.Lock()
	defer ctl.producersMu.Unlock()
	if p.closed {
		return
	}
	if p.refs--; p.refs > 0 {
		return
	}
	p.closed = true
	if ctl.producers[p.id] == p {
		delete(ctl.producers, p.id)
	}
	p.prod.Close()
}

// closeProducers closes every task's producer (the orchestrator closes; no answer is in progress).
func (ctl *control) closeProducers() {
	ctl.producersMu.Lock()
	defer ctl.producersMu.Unlock()
	for _, p := range ctl.producers {
		p.closed = true
		p.prod.Close()
	}
	ctl.producers = nil
}

// fenceJVMCoordinator ends the transactions the coordinator of the Apache sink's task a task takes over may
// have left open (the producer of id). It runs in the background: a failure only leaves them to the broker's
// transaction timeout.
func (ctl *control) fenceJVMCoordinator(id string) {
	go func() { // not in ctl.wg: a task may start while the coordinator closes; the producer times out on its own
		p, err := ctl.kc.NewTransactionalProducer(ctl.props, id) // InitProducerId: aborts, fences
		if err != nil {
			ctl.log.Warn("iceberg: cannot end the transactions of the JVM coordinator of the task this task replaces; they end at the broker's transaction timeout",
				"transactional_id", id, "err", err)
			return
		}
		p.Close()
	}()
}
