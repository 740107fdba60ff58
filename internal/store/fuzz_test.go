package store

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/state"
)

// javaTaskID is the JVM's KafkaConfigBackingStore.parseTaskId on `task-<rest>` (ASCII digits only).
func javaTaskID(rest string) (state.TaskID, bool) {
	parts := strings.Split("task-"+rest, "-")
	for len(parts) > 0 && parts[len(parts)-1] == "" { // String.split drops trailing empty strings
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 3 {
		return state.TaskID{}, false
	}
	n, err := strconv.ParseInt(parts[len(parts)-1], 10, 32)
	if err != nil {
		return state.TaskID{}, false
	}
	return state.TaskID{Connector: strings.Join(parts[1:len(parts)-1], "-"), Task: int(n)}, true
}

// FuzzParseTaskKey: no panic, and task keys are read as the JVM reads them.
func FuzzParseTaskKey(f *testing.F) {
	for _, s := range []string{"sink-0", "my-sink-12", "a--1", "-0", "0", "", "-", "a-", "a-1-", "a-1--", "a-+1",
		"a-01", "a-2147483647", "a-2147483648", "a--2147483648", "a-9223372036854775808", "a-1x", "a-١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		got, ok := parseTaskKey(rest)
		want, wantOK := javaTaskID(rest)
		if ok != wantOK || got != want {
			t.Fatalf("parseTaskKey(%q) = %v, %v; the JVM reads %v, %v", rest, got, ok, want, wantOK)
		}
	})
}

// FuzzConfigRecord: any config-topic record is applied without panicking or hanging, leaves the store usable
// (a later record still applies) and never leaves a negative task count.
func FuzzConfigRecord(f *testing.F) {
	for _, r := range []struct{ key, value string }{
		{"connector-a", `{"properties":{"connector.class":"FileStreamSink","topics":"t"}}`},
		{"task-a-0", `{"properties":{"task.class":"x"}}`}, {"task-a-2", `{"properties":{}}`},
		{"commit-a", `{"tasks":2}`}, {"commit-a", `{"tasks":3}`}, {"commit-a", `{"tasks":0}`},
		{"commit-a", `{"tasks":-1}`}, {"commit-a", `{"tasks":9223372036854775807}`}, {"commit-a", `{"tasks":1.5}`},
		{"target-state-a", `{"state":"PAUSED","state.v2":"STOPPED"}`}, {"target-state-a", `{"state":"RUNNING"}`},
		{"target-state-a", `{}`}, {"restart-connector-a", `{"include-tasks":true,"only-failed":false}`},
		{"logger-cluster-org.apache", `{"level":"DEBUG"}`},
		{"session-key", `{"key":"c2VjcmV0","algorithm":"HmacSHA256","creation-timestamp":1700000000000}`},
		{"session-key", `{"key":"!!","algorithm":"HmacSHA256","creation-timestamp":-1}`},
		{"connector-a", `{"properties":null}`}, {"task-a-x", `[]`}, {"commit-", `null`}, {"", ``},
	} {
		f.Add(r.key, []byte(r.value), false)
	}
	f.Add("connector-a", []byte(nil), true)
	f.Add("target-state-a", []byte(nil), true)
	f.Fuzz(func(t *testing.T, key string, value []byte, tombstone bool) {
		if tombstone {
			value = nil
		} else if value == nil {
			value = []byte{}
		}
		s := NewConfigStore(&recListener{})
		s.MarkStarted()
		done := make(chan *Snapshot, 1)
		go func() {
			s.Apply(Record{Key: "connector-a", Value: []byte(`{"properties":{"k":"v"}}`), Offset: 0})
			s.Apply(Record{Key: "task-a-0", Value: []byte(`{"properties":{"k":"v"}}`), Offset: 1})
			s.Apply(Record{Key: "commit-a", Value: []byte(`{"tasks":1}`), Offset: 2})
			s.Apply(Record{Key: key, Value: value, Offset: 3})
			s.Apply(Record{Key: "connector-z", Value: []byte(`{"properties":{}}`), Offset: 4})
			snap := s.Snapshot()
			for _, name := range snap.ConnectorNames() {
				snap.Tasks(name)
			}
			done <- snap
		}()
		select {
		case snap := <-done:
			if snap.Offset != 5 || snap.Connectors["connector-z"[len("connector-"):]] == nil {
				t.Fatalf("record %q=%q: a later record was not applied: %+v", key, value, snap)
			}
			for name, n := range snap.TaskCounts {
				if n < 0 {
					t.Fatalf("record %q=%q: connector %s has %d tasks", key, value, name, n)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("record %q=%q: applying it did not finish", key, value)
		}
	})
}
