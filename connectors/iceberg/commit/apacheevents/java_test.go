package apacheevents

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect/avrotype"
)

// javaCheck decodes events with the Apache sink's own classes (Check.java) and returns what Dump prints of
// each, or "error=..." for an event they cannot read. Without a JVM or the jars the test fails under CI=true
// and is skipped otherwise; -short skips it.
func javaCheck(t *testing.T, events [][]byte) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the JVM and the Apache sink's jars: skipped under -short")
	}
	javaCP, err := compileCheck(t.TempDir())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Java check of the encoder cannot run (CI=true): %v", err)
		}
		t.Skipf("the Java check of the encoder cannot run: %v", err)
	}
	var in bytes.Buffer
	for _, b := range events {
		in.WriteString(base64.StdEncoding.EncodeToString(b) + "\n")
	}
	cmd := exec.Command("java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", javaCP, "Check")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "Check.java: %s", stderr.String())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(events), "Check.java output:\n%s", out)
	dumps := make([]string, len(lines))
	for i, l := range lines {
		d, err := base64.StdEncoding.DecodeString(l)
		require.NoError(t, err)
		dumps[i] = string(d)
	}
	return dumps
}

// compileCheck compiles Check.java and Dump.java into dir and returns the classpath that runs them.
func compileCheck(dir string) (string, error) {
	for _, tool := range []string{"java", "javac", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", err
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(goldenDir, "javacp.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("javacp.sh: %v: %s", err, stderr.Bytes())
	}
	cp := strings.TrimSpace(string(out))
	cmd = exec.Command("javac", "-d", dir, "-cp", cp, filepath.Join(goldenDir, "Check.java"), filepath.Join(goldenDir, "Dump.java"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac: %v: %s", err, out)
	}
	return cp + ":" + dir, nil
}

// javaEvents are events of every payload type with what the golden files do not have: the extension
// field, a fixed partition value, names Avro cannot take, null and empty lists.
func javaEvents(t *testing.T) []genEvent {
	ts := time.Date(2025, 6, 7, 8, 9, 10, 123456000, time.UTC)
	before := ts.Add(-time.Hour)
	off := int64(17)
	snap := int64(-5)
	base := func(typ PayloadType) *Event {
		return &Event{ID: uuid.MustParse("11111111-2222-4333-8444-555555555555"), Type: typ, Timestamp: ts,
			GroupID: "grüppe-😀", CommitID: uuid.MustParse("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"), Ext: []byte{0xff, 0}}
	}
	table := TableReference{Catalog: "cat", Namespace: []string{"a", "b.c"}, Name: "tbl"}
	var out []genEvent
	out = append(out, genEvent{e: base(StartCommit)})
	e := base(StartCommit)
	e.Ext = nil
	out = append(out, genEvent{e: e})
	e = base(DataComplete)
	e.Assignments = []TopicPartitionOffset{{Topic: "t", Partition: 3, Offset: &off, Timestamp: &before}, {Topic: "u", Partition: -1}}
	out = append(out, genEvent{e: e})
	e = base(DataComplete)
	e.Assignments = []TopicPartitionOffset{}
	out = append(out, genEvent{e: e})
	out = append(out, genEvent{e: base(DataComplete)})
	e = base(CommitToTable)
	e.Table, e.SnapshotID, e.ValidThrough = table, &snap, &before
	out = append(out, genEvent{e: e})
	e = base(CommitToTable)
	e.Table = TableReference{Name: "x", Namespace: []string{}}
	out = append(out, genEvent{e: e})
	e = base(CommitComplete)
	e.ValidThrough = &before
	out = append(out, genEvent{e: e})
	out = append(out, genEvent{e: base(CommitComplete)})

	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "fx", Type: iceberg.FixedTypeOf(3)},
		iceberg.NestedField{ID: 2, Name: "1 ä😀", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "dec", Type: iceberg.DecimalTypeOf(20, 4)},
		iceberg.NestedField{ID: 4, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 5, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp})
	spec := iceberg.NewPartitionSpecID(3,
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "fx", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "1 ä😀", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1002, Name: "dec", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1003, Name: "u", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1004, Name: "u_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}},
		iceberg.PartitionField{SourceIDs: []int{5}, FieldID: 1005, Name: "ts_day", Transform: iceberg.DayTransform{}})
	r := rand.New(rand.NewPCG(1, 2))
	e = base(DataWritten)
	e.Table, e.PartitionType = table, *spec.PartitionType(sc)
	e.DataFiles = []iceberg.DataFile{genFile(r, spec, &e.PartitionType, false), genFile(r, spec, &e.PartitionType, false)}
	e.DeleteFiles = []iceberg.DataFile{genFile(r, spec, &e.PartitionType, true), genFile(r, spec, &e.PartitionType, true)}
	out = append(out, genEvent{e: e, spec: spec, schema: sc})
	e = base(DataWritten)
	e.Table, e.DataFiles, e.DeleteFiles = table, []iceberg.DataFile{}, nil
	out = append(out, genEvent{e: e, spec: *iceberg.UnpartitionedSpec, schema: sc})
	return out
}

// TestJavaDecodesGo: the Apache sink's classes read what Encode writes into the same events.
func TestJavaDecodesGo(t *testing.T) {
	events := javaEvents(t)
	seed := seedOf(t)
	events = append(events, genEvents(rand.New(rand.NewPCG(seed, 1)), 200)...)
	var encoded [][]byte
	for i, g := range events {
		b, err := Encode(g.e)
		require.NoError(t, err, "event %d", i)
		encoded = append(encoded, b)
	}
	encoded = append(encoded, withUnknownField(t))
	got := javaCheck(t, encoded)
	for i, g := range events {
		require.Equal(t, dump(t, g.e, g.e.DataFiles, g.e.DeleteFiles), got[i], "seed %d event %d", seed, i)
	}
	require.Equal(t, "error=java.lang.UnsupportedOperationException: Unknown field ordinal: 5\n", got[len(events)],
		"an event field the Java classes do not know: why Event.Ext is not one")
}

// withUnknownField is a StartCommit event with a field of an id the Java Event class does not know.
func withUnknownField(t *testing.T) []byte {
	sch, err := eventSchema(StartCommit, nil)
	require.NoError(t, err)
	sch.fields = append(sch.fields, fld(10_590, "connectd_ext", true, primitive(avrotype.Bytes)))
	id := uuid.New()
	payload := newRecord(sch.fields[sch.fieldByID(idEventPayload)].typ, map[int]any{idStartCommitCommit: id[:]})
	b, err := appendJavaUTF(append([]byte(nil), magic...), schemaJSON(sch))
	require.NoError(t, err)
	w := writer{b: b}
	require.NoError(t, w.value(sch, newRecord(sch, map[int]any{idEventID: id[:], idEventType: int32(StartCommit),
		idEventTimestamp: int64(1), idEventGroupID: "g", idEventPayload: payload, 10_590: []byte{1}})))
	e, err := Decode(w.b)
	require.NoError(t, err, "the Go reader skips it")
	require.Equal(t, id, e.CommitID)
	return w.b
}
