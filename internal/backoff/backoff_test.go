package backoff

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSleepEndsWithContext: a wait never outlives its context.
func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	require.ErrorIs(t, Sleep(ctx, time.Hour), context.Canceled)
	require.Less(t, time.Since(start), time.Minute)
	require.NoError(t, Sleep(context.Background(), time.Millisecond))
}

// TestBackoffDoublesUpToMax: the delays double from Initial, stay at Max, and start over after Reset.
func TestBackoffDoublesUpToMax(t *testing.T) {
	b := Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}
	var got []time.Duration
	for range 5 {
		got = append(got, b.next)
		require.NoError(t, b.Wait(context.Background()))
	}
	require.Equal(t, []time.Duration{0, 2, 4, 5, 5}, scale(got))
	b.Reset()
	require.Zero(t, b.next)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Wait(ctx), context.Canceled)
}

func scale(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Millisecond
	}
	return out
}
