package clickhouse

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/cdcstream"
	"github.com/connectd/connectd/internal/testutil/chdb/chdbtest"
)

// Random CDC streams (and the hand-written cases of the model test) through tasks that die at random
// points of the exactly-once protocol (inside an insert, after the insert before its acknowledgement,
// before the AFTER state, after a put before the offset commit); each next task resumes from the last
// committed offset, as after a SIGKILL. The FINAL state must equal the model for every stream. A failure
// prints the seed and the failing stream.
func TestCDCStreamsAcrossCrashPoints(t *testing.T) {
	s, srv := engine(t)
	ctx := context.Background()
	kinds := []killKind{killBeforeInsert, killAfterInsert, killBeforeAfter, killNoCommit}
	cfg := cdcstream.DefaultConfig()
	cfg.BareTombstone = 0.2 // a bare tombstone of a live key resolves to a delete row the first time, to none in a replay
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			var streams []cdcstream.Stream
			for i, c := range cdcstream.KnownCases(true) {
				streams = append(streams, cdcstream.Stream{Prefix: fmt.Sprintf("case%d", i), Events: c.Events})
			}
			for i := 0; i < 30; i++ {
				streams = append(streams, cdcstream.Generate(rng, fmt.Sprintf("s%d", i), cfg))
			}
			var recs []*connect.SinkRecord
			for _, tg := range cdcstream.Interleave(rng, streams) {
				st := streams[tg.Stream]
				k, v := cdcstream.Debezium(st, st.Events[tg.Index])
				r := &connect.SinkRecord{Topic: "cdc", Partition: 0, Offset: int64(len(recs)),
					OriginalTopic: "cdc", OriginalOffset: int64(len(recs))}
				require.NoError(t, json.Unmarshal(k, &r.Key))
				if v != nil {
					require.NoError(t, json.Unmarshal(v, &r.Value))
				}
				recs = append(recs, r)
			}
			db := chdbtest.Database(t)
			chdbtest.MustExec(t, s, "CREATE TABLE "+db+`.customers (id String, name String, qty Int64, updated_at Int64,
				email Nullable(String), _version UInt64, is_deleted UInt8)
				ENGINE = ReplacingMergeTree(_version, is_deleted) ORDER BY id SETTINGS non_replicated_deduplication_window = 1000`)
			p := props(db, "debeziumCDCEnabled", "true", "exactlyOnce", "true", "topic2TableMap", "cdc=customers",
				"batch.max.rows", fmt.Sprint(2+rng.Intn(10)), "retryCount", "1")
			plan := make([]killKind, 4)
			for i := range plan {
				plan[i] = kinds[rng.Intn(len(kinds))]
			}
			defer func() { srv.SetBeforeInsert(nil); srv.SetAfterInsert(nil); srv.SetBeforeQuery(nil) }()
			tp := connect.TopicPartition{Topic: "cdc", Partition: 0}
			committed := int64(0)
			for round := 0; round <= len(plan); round++ {
				cr := &crasher{table: "customers", at: 1 + rng.Intn(6)}
				if round < len(plan) {
					cr.kind = plan[round]
				}
				srv.SetBeforeInsert(cr.before)
				srv.SetAfterInsert(cr.after)
				srv.SetBeforeQuery(cr.query)
				task := startTask(t, p, nil)
				require.NoError(t, task.Open([]connect.TopicPartition{tp}))
				pos, puts, died := committed, 0, false
				for pos < int64(len(recs)) && !died {
					end := min(pos+int64(1+rng.Intn(25)), int64(len(recs)))
					if err := task.Put(ctx, recs[pos:end]); err != nil {
						cr.mu.Lock()
						dead := cr.dead
						cr.mu.Unlock()
						require.True(t, dead, "unexpected failure: %v", err)
						died = true
						break
					}
					pos, puts = end, puts+1
					if cr.kind == killNoCommit && puts >= cr.at*2 {
						died = true
						break
					}
					if rng.Intn(3) == 0 || pos == int64(len(recs)) {
						offs, err := task.PreCommit(ctx, map[connect.TopicPartition]connect.OffsetAndMetadata{tp: {Offset: pos}})
						if err != nil {
							died = true
							break
						}
						committed = offs[tp].Offset
					}
				}
				_ = task.Stop()
				if !died {
					break // every record written (a planned kill that was not reached is fine)
				}
			}
			srv.SetBeforeInsert(nil)
			srv.SetAfterInsert(nil)
			srv.SetBeforeQuery(nil)
			require.Equal(t, int64(len(recs)), committed, "every record committed")

			got := map[string]string{}
			for _, line := range strings.Split(query(t, s, "SELECT id, name, qty, updated_at, ifNull(email, '∅') FROM "+db+".customers FINAL"), "\n") {
				if line == "" {
					continue
				}
				id, rest, _ := strings.Cut(line, "\t")
				got[id] = rest
			}
			for _, st := range streams {
				want := map[string]string{}
				for k, r := range cdcstream.State(st.Events, cdcstream.VersionLSN) {
					email := "∅"
					if r.Email != nil {
						email = *r.Email
					}
					want[st.Prefix+"-"+k] = fmt.Sprintf("%s\t%d\t%d\t%s", tsvEscape(r.Name), r.Qty, r.UpdatedAt, email)
				}
				for _, e := range st.Events {
					full := st.FullKey(e)
					if want[full] != got[full] {
						t.Errorf("seed %d, kills %v: stream %s, key %q: want %q, got %q; stream:\n%s", seed, plan, st.Prefix, full,
							want[full], got[full], cdcstream.Format(st, nil))
						break
					}
				}
			}
		})
	}
}

// tsvEscape escapes a string as ClickHouse's TabSeparated output does.
func tsvEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "'", `\'`).Replace(s)
}
