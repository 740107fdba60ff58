package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/kafka"
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
	parts := map[string]map[int32]kgo.Offset{}
	next := map[tp]int64{}
	for _, r := range ranges {
		if parts[r.TP.Topic] == nil {
			parts[r.TP.Topic] = map[int32]kgo.Offset{}
		}
		parts[r.TP.Topic][r.TP.Partition] = kgo.NewOffset().At(r.From)
		next[r.TP] = r.From
	}
	cl, err := kafka.Open(ctx, clientProps(bootstrap), kgo.ConsumePartitions(parts))
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	defer cl.Close()
	ends := map[tp]int64{}
	for _, r := range ranges {
		ends[r.TP] = r.To
	}
	pending := func() (tp, bool) {
		for _, r := range ranges {
			if next[r.TP] < r.To {
				return r.TP, true
			}
		}
		return tp{}, false
	}
	for {
		k, ok := pending()
		if !ok {
			return out, nil
		}
		// each poll must make progress within 30s
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		fs := cl.PollFetches(pctx)
		timedOut := pctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if timedOut {
			return nil, fmt.Errorf("kafka: %s: offsets %d..%d not readable within 30s", k, next[k], ends[k])
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("kafka: %s: %w", tp{Topic: t, Partition: p}, err)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(m *kgo.Record) {
			t := tp{Topic: m.Topic, Partition: m.Partition}
			if ferr != nil || m.Offset < next[t] {
				return
			}
			if m.Offset >= ends[t] {
				next[t] = max(next[t], ends[t])
				return
			}
			next[t] = m.Offset + 1
			k, err := recordKey(m.Key, keyCols)
			if err != nil {
				ferr = fmt.Errorf("kafka: %s offset %d: %w", t, m.Offset, err)
				return
			}
			out[k] = true
		})
		if ferr != nil {
			return nil, ferr
		}
	}
}

// clientProps are the client properties of the reconcile tool's Kafka clients.
func clientProps(bootstrap string) map[string]string {
	return map[string]string{"bootstrap.servers": bootstrap, "client.id": "connectd-reconcile"}
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

// groupOffsets reads the committed offsets of a consumer group (the ClickHouse connector's `connect-<name>`).
func groupOffsets(bootstrap, group string) (map[tp]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kafka.Open(ctx, clientProps(bootstrap))
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("kafka: offsets of group %s: %w", group, err)
	}
	out := map[tp]int64{}
	for _, o := range resp.Sorted() {
		if o.Err != nil {
			return nil, fmt.Errorf("kafka: offsets of group %s, %s/%d: %w", group, o.Topic, o.Partition, o.Err)
		}
		if o.At >= 0 {
			out[tp{Topic: o.Topic, Partition: o.Partition}] = o.At
		}
	}
	return out, nil
}
