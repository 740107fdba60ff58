package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// BenchmarkLogWriteReadBack is one config change as the herder makes it: a batch of records written (a
// connector's task configs and commit) and read back to the end.
//
//	scripts/with-kafka.sh go test -run '^$' -bench LogWriteReadBack ./internal/store/
func BenchmarkLogWriteReadBack(b *testing.B) {
	topic := fmt.Sprintf("bench-log-%d", time.Now().UnixNano())
	lg, err := NewLog(map[string]string{"bootstrap.servers": kafkatest.Bootstrap(b)}, topic, func(Record) {})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	if resp, err := kadm.NewClient(lg.Client()).CreateTopic(b.Context(), 1, 1, nil, topic); err != nil || resp.Err != nil {
		b.Fatal(err, resp.Err)
	}
	if err := lg.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	recs := make([]Record, 7)
	for i := range recs {
		recs[i] = Record{Key: fmt.Sprintf("task-c-%d", i), Value: []byte(`{"properties":{"topics":"t","file":"/tmp/x"}}`)}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := lg.SendAll(recs); err != nil {
			b.Fatal(err)
		}
		if err := lg.ReadToEnd(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
