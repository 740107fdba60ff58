package herder

// Task configs: the connector's owner regenerates them and has the leader write them, forwarded over REST when
// the owner is not the leader.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/connectd/connectd/internal/state"
	"github.com/connectd/connectd/internal/store"
)

func (d *Distributed) reconfigure(name string) {
	d.mu.Lock()
	run := d.running[name]
	d.mu.Unlock()
	if !run {
		return
	}
	snap := d.configs.Snapshot()
	props, ok := snap.Connectors[name]
	if !ok {
		return
	}
	if snap.TargetState(name) == state.Paused {
		// DistributedHerder.reconfigureConnector: a connector created paused gets its tasks when resumed
		return
	}
	var cfgs []map[string]string
	if snap.TargetState(name) != state.Stopped {
		var err error
		if cfgs, err = d.w.ConnectorTaskConfigs(name, TasksMax(props)); err != nil {
			slog.Error("task config generation failed", "connector", name, "error", err)
			return
		}
	}
	if sameTaskConfigs(cfgs, snap.Tasks(name)) && !snap.Inconsistent[name] {
		if _, committed := snap.TaskCounts[name]; committed || len(cfgs) > 0 {
			return
		}
	}
	d.writeTaskConfigs(name, cfgs)
}

// sameTaskConfigs compares generated and stored task configs, ignoring task.class: connectd does not use it,
// and task configs written by a JVM worker carry the JVM's task class, which must not be rewritten (a JVM
// worker in the same group, or one taking the cluster back, has to be able to load it).
func sameTaskConfigs(gen, stored []map[string]string) bool {
	if len(gen) != len(stored) {
		return false
	}
	for i := range gen {
		if staleTaskClass(gen[i]["task.class"], stored[i]["task.class"]) {
			return false
		}
		a, b := maps.Clone(gen[i]), maps.Clone(stored[i])
		delete(a, "task.class")
		delete(b, "task.class")
		if !maps.Equal(a, b) {
			return false
		}
	}
	return true
}

// writeTaskConfigs has the leader write a connector's task configs: directly when this worker leads, else
// forwarded. Either runs in the background, so that the herder goes on with other connectors meanwhile (one
// send in flight per connector; a regeneration asked for during it runs after it). Failures are retried
// after a second.
func (d *Distributed) writeTaskConfigs(name string, cfgs []map[string]string) {
	if cfgs == nil {
		cfgs = []map[string]string{}
	}
	retry := func(err error) {
		slog.Warn("writing task configs failed, retrying", "connector", name, "error", err)
		time.AfterFunc(time.Second, func() { d.requestReconfigure(name) })
	}
	self, leaderURL := d.isLeader()
	if !self && leaderURL == "" {
		retry(errors.New("no leader known"))
		return
	}
	d.mu.Lock()
	if d.forwarding[name] {
		d.forwardAgain[name] = true
		d.mu.Unlock()
		return
	}
	d.forwarding[name] = true
	d.mu.Unlock()
	key := d.configs.SessionKey()
	d.sends.Add(1)
	go func() {
		defer d.sends.Done()
		var err error
		if self {
			ctx, cancel := context.WithTimeout(context.Background(), d.ioTimeout())
			err = d.configs.PutTaskConfigs(ctx, name, cfgs)
			cancel()
		} else {
			err = d.forwardTaskConfigs(leaderURL, name, cfgs, key)
		}
		d.mu.Lock()
		again := d.forwardAgain[name]
		delete(d.forwarding, name)
		delete(d.forwardAgain, name)
		d.mu.Unlock()
		switch {
		case err != nil:
			retry(err)
		case again:
			d.requestReconfigure(name)
		}
	}()
}

// forwardTaskConfigs is the JVM's internal POST /connectors/{n}/tasks?forward=false to the leader, signed
// with the session key (X-Connect-Authorization = base64(HMAC-SHA256(key, body))), bounded by ioTimeout.
func (d *Distributed) forwardTaskConfigs(leaderURL, name string, cfgs []map[string]string, key *store.SessionKey) error {
	body, _ := json.Marshal(cfgs)
	ctx, cancel := context.WithTimeout(context.Background(), d.ioTimeout()) // whatever the client's own timeout
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(leaderURL, "/")+"/connectors/"+url.PathEscape(name)+"/tasks?forward=false", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != nil {
		m := hmac.New(sha256.New, key.Key)
		m.Write(body)
		req.Header.Set("X-Connect-Authorization", base64.StdEncoding.EncodeToString(m.Sum(nil)))
		req.Header.Set("X-Connect-Request-Signature-Algorithm", "HmacSHA256")
	}
	resp, err := d.httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body) // lets the connection be reused
	if resp.StatusCode >= 300 {
		return fmt.Errorf("leader answered %s", resp.Status)
	}
	return nil
}

// staleTaskClass reports a stored task class that connectd itself wrote before its plugins declared the JVM's
// task class (`<connector class>$Task`, which no JVM worker can load): such task configs are rewritten once.
// A class written by a JVM worker is left alone.
func staleTaskClass(generated, stored string) bool {
	return generated != "" && stored != generated && strings.HasSuffix(stored, "$Task")
}
