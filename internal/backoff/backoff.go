// Package backoff waits between retries for no longer than the caller's context lives.
package backoff

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, whichever comes first; it returns ctx's error in the latter case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff is an exponential backoff: Wait sleeps the current delay (context-aware) and doubles it up to Max.
type Backoff struct {
	Initial, Max time.Duration
	next         time.Duration
}

// Wait sleeps the next delay; it returns ctx's error if ctx ends first.
func (b *Backoff) Wait(ctx context.Context) error {
	if b.next == 0 {
		b.next = b.Initial
	}
	d := b.next
	if b.next *= 2; b.next > b.Max {
		b.next = b.Max
	}
	return Sleep(ctx, d)
}

// Reset starts the next Wait at Initial again.
func (b *Backoff) Reset() { b.next = 0 }
