// Command produce writes N fixed-size records into a topic as fast as it can (benchmark input).
//
//	go run ./internal/benchtools/produce -bootstrap 127.0.0.1:9092 -topic t -n 1000000 -size 100 -partitions 3
package main

import (
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/internal/kafka"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "bootstrap servers")
	topic := flag.String("topic", "bench", "topic (created if missing)")
	n := flag.Int("n", 1_000_000, "records")
	size := flag.Int("size", 100, "value bytes")
	partitions := flag.Int("partitions", 3, "partitions when creating the topic")
	flag.Parse()

	cfg, err := kafka.NewConfig(nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := kafka.ApplyProducer(cfg, map[string]string{"acks": "1", "compression.type": "lz4"}); err != nil {
		log.Fatal(err)
	}
	cfg.Producer.Return.Successes = false
	cfg.Producer.Flush.Messages = 5000
	cfg.Producer.Flush.Frequency = 20 * time.Millisecond
	admin, err := sarama.NewClusterAdmin([]string{*bootstrap}, cfg)
	if err != nil {
		log.Fatal(err)
	}
	_ = admin.CreateTopic(*topic, &sarama.TopicDetail{NumPartitions: int32(*partitions), ReplicationFactor: 1}, false)
	admin.Close()
	p, err := sarama.NewAsyncProducer([]string{*bootstrap}, cfg)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for e := range p.Errors() {
			log.Fatal(e)
		}
	}()
	start := time.Now()
	pad := make([]byte, *size)
	for i := range pad {
		pad[i] = 'a' + byte(i%26)
	}
	for i := 0; i < *n; i++ {
		v := []byte(fmt.Sprintf("%012d", i))
		if len(v) < *size {
			v = append(v, pad[:*size-len(v)]...)
		}
		p.Input() <- &sarama.ProducerMessage{Topic: *topic, Value: sarama.ByteEncoder(v)}
	}
	if err := p.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("produced %d records of %d bytes in %s\n", *n, *size, time.Since(start).Round(time.Millisecond))
}
