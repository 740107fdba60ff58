package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// BenchmarkLogWriteReadBack is one config change as the herder makes it: a batch of records written (a
// connector's task configs and commit) and read back to the end.
//
//	scripts/with-kafka.sh go test -run '^$' -bench LogWriteReadBack ./internal/store/
func BenchmarkLogWriteReadBack(b *testing.B) {
	c := sarama.NewConfig()
	c.Version = sarama.V3_6_0_0
	topic := fmt.Sprintf("bench-log-%d", time.Now().UnixNano())
	lg, err := NewLog([]string{kafkatest.Bootstrap(b)}, c, topic, func(Record) {})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	a, err := sarama.NewClusterAdminFromClient(lg.Client())
	if err != nil {
		b.Fatal(err)
	}
	if err := a.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		b.Fatal(err)
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
