// Command groupoffsets prints the sum over a topic's partitions of a consumer group's committed offsets (benchmark
// progress: the records a sink has made durable and committed).
//
//	go run ./internal/benchtools/groupoffsets -bootstrap 127.0.0.1:9092 -group connect-bench -topic t
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/kafka"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "bootstrap servers")
	group := flag.String("group", "", "consumer group")
	topic := flag.String("topic", "", "topic")
	flag.Parse()
	ctx := context.Background()
	cl, err := kafka.Open(ctx, map[string]string{"bootstrap.servers": *bootstrap})
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).FetchOffsets(ctx, *group)
	if err != nil {
		log.Fatal(err)
	}
	var sum int64
	for _, o := range res[*topic] {
		if o.Err == nil && o.At > 0 {
			sum += o.At
		}
	}
	fmt.Println(sum)
}
