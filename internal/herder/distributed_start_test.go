package herder

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDistributedRESTBeforeStart: REST calls that arrive before the worker has read the config topic (the
// listener is up before the herder starts) wait for it under their own deadline instead of failing on
// state that does not exist yet.
func TestDistributedRESTBeforeStart(t *testing.T) {
	d := NewDistributed(&DistributedConfig{SessionTimeout: 10 * time.Second}, "http://127.0.0.1:1/", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := d.Connectors(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = d.ConnectorStatus(ctx, "c")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	_, err = d.ConnectorInfo(ctx, "c")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, d.Healthy(ctx), ErrNotReady)

	close(d.started) // what Start does once the config topic was read
	names, err := d.Connectors(context.Background())
	require.NoError(t, err)
	require.Empty(t, names)
}
