// Command groupoffsets prints the sum over a topic's partitions of a consumer group's committed offsets (benchmark
// progress: the records a sink has made durable and committed).
//
//	go run ./internal/benchtools/groupoffsets -bootstrap 127.0.0.1:9092 -group connect-bench -topic t
package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/IBM/sarama"

	"github.com/connectd/connectd/internal/kafka"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "bootstrap servers")
	group := flag.String("group", "", "consumer group")
	topic := flag.String("topic", "", "topic")
	flag.Parse()
	cfg, err := kafka.NewConfig(nil)
	if err != nil {
		log.Fatal(err)
	}
	admin, err := sarama.NewClusterAdmin([]string{*bootstrap}, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer admin.Close()
	res, err := admin.ListConsumerGroupOffsets(*group, nil)
	if err != nil {
		log.Fatal(err)
	}
	var sum int64
	for _, b := range res.Blocks[*topic] {
		if b.Offset > 0 {
			sum += b.Offset
		}
	}
	fmt.Println(sum)
}
