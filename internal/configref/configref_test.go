package configref

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
)

func TestWrite(t *testing.T) {
	def := connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "host", Type: connect.ConfigString, Default: connect.NoDefault, Importance: connect.High, Doc: "Server host.", Group: "Server"}).
		Define(connect.ConfigKey{Name: "port", Type: connect.ConfigInt, Default: "9000", Validator: connect.Between(1, 65535), Doc: "Server port.", Group: "Server"}).
		Define(connect.ConfigKey{Name: "threads", Type: connect.ConfigInt, Default: "8", DefaultDoc: "cores × 2", Doc: "Worker threads."}).
		Define(connect.ConfigKey{Name: "secret.internal", Type: connect.ConfigString, Default: "", Internal: true})
	var b strings.Builder
	require.NoError(t, Write(&b, Plugin{Title: "Demo sink", Class: "com.example.DemoSink", Aliases: []string{"Demo"}, Version: "1.0", Def: def}))
	out := b.String()
	assert.Contains(t, out, "# Demo sink configuration reference")
	assert.Contains(t, out, "Class: `com.example.DemoSink` (also accepted: `Demo`). Version: 1.0.")
	assert.Contains(t, out, "## Server\n\n### `host`\n\nType: string · required · importance: high\n\nServer host.\n")
	assert.Contains(t, out, "Type: int · default: `9000` · valid values: [1,...,65535] · importance: medium")
	assert.Contains(t, out, "## Other\n\n### `threads`\n\nType: int · default: cores × 2 · importance: medium")
	assert.NotContains(t, out, "secret.internal")
	assert.Less(t, strings.Index(out, "`host`"), strings.Index(out, "`port`"))
}
