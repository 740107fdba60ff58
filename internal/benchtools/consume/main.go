// Command consume reads a topic from its start with the consumer the worker runs (twmb/franz-go), configured
// as the worker configures it (internal/kafka) and polled as a task polls it (max.poll.records 500), and
// prints the CPU it took per million records: what the fetch alone costs a sink task (no conversion, no
// sink).
//
//	go run ./internal/benchtools/consume -bootstrap 127.0.0.1:9092 -topic t -n 10000000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafka"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "bootstrap servers")
	topic := flag.String("topic", "bench", "topic")
	n := flag.Int64("n", 1_000_000, "records to read (the topic must hold at least that many)")
	partBytes := flag.String("max-partition-fetch-bytes", "", "max.partition.fetch.bytes (empty: the worker's default)")
	flag.Parse()

	c0, t0 := cpu(), time.Now()
	bytes := viaFranz(*bootstrap, *topic, *n, *partBytes)
	secs, c := time.Since(t0).Seconds(), (cpu() - c0).Seconds()
	fmt.Printf("franz   %d records (%d value bytes) in %.1fs: %.0f records/s, %.2f CPU-s per million records\n",
		*n, bytes, secs, float64(*n)/secs, c*1e6/float64(*n))
}

func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		log.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// viaFranz reads every partition of the topic with one client configured as a sink task's consumer, in
// polls of max.poll.records.
func viaFranz(bootstrap, topic string, n int64, partBytes string) int64 {
	props := map[string]string{"bootstrap.servers": bootstrap}
	if partBytes != "" {
		props["max.partition.fetch.bytes"] = partBytes
	}
	opts, err := kafka.ConsumerOpts(props)
	if err != nil {
		log.Fatal(err)
	}
	// a group of its own, as a sink task's (the consumer's options commit by hand, which needs one)
	group := fmt.Sprintf("bench-consume-%d", time.Now().UnixNano())
	cl, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic))...)
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	var read, bytes int64
	for read < n {
		fs := cl.PollRecords(context.Background(), 500)
		if errs := fs.Errors(); len(errs) > 0 {
			log.Fatal(errs)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read++
			bytes += int64(len(r.Value))
		})
	}
	return bytes
}
