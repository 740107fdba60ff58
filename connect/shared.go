package connect

import (
	"fmt"
	"io"
	"sync"
)

// WorkerValues is implemented by the runtime's SinkTaskContext and ConnectorContext: the SharedValues of the
// worker the plugin instance runs on, the same for every context of that worker. A plugin asserts for it;
// without it, its instances share nothing.
type WorkerValues interface {
	SharedValues() *SharedValues
}

// SharedValues are the values the plugin instances of one worker share, each under a key: what the tasks of
// one connector on a worker use together, such as the Iceberg sink's commit coordinator. The JVM's instances
// share such state through statics of their plugin's class loader; here each worker has its own
// SharedValues, so two workers in one process share nothing, as two processes would, and no plugin keeps
// state in package variables.
//
// A value lives while it has holders: Acquire creates it for the first and hands it to the next ones, and
// the release of the last hold closes it. Keys belong to the plugin: it prefixes them with its package path.
// The zero value is ready to use. SharedValues is safe for concurrent use.
type SharedValues struct {
	mu      sync.Mutex
	entries map[string]*sharedEntry
}

// sharedEntry is one key's value and its holders.
type sharedEntry struct {
	value   io.Closer     // nil while being created
	holders int           // holds not yet released
	ready   chan struct{} // closed when creation ended (the entry has its value, or left the map)
	closing chan struct{} // set when the last hold went; closed once Close returned and the entry left the map
}

// Acquire returns the value under key and the release of this hold. When key has no value, create makes one
// (outside the lock: Acquires of other keys go on, and those of key wait for it); while key's value is
// closing, Acquire waits for its Close to return and then creates a new one, so a key never has two live
// values. create's error is returned as it is and leaves key without a value.
//
// release ends the hold; the one that ends the last hold closes the value and returns Close's error. A
// release called again returns what the first call returned. A value's Close must not acquire its own key.
func (s *SharedValues) Acquire(key string, create func() (io.Closer, error)) (value io.Closer, release func() error, err error) {
	s.mu.Lock()
	if s.entries == nil {
		s.entries = map[string]*sharedEntry{}
	}
	for {
		e := s.entries[key]
		if e == nil {
			break
		}
		wait := e.closing
		if wait == nil && e.value == nil {
			wait = e.ready
		}
		if wait == nil {
			e.holders++
			s.mu.Unlock()
			return e.value, s.releaser(key, e), nil
		}
		s.mu.Unlock()
		<-wait
		s.mu.Lock()
	}
	e := &sharedEntry{holders: 1, ready: make(chan struct{})}
	s.entries[key] = e
	s.mu.Unlock()

	created := false
	defer func() {
		if !created { // an error, or create panicked: the waiters create it themselves
			s.mu.Lock()
			delete(s.entries, key)
			close(e.ready)
			s.mu.Unlock()
		}
	}()
	v, err := create()
	if err == nil && v == nil {
		err = fmt.Errorf("connect: creating the shared value %q gave no value", key)
	}
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	e.value = v
	close(e.ready)
	s.mu.Unlock()
	created = true
	return v, s.releaser(key, e), nil
}

// releaser is the release of one hold on e.
func (s *SharedValues) releaser(key string, e *sharedEntry) func() error {
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() { err = s.release(key, e) })
		return err
	}
}

func (s *SharedValues) release(key string, e *sharedEntry) error {
	s.mu.Lock()
	e.holders--
	if e.holders > 0 {
		s.mu.Unlock()
		return nil
	}
	e.closing = make(chan struct{})
	s.mu.Unlock()
	defer func() { // also when Close panics: the key must not wait forever
		s.mu.Lock()
		delete(s.entries, key) // a closing entry is never replaced: it is still key's
		close(e.closing)
		s.mu.Unlock()
	}()
	return e.value.Close()
}
