// Package devmode runs the one-command demo: an embedded Kafka-compatible broker (franz-go's kfake) and a
// producer of Debezium-style CDC events (inserts, updates, deletes, tombstones) for a customers table.
package devmode

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafka"
)

// CustomersTopic is the demo CDC topic (Debezium's topic naming: server.schema.table).
const CustomersTopic = "dbserver1.inventory.customers"

// Broker is the embedded broker.
type Broker struct {
	c    *kfake.Cluster
	Addr string
}

// StartBroker starts an in-process broker on 127.0.0.1:port (port 0 or busy: a free port).
func StartBroker(port int) (*Broker, error) {
	if port != 0 {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
			port = 0
		} else {
			l.Close()
		}
	}
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.SeedTopics(3, CustomersTopic),
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			_, p, _ := net.SplitHostPort(address)
			return net.Listen(network, net.JoinHostPort("127.0.0.1", p))
		})}
	if port != 0 {
		opts = append(opts, kfake.Ports(port))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting embedded broker: %w", err)
	}
	return &Broker{c: c, Addr: c.ListenAddrs()[0]}, nil
}

// Close stops the broker.
func (b *Broker) Close() { b.c.Close() }

// Customer is one row of the demo table.
type Customer struct {
	ID        int32  `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
	Status    string `json:"status"`
	UpdatedAt int64  `json:"updated_at"`
}

var (
	firstNames = []string{"Sally", "George", "Edward", "Anne", "Ada", "Alan", "Grace", "Linus", "Barbara", "Ken"}
	lastNames  = []string{"Thomas", "Bailey", "Walker", "Kretchmar", "Lovelace", "Turing", "Hopper", "Torvalds", "Liskov", "Thompson"}
	statuses   = []string{"active", "suspended", "vip"}
)

// valueSchema is the Connect JSON schema of a row (Debezium's <topic>.Value).
var valueSchema = map[string]any{
	"type": "struct", "optional": true, "name": CustomersTopic + ".Value",
	"fields": []any{
		map[string]any{"field": "id", "type": "int32", "optional": false},
		map[string]any{"field": "first_name", "type": "string", "optional": false},
		map[string]any{"field": "last_name", "type": "string", "optional": false},
		map[string]any{"field": "email", "type": "string", "optional": false},
		map[string]any{"field": "status", "type": "string", "optional": true},
		map[string]any{"field": "updated_at", "type": "int64", "optional": true, "name": "io.debezium.time.MicroTimestamp", "version": 1},
	},
}

func envelopeSchema() map[string]any {
	before := copyMap(valueSchema)
	before["field"] = "before"
	after := copyMap(valueSchema)
	after["field"] = "after"
	return map[string]any{
		"type": "struct", "optional": false, "name": CustomersTopic + ".Envelope", "version": 2,
		"fields": []any{before, after,
			map[string]any{"field": "source", "type": "struct", "optional": false, "name": "io.debezium.connector.postgresql.Source", "fields": []any{
				map[string]any{"field": "version", "type": "string", "optional": false},
				map[string]any{"field": "connector", "type": "string", "optional": false},
				map[string]any{"field": "name", "type": "string", "optional": false},
				map[string]any{"field": "ts_ms", "type": "int64", "optional": false},
				map[string]any{"field": "db", "type": "string", "optional": false},
				map[string]any{"field": "schema", "type": "string", "optional": false},
				map[string]any{"field": "table", "type": "string", "optional": false},
				map[string]any{"field": "txId", "type": "int64", "optional": true},
				map[string]any{"field": "lsn", "type": "int64", "optional": true},
			}},
			map[string]any{"field": "op", "type": "string", "optional": false},
			map[string]any{"field": "ts_ms", "type": "int64", "optional": true},
		},
	}
}

var keySchema = map[string]any{"type": "struct", "optional": false, "name": CustomersTopic + ".Key",
	"fields": []any{map[string]any{"field": "id", "type": "int32", "optional": false}}}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Generator produces a deterministic CDC history over a small customers table.
type Generator struct {
	rnd    *rand.Rand
	rows   map[int32]*Customer
	nextID int32
	lsn    int64
	tx     int64
	// Current is the expected current state after every event produced so far.
	Current map[int32]Customer
}

// NewGenerator starts with an empty table.
func NewGenerator(seed uint64) *Generator {
	return &Generator{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), rows: map[int32]*Customer{}, nextID: 1001, lsn: 33_000_000, tx: 500, Current: map[int32]Customer{}}
}

// Event is one Kafka record: key and value JSON (value nil = tombstone).
type Event struct {
	Key, Value []byte
	ID         int32
	Op         string
}

// Next returns the next event(s): an insert, update or delete (a delete is followed by its tombstone).
func (g *Generator) Next(now time.Time) []Event {
	g.lsn += int64(8 + g.rnd.IntN(400))
	g.tx++
	op := "u"
	switch r := g.rnd.IntN(100); {
	case len(g.rows) < 5 || r < 25:
		op = "c"
	case r < 37:
		op = "d"
	}
	var before, after *Customer
	switch op {
	case "c":
		c := &Customer{ID: g.nextID, FirstName: firstNames[g.rnd.IntN(len(firstNames))], LastName: lastNames[g.rnd.IntN(len(lastNames))], Status: "active"}
		c.Email = fmt.Sprintf("%s.%s.%d@example.com", c.FirstName, c.LastName, c.ID)
		c.UpdatedAt = now.UnixMicro()
		g.nextID++
		g.rows[c.ID] = c
		after = c
	case "u", "d":
		ids := make([]int32, 0, len(g.rows))
		for id := range g.rows {
			ids = append(ids, id)
		}
		// deterministic pick: smallest id at a random rank
		sortInt32(ids)
		c := g.rows[ids[g.rnd.IntN(len(ids))]]
		b := *c
		before = &b
		if op == "u" {
			c.Status = statuses[g.rnd.IntN(len(statuses))]
			c.UpdatedAt = now.UnixMicro()
			a := *c
			after = &a
		} else {
			delete(g.rows, c.ID)
		}
	}
	id := int32(0)
	if after != nil {
		id = after.ID
		g.Current[id] = *after
	} else {
		id = before.ID
		delete(g.Current, id)
	}
	key, _ := json.Marshal(map[string]any{"schema": keySchema, "payload": map[string]any{"id": id}})
	payload := map[string]any{
		"before": rowOrNil(before), "after": rowOrNil(after),
		"source": map[string]any{"version": "2.7.0.Final", "connector": "postgresql", "name": "dbserver1", "ts_ms": now.UnixMilli(),
			"db": "inventory", "schema": "inventory", "table": "customers", "txId": g.tx, "lsn": g.lsn},
		"op": op, "ts_ms": now.UnixMilli(),
	}
	val, _ := json.Marshal(map[string]any{"schema": envelopeSchema(), "payload": payload})
	evs := []Event{{Key: key, Value: val, ID: id, Op: op}}
	if op == "d" {
		evs = append(evs, Event{Key: key, Value: nil, ID: id, Op: "tombstone"})
	}
	return evs
}

func rowOrNil(c *Customer) any {
	if c == nil {
		return nil
	}
	return c
}

func sortInt32(s []int32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Produce writes events every interval until ctx ends (or max events, if > 0); key-hash partitioning keeps
// every customer's changes in one partition, in order.
func Produce(ctx context.Context, bootstrap string, interval time.Duration, max int, onEvent func(Event)) error {
	p, err := kafka.NewProducer(ctx, map[string]string{"bootstrap.servers": bootstrap, "client.id": "devmode-cdc-producer"})
	if err != nil {
		return fmt.Errorf("demo producer: %w", err)
	}
	defer p.Close()
	g := NewGenerator(42)
	n := 0
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, ev := range g.Next(time.Now()) {
			msg := &connect.ProducerRecord{Topic: CustomersTopic, Partition: connect.AnyPartition, Key: ev.Key, Value: ev.Value}
			if err := p.Produce(ctx, msg); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("producing demo event: %w", err)
			}
			if onEvent != nil {
				onEvent(ev)
			}
			n++
		}
		if max > 0 && n >= max {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
