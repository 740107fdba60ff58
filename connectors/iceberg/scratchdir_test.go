package iceberg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

// scratchCtx is a task context that offers the worker's scratch directory.
type scratchCtx struct {
	fakeCtx
	dir string
}

func (s *scratchCtx) ScratchDir() string { return s.dir }

// openFilesUnder lists the files this process holds open under dir (unlinked ones too), from /proc.
func openFilesUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			out = append(out, target)
		}
	}
	return out
}

// TestSpoolInScratchDir: the spool files of a task are made in the directory the runtime offers
// (connect.ScratchSpace), not in the system's temporary directory.
func TestSpoolInScratchDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the open files of the process from /proc (Linux); the spool files have no name")
	}
	scratch, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	props, _ := sinkProps(t, map[string]string{KeyTables: "shop.events"})
	sctx := &scratchCtx{fakeCtx: fakeCtx{props: props}, dir: scratch}
	task := &Task{}
	task.Initialize(sctx)
	require.NoError(t, task.Start(props))
	var recs []*connect.SinkRecord
	for off := 0; off < 200; off++ {
		recs = append(recs, &connect.SinkRecord{Topic: "ev", Offset: int64(off), Value: map[string]any{"id": fmt.Sprint(off), "n": int64(off)}})
	}
	ctx := context.Background()
	require.NoError(t, task.Put(ctx, recs[:100]))
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError) // creates the table: the next rows spool
	require.NoError(t, task.Put(ctx, recs[100:]))
	require.True(t, task.appends.Table("shop.events") != nil && task.appends.Table("shop.events").Usable(), "the rows were not spooled")

	spooled := openFilesUnder(t, scratch)
	require.NotEmpty(t, spooled, "no spool file in the scratch directory")
	for _, f := range spooled {
		require.Contains(t, filepath.Base(f), "connectd-iceberg-")
	}
	require.Empty(t, openFilesUnder(t, tmp), "spool files in the system's temporary directory")
	require.True(t, task.coord.CommitNow(ctx), task.coord.stats().LastError)
	require.NoError(t, task.Stop())
}
