package iceberg

import "context"

// orchestrator runs the commit rounds of one connector's tasks in this process. The coordinator picks one at
// start (newCoordinator): localCommits, where this process commits alone; connectdControl, connectd's control
// protocol through the control topic (control.go); apacheControl, the Apache sink's (control_apache.go).
type orchestrator interface {
	// trigger asks for an early round: the tasks' buffers are full.
	trigger()
	// taskStarted is told of a task starting with props.
	taskStarted(props map[string]string)
	// beforeRevoke returns once a task may give up partitions.
	beforeRevoke()
	// lastTaskStopping runs before the coordinator stops with t, its last task.
	lastTaskStopping(t *Task)
	// committer reports whether the orchestrator coordinates processes, and whether this one commits for them.
	committer() (distributed, leads bool)
	// close stops the orchestrator's loops (the coordinator's stop channel is closed first) and clients.
	close()
}

// localCommits: one round per commit interval (or when the buffers are full) for the tasks of this process.
type localCommits struct{ c *coordinator }

func startLocalCommits(c *coordinator) *localCommits {
	go c.loop()
	return &localCommits{c: c}
}

func (l *localCommits) trigger() {
	select {
	case l.c.trigger <- struct{}{}:
	default:
	}
}

func (l *localCommits) taskStarted(map[string]string) {}

func (l *localCommits) beforeRevoke() {}

// lastTaskStopping commits what the stopping task still buffers.
func (l *localCommits) lastTaskStopping(t *Task) { l.c.commitRound(context.Background(), []*Task{t}) }

func (l *localCommits) committer() (bool, bool) { return false, false }

func (l *localCommits) close() { <-l.c.done }

// connectdControl: connectd's control protocol (control.go). Partitions move without waiting: an answer's
// positions count only on the committer's COMMIT, and the next owner re-reads from the group offsets.
type connectdControl struct{ *control }

func (ctl *connectdControl) taskStarted(map[string]string) {}

func (ctl *connectdControl) beforeRevoke() {}

// lastTaskStopping does nothing: the partitions' next owner re-reads past the group offsets.
func (ctl *connectdControl) lastTaskStopping(*Task) {}

func (ctl *connectdControl) committer() (bool, bool) { return true, ctl.leading.Load() }

// apacheControl: the Apache sink's control protocol (control_apache.go).
type apacheControl struct{ *control }

// taskStarted ends the transactions of the JVM task this task replaces (control_apache_fence.go).
func (ctl *apacheControl) taskStarted(props map[string]string) { ctl.fenceJVMTask(props) }

// beforeRevoke waits for an answer in progress, whose transaction commits the partitions' offsets.
func (ctl *apacheControl) beforeRevoke() { ctl.awaitApacheAnswer() }

func (ctl *apacheControl) lastTaskStopping(*Task) {}

func (ctl *apacheControl) committer() (bool, bool) { return true, ctl.leading.Load() }

var (
	_ orchestrator = (*localCommits)(nil)
	_ orchestrator = (*connectdControl)(nil)
	_ orchestrator = (*apacheControl)(nil)
)
