package api

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// GET / reports the commit as the JVM's AppInfoParser does: 16 hex digits, or "unknown".
func TestCommitID(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	other := "fedcba9876543210fedcba9876543210fedcba98"
	assert.Equal(t, "0123456789abcdef", commitID([]debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}}, ""))
	assert.Equal(t, "0123456789abcdef", commitID([]debug.BuildSetting{{Key: "vcs.revision", Value: rev}}, other), "the stamped revision wins")
	assert.Equal(t, "fedcba9876543210", commitID([]debug.BuildSetting{{Key: "vcs", Value: "git"}}, other), "-X api.Revision when nothing is stamped")
	assert.Equal(t, "unknown", commitID([]debug.BuildSetting{{Key: "vcs", Value: "git"}}, ""))
	assert.Equal(t, "unknown", commitID(nil, ""))
}

// Without WithVersion a server reports the Kafka Connect version it is compatible with and the build's commit.
func TestServerInfoDefaults(t *testing.T) {
	s := NewServer(nil)
	assert.Equal(t, ConnectVersion, s.version)
	assert.Equal(t, BuildCommit(), s.commit)
}
