package commit

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	ae "github.com/connectd/connectd/connectors/iceberg/commit/apacheevents"
)

// apacheStartCommit is a START_COMMIT event of the Apache Iceberg sink for the group connect-cdc-golden, as
// its own classes encode it (testdata/iceberg/apache-events/capture.sh).
func apacheStartCommit(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "iceberg", "apache-events", "start-commit.b64"))
	require.NoError(t, err)
	ev, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return ev
}

// TestConnectdPayload: connectd-protocol messages travel framed as Apache events (which an Apache sink on the
// same control topic decodes and ignores); plain JSON of earlier versions is still read; an Apache sink event
// of the connector's own group is told apart.
func TestConnectdPayload(t *testing.T) {
	ev := apacheStartCommit(t)
	msg, apache := connectdPayload(ev, "connect-cdc-golden")
	require.True(t, apache)
	require.Nil(t, msg)
	_, apache = connectdPayload(ev, "connect-other")
	require.False(t, apache, "another connector's event")

	own, err := json.Marshal(ctlMsg{Type: ctlStart, Group: "connect-cdc-golden", Round: "r1"})
	require.NoError(t, err)
	framed, err := frameConnectd("connect-cdc-golden", own)
	require.NoError(t, err)
	msg, apache = connectdPayload(framed, "connect-cdc-golden")
	require.False(t, apache)
	require.Equal(t, own, msg)
	msg, apache = connectdPayload(own, "connect-cdc-golden")
	require.False(t, apache)
	require.Equal(t, own, msg, "plain JSON of earlier versions")

	marked, err := ae.Encode(&ae.Event{ID: uuid.New(), Type: ae.StartCommit, Timestamp: nowMicros(), GroupID: "connect-cdc-golden",
		CommitID: uuid.New(), Ext: connectdMark})
	require.NoError(t, err)
	_, apache = connectdPayload(marked, "connect-cdc-golden")
	require.True(t, apache, "a connectd process of the group speaking the apache protocol")

	for _, cut := range []int{3, 40, len(framed) - len(own) - 1} {
		msg, apache = connectdPayload(framed[:cut], "connect-cdc-golden")
		require.False(t, apache)
		require.NotEqual(t, own, msg, "cut at %d", cut)
	}
}
