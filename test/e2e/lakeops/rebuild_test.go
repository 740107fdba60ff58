package lakeops

import (
	"bufio"
	"context"
	"math/rand"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/lakepipeline"
	"github.com/connectd/connectd/internal/testutil/workerproc"
	"github.com/connectd/connectd/lakeops/reconcile"
)

// dump is the whole stored content of the ClickHouse table (every row version, not only FINAL).
func (p *pipeline) dump() string {
	return chdbtest.MustQuery(p.T, p.S, "SELECT * FROM "+p.DB+".customers ORDER BY id, _version, is_deleted, name FORMAT TSV")
}

func (p *pipeline) rebuild(extra map[string]string) *reconcile.RebuildResult {
	p.T.Helper()
	props := p.props()
	for k, v := range extra {
		props[k] = v
	}
	cfg, err := reconcile.ParseConfig(props)
	require.NoError(p.T, err)
	opt, err := reconcile.ParseRebuildOptions(props)
	require.NoError(p.T, err)
	res, err := reconcile.Rebuild(context.Background(), cfg, opt, nil)
	require.NoError(p.T, err)
	return res
}

func (p *pipeline) tamper(changed, deleted, added string) {
	tbl := p.DB + ".customers"
	chdbtest.MustExec(p.T, p.S, "INSERT INTO "+tbl+" SELECT id, 'tampered', qty, updated_at, email, _version + 1, 0 FROM "+tbl+" FINAL WHERE id = "+quoteString(changed))
	chdbtest.MustExec(p.T, p.S, "INSERT INTO "+tbl+" SELECT id, name, qty, updated_at, email, _version + 1, 1 FROM "+tbl+" FINAL WHERE id = "+quoteString(deleted))
	chdbtest.MustExec(p.T, p.S, "INSERT INTO "+tbl+" VALUES ("+quoteString(added)+", 'new', 1, 1, NULL, 1, 0)")
}

// TestRebuildEndToEnd: the ClickHouse table dropped, then corrupted, is rebuilt from the Iceberg table
// (fed with the same CDC stream through a real broker) and reconcile passes; a rebuild SIGKILLed halfway
// leaves the table as it was and, run again, gives the same table as an uninterrupted one; a window
// rebuild repairs the window only.
func TestRebuildEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end")
	}
	seed := lakepipeline.Seed(t)
	rng := rand.New(rand.NewSource(seed))
	p := newPipeline(t)
	p.Start()
	p.Produce(rng, 150)
	p.Wait()
	p.Stop() // a rebuild runs with the ClickHouse connector stopped
	live := len(p.Model())
	require.Equal(t, reconcile.StatusClean, p.reconcile().Status)

	// Dropped: rebuilt from its CREATE statement.
	create := chdbtest.MustQuery(t, p.S, "SELECT create_table_query FROM system.tables WHERE database = '"+p.DB+"' AND name = 'customers' FORMAT TSVRaw")
	create = strings.Replace(create, p.DB+".customers", "{table}", 1)
	chdbtest.MustExec(t, p.S, "DROP TABLE "+p.DB+".customers SYNC")
	res := p.rebuild(map[string]string{reconcile.KeyRebuildCreateSQL: create})
	require.Equal(t, int64(live), res.Rows)
	r := p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	require.True(t, r.Cut.Consistent, r.Cut.Reason)
	p.crossCheck(r, live, live)
	clean := p.dump()

	// Corrupted, then a rebuild SIGKILLed halfway: the table is untouched; run again: the same table.
	var keys []string
	for k := range p.Model() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p.tamper(keys[0], keys[1], "zz-added")
	corrupted := p.dump()
	require.Equal(t, reconcile.StatusDrift, p.reconcile().Status)
	var args []string
	for k, v := range p.props() {
		args = append(args, k+"="+v)
	}
	args = append(args, reconcile.KeyRebuildBatchRows+"=3")
	cmd := exec.Command(workerproc.Binary(t), append([]string{"rebuild", "-progress=on"}, args...)...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	seen := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) { // progress lines end in \r
			for i, b := range data {
				if b == '\r' || b == '\n' {
					return i + 1, data[:i], nil
				}
			}
			if atEOF && len(data) > 0 {
				return len(data), data, nil
			}
			return 0, nil, nil
		})
		for sc.Scan() {
			if strings.Contains(sc.Text(), "rows/s") {
				select {
				case seen <- sc.Text():
				default:
				}
			}
		}
	}()
	select {
	case line := <-seen:
		t.Logf("killing the rebuild at %q", line)
	case <-time.After(2 * time.Minute):
		t.Fatal("no progress from connectd rebuild")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.Equal(t, corrupted, p.dump(), "a killed rebuild leaves the table as it was")
	staged := chdbtest.MustQuery(t, p.S, "SELECT count() FROM "+p.DB+"."+reconcile.StageTable("customers"))
	t.Logf("the killed rebuild had staged %s of %d rows", staged, live)
	out, err := exec.Command(workerproc.Binary(t), append([]string{"rebuild", "-progress=off"}, args...)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, clean, p.dump(), "the rebuild run again gives the same table as an uninterrupted one")
	require.Equal(t, "0", chdbtest.MustQuery(t, p.S, "SELECT count() FROM system.tables WHERE database = '"+p.DB+"' AND name = '"+reconcile.StageTable("customers")+"'"))
	r = p.reconcile()
	require.Equal(t, reconcile.StatusClean, r.Status)
	p.crossCheck(r, live, live)

	// A window: the first half of the keys. The tampered key outside it stays as it is.
	from, to := keys[0], keys[len(keys)/2]
	inWin, outWin := keys[1], keys[len(keys)-1]
	tbl := p.DB + ".customers"
	chdbtest.MustExec(t, p.S, "INSERT INTO "+tbl+" SELECT id, 'tampered', qty, updated_at, email, _version + 1, 0 FROM "+tbl+" FINAL WHERE id IN ("+quoteString(inWin)+", "+quoteString(outWin)+")")
	res = p.rebuild(map[string]string{reconcile.KeyWindowColumn: "id", reconcile.KeyWindowFrom: from, reconcile.KeyWindowTo: to})
	require.Positive(t, res.KeptRows)
	r = p.reconcile()
	require.Equal(t, reconcile.StatusDrift, r.Status)
	require.Equal(t, []reconcile.Mismatch{{Key: outWin, Kind: reconcile.Different, Columns: []string{"name", "version"}}}, r.Mismatches)
	require.Equal(t, int64(len(keys)/2), res.Rows, "rows rebuilt in the window")
	require.GreaterOrEqual(t, res.KeptRows, int64(len(keys)-len(keys)/2), "stored rows kept outside the window (a background merge may have collapsed the tampered key's two)")
}
