package logging

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func levels(m map[string]Level) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v.Level
	}
	return out
}

// AllLevels lists every logger created so far, with its effective level, as the JVM's log4j2 Loggers.allLevels:
// not only the root and those given a level.
func TestAllLevelsListsCreatedLoggers(t *testing.T) {
	r := New(slog.NewTextHandler(io.Discard, nil), slog.LevelInfo)
	r.Logger("org.apache.kafka.connect.runtime.WorkerSinkTask")
	r.Logger("org.apache.kafka.connect.runtime.rest.RestServer")
	r.Configure("org.reflections", slog.LevelError)
	assert.Equal(t, map[string]string{
		"org.apache.kafka.connect.runtime.WorkerSinkTask":  "INFO",
		"org.apache.kafka.connect.runtime.rest.RestServer": "INFO",
		"org.reflections": "ERROR",
		"root":            "INFO",
	}, levels(r.AllLevels()))

	_, err := r.SetLevel("org.apache.kafka.connect", "DEBUG")
	require.NoError(t, err)
	_, err = r.SetLevel("org.reflections", "OFF")
	require.NoError(t, err)
	all := r.AllLevels()
	assert.Equal(t, map[string]string{
		"org.apache.kafka.connect":                         "DEBUG",
		"org.apache.kafka.connect.runtime.WorkerSinkTask":  "DEBUG",
		"org.apache.kafka.connect.runtime.rest.RestServer": "DEBUG",
		"root": "INFO",
	}, levels(all), "a logger that is OFF is left out, as the JVM filters Level.OFF")
	assert.NotNil(t, all["org.apache.kafka.connect"].LastModified)
}
