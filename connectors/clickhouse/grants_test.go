package clickhouse

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
	"github.com/connectd/connectd/internal/testutil/chdb/chshim"
)

// A missing grant (ACCESS_DENIED, 497) fails the task at once with a message naming the user and the
// grant, instead of a retry loop. chDB has no access management to test real grants with (its default
// user may not CREATE USER, no user directory is configured, impersonation is disabled), so the server's
// answer is injected by the test shim with ClickHouse's wording.
func TestMissingGrantFailsWithoutRetry(t *testing.T) {
	s, srv := engine(t)
	db := chdbtest.Database(t)
	chdbtest.MustExec(t, s, "CREATE TABLE "+db+".t (id UInt64, _version UInt64, is_deleted UInt8) ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id")
	defer srv.SetBeforeInsert(nil)
	defer srv.SetBeforeQuery(nil)
	ctx := context.Background()
	denied := func(grant string) error {
		return &chshim.Exception{Code: 497, Name: "DB::Exception",
			Message: "sinkuser: Not enough privileges. To execute this query, it's necessary to have the grant " + grant + ". (ACCESS_DENIED)"}
	}
	rec := []*connect.SinkRecord{{Topic: "t", Value: map[string]any{"id": 1.0}}}

	for _, tc := range []struct {
		name   string
		kv     []string
		recs   []*connect.SinkRecord
		insert bool
		match  string
		grant  string
	}{
		{"insert", nil, rec, true, "INSERT INTO", "INSERT ON " + db + ".t"},
		{"exactlyOnce state table", []string{"exactlyOnce", "true"}, rec, false, "connect_state", "CREATE TABLE ON " + db + ".connect_state"},
		{"tombstone lookup", []string{"debeziumCDCEnabled", "true"},
			[]*connect.SinkRecord{{Topic: "t", Key: map[string]any{"id": 1.0}}}, false, " FINAL WHERE ", "SELECT(_version) ON " + db + ".t"},
		{"delete marker table", []string{"debeziumCDCEnabled", "true"},
			[]*connect.SinkRecord{{Topic: "t", Key: map[string]any{"id": 1.0}}}, false, "connect_state_tombstones", "CREATE TABLE ON " + db + ".connect_state_tombstones"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			hook := func(q chshim.QueryInfo) error {
				if strings.Contains(q.Body, tc.match) && strings.Contains(q.Body, db) {
					calls.Add(1)
					return denied(tc.grant)
				}
				return nil
			}
			if tc.insert {
				srv.SetBeforeInsert(hook)
			} else {
				srv.SetBeforeQuery(hook)
			}
			defer srv.SetBeforeInsert(nil)
			defer srv.SetBeforeQuery(nil)
			task := startTask(t, props(db, append([]string{"username", "sinkuser", "retryCount", "5"}, tc.kv...)...), &deadLetters{})
			err := task.Put(ctx, tc.recs)
			require.Error(t, err)
			require.False(t, connect.IsRetriable(err), "%v", err)
			require.False(t, connect.IsDataError(err), "a missing grant is not the record's fault: no dead letter")
			var ad *AccessDeniedError
			require.ErrorAs(t, err, &ad)
			require.Contains(t, err.Error(), `user "sinkuser" lacks a grant`)
			require.Contains(t, err.Error(), tc.grant)
			require.Equal(t, int32(1), calls.Load(), "no retry")
		})
	}

	// A table the user may not see reads as missing from system.columns; the message says both.
	task := startTask(t, props(db, "username", "sinkuser"), nil)
	err := task.Put(ctx, []*connect.SinkRecord{{Topic: "invisible", Value: map[string]any{"id": 1.0}}})
	require.ErrorContains(t, err, `does not exist or user "sinkuser" has no grant on it`)
}
