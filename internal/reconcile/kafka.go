package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// offsetRange is [From, To) of one topic-partition.
type offsetRange struct {
	TP       tp
	From, To int64
}

// inFlightRanges are the records one layer holds and the other may not: between the compared snapshot's
// offsets and ClickHouse's, and the whole of a block the ClickHouse sink has in flight.
func inFlightRanges(cut Cut, ch chOffsets, cutOff map[tp]int64) []offsetRange {
	var out []offsetRange
	for _, p := range cut.Partitions {
		k := tp{Topic: p.Topic, Partition: p.Partition}
		a, b := cutOff[k], ch.next[k]
		lo, hi := min(a, b), max(a, b)
		if ch.inFlight[k] {
			hi = max(hi, ch.end[k])
		}
		if hi > lo {
			out = append(out, offsetRange{TP: k, From: lo, To: hi})
		}
	}
	return out
}

// inFlightKeys reads the records of ranges from Kafka and returns the display keys (keyText) they touch.
// Record keys are JSON, as the JsonConverter writes them (with or without a schema envelope): an object
// holding the key columns, or a bare value for a single key column.
func inFlightKeys(ctx context.Context, bootstrap string, ranges []offsetRange, keyCols []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ranges) == 0 {
		return out, nil
	}
	cfg := sarama.NewConfig()
	cfg.ClientID = "connectd-reconcile"
	cfg.Consumer.Return.Errors = true
	c, err := sarama.NewConsumer(splitList(bootstrap), cfg)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	defer c.Close()
	for _, r := range ranges {
		pc, err := c.ConsumePartition(r.TP.Topic, r.TP.Partition, r.From)
		if err != nil {
			return nil, fmt.Errorf("kafka: reading %s from %d: %w", r.TP, r.From, err)
		}
		err = func() error {
			defer pc.Close()
			timeout := time.NewTimer(30 * time.Second)
			defer timeout.Stop()
			for next := r.From; next < r.To; {
				select {
				case m := <-pc.Messages():
					next = m.Offset + 1
					if m.Offset >= r.To {
						return nil
					}
					k, err := recordKey(m.Key, keyCols)
					if err != nil {
						return fmt.Errorf("kafka: %s offset %d: %w", r.TP, m.Offset, err)
					}
					out[k] = true
				case err := <-pc.Errors():
					return fmt.Errorf("kafka: %s: %w", r.TP, err)
				case <-timeout.C:
					return fmt.Errorf("kafka: %s: offsets %d..%d not readable within 30s", r.TP, next, r.To)
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func recordKey(raw []byte, keyCols []string) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		if len(keyCols) == 1 {
			return string(raw), nil // a String key
		}
		return "", fmt.Errorf("record key is not JSON: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		if pl, ok := m["payload"]; ok && m["schema"] != nil {
			v = pl
		}
	}
	texts := make([]string, len(keyCols))
	m, isMap := v.(map[string]any)
	for i, c := range keyCols {
		x := v
		if isMap {
			x = m[c]
		} else if len(keyCols) > 1 {
			return "", fmt.Errorf("record key %s does not name the key columns", raw)
		}
		switch y := x.(type) {
		case string:
			texts[i] = y
		case json.Number:
			texts[i] = y.String()
		case bool:
			texts[i] = fmt.Sprint(y)
		case nil:
			texts[i] = nullText
		default:
			b, _ := json.Marshal(y)
			texts[i] = string(b)
		}
	}
	return keyText(keyCols, texts), nil
}

func splitList(s string) []string { return list(s) }

// groupOffsets reads the committed offsets of a consumer group (the ClickHouse connector's `connect-<name>`).
func groupOffsets(bootstrap, group string) (map[tp]int64, error) {
	cfg := sarama.NewConfig()
	cfg.ClientID = "connectd-reconcile"
	admin, err := sarama.NewClusterAdmin(splitList(bootstrap), cfg)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	defer admin.Close()
	resp, err := admin.ListConsumerGroupOffsets(group, nil)
	if err != nil {
		return nil, fmt.Errorf("kafka: offsets of group %s: %w", group, err)
	}
	out := map[tp]int64{}
	for topic, parts := range resp.Blocks {
		for p, b := range parts {
			if b.Err != sarama.ErrNoError {
				return nil, fmt.Errorf("kafka: offsets of group %s, %s/%d: %w", group, topic, p, b.Err)
			}
			if b.Offset >= 0 {
				out[tp{Topic: topic, Partition: p}] = b.Offset
			}
		}
	}
	return out, nil
}
