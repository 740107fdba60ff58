package commit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestForeignCommitterStandBy: connectd's committer stands by while a JVM coordinator starts and completes
// commits, from its first START_COMMIT on; not once its next START_COMMIT is overdue (the commit interval plus
// the grace). It stands by while the coordinator keeps starting commits that fail (no COMMIT_COMPLETE), slow
// ones too, and no longer than the commit timeout plus its recent round time plus the grace once they stop.
func TestForeignCommitterStandBy(t *testing.T) {
	f := &foreignCommitter{interval: 2 * time.Second, timeout: 3 * time.Second}
	t0 := time.Unix(1_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	require.False(t, f.active(at(0)), "no JVM coordinator seen")

	f.started(at(1))
	require.True(t, f.active(at(2)), "a JVM coordinator just started: give it its first commit")
	require.True(t, f.startedSince(at(0.5)))
	require.False(t, f.startedSince(at(1)))
	f.done(at(2))
	for s := 3.0; s < 40; s += 2 { // committing every 2 s
		f.started(at(s))
		f.done(at(s + 0.5))
		require.True(t, f.active(at(s+1)), "at %.0fs", s)
	}
	require.True(t, f.active(at(46)))
	require.False(t, f.active(at(47)), "its next START_COMMIT is overdue: it stopped")

	// commits start every 2 s, none completes (its catalog refuses them)
	f.started(at(100))
	require.True(t, f.active(at(105)))
	for s := 102.0; s < 140; s += 2 {
		f.started(at(s))
		require.True(t, f.active(at(s+1.9)), "at %.0fs: its commits fail, its START_COMMITs keep coming", s)
	}
	require.True(t, f.active(at(140)), "started commits for longer than the timeout: still alive")
	f.done(at(141))
	require.True(t, f.active(at(142)), "completes commits again")

	// slow failing commits: a START_COMMIT every 8 s, longer than the timeout
	for s := 200.0; s < 240; s += 8 {
		f.started(at(s))
		require.True(t, f.active(at(s+7.9)), "at %.0fs: a slow coordinator is alive", s)
	}
	require.True(t, f.active(at(232+3+8+5)), "its START_COMMITs stopped; it may still be in its commit")
	require.False(t, f.active(at(232+3+8+5.1)), "its next event is overdue by the commit timeout, its round time and the grace")

	// the coordinator's consumer left the committer group: stand by again only for a new START_COMMIT
	f.started(at(300))
	require.True(t, f.active(at(301)))
	f.forget()
	require.False(t, f.active(at(301)), "forgotten: its worker died")
	require.False(t, f.startedSince(at(0)))
	f.started(at(302))
	require.True(t, f.active(at(303)), "a new JVM coordinator commits")

	var none *foreignCommitter
	require.False(t, none.active(at(0)))
	require.False(t, none.startedSince(at(0)))
}
