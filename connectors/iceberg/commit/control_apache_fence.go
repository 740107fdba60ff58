package commit

// A JVM task of the connector that died inside a transaction leaves it open until the broker's transaction
// timeout (a minute by default), and until then every read_committed reader of the control topic, the
// committer included, stops at it. A JVM task restarted under the same task config ends it at once: its
// producer's transactional id is the same. When connectd takes the task over, it does the same for the
// task's two ids (<prefix>worker<suffix> and <prefix>coordinator<suffix>): initializing a producer with an id
// aborts its open transaction and fences whoever still holds it.

// fenceJVMTask ends the transactions the Apache sink's task with producers of ids may have left open (see
// above). It runs in the background: a failure only leaves those transactions to the broker's timeout.
func (ctl *control) fenceJVMTask(ids []string) {
	if len(ids) == 0 {
		return
	}
	go func() { // not in ctl.wg: a task may start while the coordinator closes; the producers time out on their own
		for _, id := range ids {
			p, err := ctl.kc.NewTransactionalProducer(ctl.props, id) // InitProducerId: aborts, fences
			if err != nil {
				ctl.log.Warn("iceberg: cannot end the transactions of the JVM task this task replaces; they end at the broker's transaction timeout",
					"transactional_id", id, "err", err)
				continue
			}
			p.Close()
		}
	}()
}
