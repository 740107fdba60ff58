package props

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	in := `# comment
! also comment
bootstrap.servers=localhost:9092
key.converter : org.apache.kafka.connect.json.JsonConverter
plain value
multi=a,\
   b
escaped\=key=x\ty
unicode=caf\u00e9
empty=
`
	m, err := Parse(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"bootstrap.servers": "localhost:9092",
		"key.converter":     "org.apache.kafka.connect.json.JsonConverter",
		"plain":             "value",
		"multi":             "a,b",
		"escaped=key":       "x\ty",
		"unicode":           "café",
		"empty":             "",
	}, m)
}

func TestFromEnv(t *testing.T) {
	m := FromEnv([]string{"CONNECT_BOOTSTRAP_SERVERS=k:9092", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_PRODUCER_CLIENT__ID=x", "CONNECT_SOME___DASH=y", "PATH=/bin"})
	assert.Equal(t, map[string]string{"bootstrap.servers": "k:9092", "config.storage.topic": "c",
		"producer.client_id": "x", "some-dash": "y"}, m)
}

// TestParseAsJVM: java.util.Properties.load's answers for CR line ends and escaped surrogate pairs.
func TestParseAsJVM(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"a=1\rb=2\r\nc=3\n":       {"a": "1", "b": "2", "c": "3"},
		"a=x\\\r  y\r#c=3\r!d":    {"a": "xy"},
		"a=\\\r\rb":               {"a": "", "b": ""},
		"e=\\ud83d\\ude00!":       {"e": "😀!"},
		"e=\\uD83D\\uDE00\\u0041": {"e": "😀A"},
		"e=\\ud83d \\ude00":       {"e": "\ufffd \ufffd"},
	} {
		m, err := Parse(strings.NewReader(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, m, "%q", in)
	}
}
