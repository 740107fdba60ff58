package maintenance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connectors/iceberg/icetable"
	"github.com/connectd/connectd/internal/testutil/icebergtest"
)

var sqliteCatalog = icebergtest.SQLiteCatalogIn

var customerSchema = &ice.StructType{FieldList: []ice.NestedField{
	{ID: 1, Name: "id", Type: ice.PrimitiveTypes.Int64, Required: true},
	{ID: 2, Name: "name", Type: ice.PrimitiveTypes.String},
	{ID: 3, Name: "ts", Type: ice.PrimitiveTypes.TimestampTz},
}}

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// model is the expected live state: id -> "id|name|day".
type model map[int64]string

func (m model) rows() []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func modelRow(id int64, name string, day int) string { return fmt.Sprintf("%d|%s|%d", id, name, day) }

// commitRound commits recs through the sink's writer, retrying when the head moved under it (a
// maintenance commit in between), as the sink's commit round does.
func commitRound(t testing.TB, w *icetable.Writer, recs []icetable.Rec, offsets icetable.Offsets) {
	t.Helper()
	commitRoundWith(t, w, recs, offsets, nil)
}

// commitRoundWith is commitRound with more summary entries.
func commitRoundWith(t testing.TB, w *icetable.Writer, recs []icetable.Rec, offsets icetable.Offsets, props map[string]string) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		_, err := w.Commit(context.Background(), recs, offsets, props)
		if err == nil {
			return
		}
		require.True(t, errors.Is(err, icetable.ErrFenced) && attempt < 5, "sink commit: %v", err)
	}
}

// goRows reads the live rows with iceberg-go (every delete applied).
func goRows(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	var out []string
	for r, err := range icetable.LiveRows(context.Background(), tbl, 0, nil) {
		require.NoError(t, err)
		ts := r["ts"].(time.Time)
		out = append(out, modelRow(r["id"].(int64), r["name"].(string), int(ts.Sub(baseTime)/(24*time.Hour))))
	}
	sort.Strings(out)
	return out
}

// readerQuery reads id, name and the day number of ts since baseTime (1767225600 s).
const readerQuery = "SELECT id, name, CAST(floor((epoch(ts) - 1767225600) / 86400) AS BIGINT) AS day FROM t ORDER BY id"

// duckRows reads the live rows with DuckDB.
func duckRows(t testing.TB, metadataLocation string) []string {
	t.Helper()
	return duckRowsS3(t, metadataLocation, nil)
}

func duckRowsS3(t testing.TB, metadataLocation string, s3 *icebergtest.S3) []string {
	t.Helper()
	res := icebergtest.Read(t, metadataLocation, readerQuery, s3)
	var out []string
	for _, r := range res.Rows {
		out = append(out, fmt.Sprintf("%v|%v|%v", r[0], r[1], r[2]))
	}
	sort.Strings(out)
	return out
}

// javaRows reads the live rows with Apache Iceberg's Java generic reader (IcebergGenerics), which
// applies every delete file by the spec's sequence number rules.
func javaRows(t testing.TB, metadataLocation string) []string {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	script := filepath.Join(icebergtest.RepoRoot(), "test", "cdcmodel", "testdata", "javareader", "read.sh")
	cmd := exec.Command("bash", script, metadataLocation)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "Iceberg Java reader: %s", stderr.String())
	var res icebergtest.Result
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	require.NoError(t, d.Decode(&res))
	var rows []string
	for _, m := range res.Maps() {
		ts, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["ts"]))
		if err != nil { // OffsetDateTime.toString leaves out zero seconds
			ts, err = time.Parse("2006-01-02T15:04Z07:00", fmt.Sprint(m["ts"]))
		}
		require.NoError(t, err, "ts %v", m["ts"])
		rows = append(rows, modelRow(mustInt(t, m["id"]), fmt.Sprint(m["name"]), int(ts.Sub(baseTime)/(24*time.Hour))))
	}
	sort.Strings(rows)
	return rows
}

func mustInt(t testing.TB, v any) int64 {
	var n int64
	_, err := fmt.Sscan(fmt.Sprint(v), &n)
	require.NoError(t, err)
	return n
}

// entries lists the live manifest entries of snap by file path.
func entries(t testing.TB, tbl *table.Table, snap *table.Snapshot) map[string]ice.ManifestEntry {
	t.Helper()
	fs, err := tbl.FS(context.Background())
	require.NoError(t, err)
	ms, err := snap.Manifests(fs)
	require.NoError(t, err)
	out := map[string]ice.ManifestEntry{}
	for _, m := range ms {
		for e, err := range m.Entries(fs, true) {
			require.NoError(t, err)
			out[e.DataFile().FilePath()] = e
		}
	}
	return out
}

// jvmOffsets reads a snapshot summary's offsets as the Apache Iceberg sink's Coordinator does
// (lastCommittedOffsetsForTable): the value of kafka.connect.offsets.<control topic>.<group>,
// read by Jackson as a Map<Integer, Long>: a JSON object whose names are Java ints and whose
// values are Java longs. ok is false when the summary has no such entry.
func jvmOffsets(summary map[string]string, controlTopic, group string) (offs map[int32]int64, ok bool, err error) {
	v, ok := summary["kafka.connect.offsets."+controlTopic+"."+group]
	if !ok {
		return nil, false, nil
	}
	var raw map[string]json.Number
	d := json.NewDecoder(strings.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, true, fmt.Errorf("not a JSON object: %w", err)
	}
	offs = map[int32]int64{}
	for k, n := range raw {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil {
			return nil, true, fmt.Errorf("key %q is not an Integer", k)
		}
		o, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return nil, true, fmt.Errorf("value %q is not a Long", n)
		}
		offs[int32(p)] = o
	}
	return offs, true, nil
}
