// Command produce writes N fixed-size records into a topic as fast as it can (benchmark input).
//
//	go run ./internal/benchtools/produce -bootstrap 127.0.0.1:9092 -topic t -n 1000000 -size 100 -partitions 3
//
// With -json the values are flat schemaless JSON objects of about -size bytes (9 fields: id, name, email,
// region, amount, qty, ts, version and a padding string note), one distinct id per record. With -keys K as well,
// record i updates key i mod K (its Kafka key and id) at version i: the last K records hold every key's final state.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "bootstrap servers")
	topic := flag.String("topic", "bench", "topic (created if missing)")
	n := flag.Int("n", 1_000_000, "records")
	size := flag.Int("size", 100, "value bytes")
	partitions := flag.Int("partitions", 3, "partitions when creating the topic")
	asJSON := flag.Bool("json", false, "flat JSON objects instead of fixed bytes")
	keys := flag.Int("keys", 0, "with -json: record i is key i mod keys at version i (0: a distinct id per record)")
	flag.Parse()

	ctx := context.Background()
	props := map[string]string{"bootstrap.servers": *bootstrap, "acks": "1", "compression.type": "lz4", "linger.ms": "20"}
	popts, err := kafka.ProducerOpts(props)
	if err != nil {
		log.Fatal(err)
	}
	cl, err := kafka.Open(ctx, props, append(popts, kgo.MaxBufferedRecords(100_000))...)
	if err != nil {
		log.Fatal(err)
	}
	if err := kafka.EnsureTopic(ctx, cl, connect.TopicSpec{Name: *topic, Partitions: int32(*partitions), ReplicationFactor: 1}); err != nil {
		log.Fatal(err)
	}
	failed := func(_ *kgo.Record, err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	start := time.Now()
	pad := make([]byte, *size)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	for i := 0; i < *n; i++ {
		var v []byte
		var k []byte
		if *asJSON && *keys > 0 {
			v = jsonUpdate(i, *keys, *size, pad)
			k = strconv.AppendInt(nil, int64(i%*keys), 10)
		} else if *asJSON {
			v = jsonRecord(i, *size, pad)
		} else {
			v = []byte(fmt.Sprintf("%012d", i))
			if len(v) < *size {
				v = append(v, pad[:*size-len(v)]...)
			}
		}
		cl.Produce(ctx, &kgo.Record{Topic: *topic, Key: k, Value: v}, failed)
	}
	if err := cl.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	cl.Close()
	fmt.Printf("produced %d records of %d bytes in %s\n", *n, *size, time.Since(start).Round(time.Millisecond))
}

var regions = []string{"eu-west", "us-east", "ap-south"}

// jsonRecord is one flat JSON object of about size bytes (the note field pads it).
func jsonRecord(i, size int, pad []byte) []byte { return jsonObject(i, i, i%5, size, pad) }

// jsonUpdate is record i of a stream of updates of keys keys.
func jsonUpdate(i, keys, size int, pad []byte) []byte { return jsonObject(i, i%keys, i, size, pad) }

func jsonObject(i, id, version, size int, pad []byte) []byte {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339)
	v := fmt.Appendf(nil, `{"id":%d,"name":"customer-%07d","email":"customer-%07d@example.com","region":"%s","amount":%d.%02d,"qty":%d,"ts":"%s","version":%d,"note":"`,
		id, i%1000000, i%1000000, regions[i%len(regions)], i%100000, i%100, i%17, ts, version)
	if n := size - len(v) - 2; n > 0 {
		v = append(v, pad[:min(n, len(pad))]...)
	}
	return append(v, '"', '}')
}
