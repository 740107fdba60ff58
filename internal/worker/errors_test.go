package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
)

func TestErrorHandlerRetryAndTolerance(t *testing.T) {
	raw := &kgo.Record{Topic: "t", Partition: 0, Offset: 5}
	cases := []struct {
		name      string
		props     map[string]string
		first     error
		failTimes int // further failures of fn before it succeeds
		wantSkip  bool
		wantErr   bool
		wantCalls int
	}{
		{"retriable recovers within the timeout", map[string]string{"errors.retry.timeout": "5000", "errors.retry.delay.max.ms": "1"}, connect.Retriablef("busy"), 1, false, false, 2},
		{"retriable without retry timeout fails", map[string]string{}, connect.Retriablef("busy"), 0, false, true, 0},
		{"non-retriable is not retried", map[string]string{"errors.retry.timeout": "5000"}, connect.DataErrorf("bad"), 0, false, true, 0},
		{"tolerance all skips", map[string]string{"errors.tolerance": "all"}, connect.DataErrorf("bad"), 0, true, false, 0},
		{"retries exhausted then tolerated", map[string]string{"errors.tolerance": "all", "errors.retry.timeout": "50", "errors.retry.delay.max.ms": "10"}, connect.Retriablef("busy"), 1000, true, false, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := newErrorHandler("c", 0, tc.props, nil)
			require.NoError(t, err)
			calls := 0
			skip, err := h.retry(context.Background(), StageValueConverter, "x.Y", raw, tc.first, func() error {
				calls++
				if calls <= tc.failTimes {
					return connect.Retriablef("still busy")
				}
				return nil
			})
			assert.Equal(t, tc.wantSkip, skip)
			if tc.wantErr {
				var te *ToleranceExceededError
				require.True(t, errors.As(err, &te), "%v", err)
				assert.Equal(t, "Tolerance exceeded in error handler", err.Error())
			} else {
				require.NoError(t, err)
			}
			if tc.wantCalls >= 0 {
				assert.Equal(t, tc.wantCalls, calls)
			}
		})
	}
}

func TestBackoffIsTheJVMs(t *testing.T) {
	h := &errorHandler{maxDelay: 60 * time.Second}
	assert.Equal(t, 300*time.Millisecond, h.backoff(1))
	assert.Equal(t, 600*time.Millisecond, h.backoff(2))
	assert.Equal(t, 1200*time.Millisecond, h.backoff(3))
	for i := 0; i < 20; i++ {
		d := h.backoff(12) // 300ms·2^11 > 60 s → random in [0, max)
		assert.Less(t, d, 60*time.Second)
	}
}

func TestTraceShape(t *testing.T) {
	tr := Trace(fmt.Errorf("put: %w", errors.New("disk on fire")))
	assert.True(t, strings.HasPrefix(tr, "org.apache.kafka.connect.errors.ConnectException: put: disk on fire\n\tat "), tr)
	assert.Contains(t, tr, "\nCaused by: org.apache.kafka.connect.errors.ConnectException: disk on fire")
	tr = Trace(connect.DataErrorf("bad value"))
	assert.True(t, strings.HasPrefix(tr, "org.apache.kafka.connect.errors.DataException: bad value\n\tat "), tr)
}
