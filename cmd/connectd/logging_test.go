package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/logging"
)

// The worker's logs go through a named logger that /admin/loggers lists and whose level it changes.
func TestRuntimeLogsThroughNamedLogger(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	setupLogging()
	lv, ok := logging.Default.AllLevels()[runtimeLogger]
	require.True(t, ok, "GET /admin/loggers lists the runtime's logger")
	assert.Equal(t, "INFO", lv.Level)
	assert.False(t, slog.Default().Enabled(context.Background(), slog.LevelDebug))
	_, err := logging.Default.SetLevel("org.apache.kafka.connect", "DEBUG")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = logging.Default.SetLevel("org.apache.kafka.connect", "INFO") })
	assert.True(t, slog.Default().Enabled(context.Background(), slog.LevelDebug))
}
