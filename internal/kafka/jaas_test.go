package kafka

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/xdg-go/scram"
)

func TestParseJAAS(t *testing.T) {
	const scram = "org.apache.kafka.common.security.scram.ScramLoginModule"
	tests := []struct {
		name    string
		in      string
		module  string
		opts    map[string]string
		wantErr string
	}{
		{name: "plain", in: `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`,
			module: "org.apache.kafka.common.security.plain.PlainLoginModule", opts: map[string]string{"username": "alice", "password": "alice-secret"}},
		{name: "scram, spaces and newlines", in: "\n  " + scram + "  required\n\tusername = \"alice\"\n\tpassword = \"s e c\" ;\n",
			module: scram, opts: map[string]string{"username": "alice", "password": "s e c"}},
		{name: "single quotes", in: scram + ` required username='al"ice' password='x';`,
			module: scram, opts: map[string]string{"username": `al"ice`, "password": "x"}},
		{name: "escapes", in: scram + ` required username="a\\b" password="q\"u;o=t\e\101\n";`,
			module: scram, opts: map[string]string{"username": `a\b`, "password": "q\"u;o=teA\n"}},
		{name: "unquoted values", in: scram + ` required username=alice password=pa$$-w0rd.x;`,
			module: scram, opts: map[string]string{"username": "alice", "password": "pa$$-w0rd.x"}},
		{name: "comments", in: scram + " /* the user */ required username=\"alice\" // trailing\n password=\"p/w\";",
			module: scram, opts: map[string]string{"username": "alice", "password": "p/w"}},
		{name: "control flag case-insensitive", in: scram + ` OPTIONAL username="a" password="b";`,
			module: scram, opts: map[string]string{"username": "a", "password": "b"}},
		{name: "no options", in: scram + ` required;`, module: scram, opts: map[string]string{}},
		{name: "empty", in: "  ", wantErr: "login module not specified"},
		{name: "no semicolon", in: scram + ` required username="a" password="b"`, wantErr: "not terminated by semi-colon"},
		{name: "no flag", in: scram, wantErr: "control flag not specified"},
		{name: "bad flag", in: scram + ` mandatory username="a";`, wantErr: "invalid login module control flag 'mandatory'"},
		{name: "no value", in: scram + ` required username=;`, wantErr: "value not specified for key 'username'"},
		{name: "no equals", in: scram + ` required username "a";`, wantErr: "value not specified for key 'username'"},
		{name: "two modules", in: scram + ` required; ` + scram + ` required;`, wantErr: "contains 2 login modules, should be 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := parseJAAS(tc.in)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.module, e.Module)
			require.Equal(t, tc.opts, e.Options)
		})
	}
}

func TestApplySASL(t *testing.T) {
	const scramLine = `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p\"w";`
	tests := []struct {
		name    string
		props   map[string]string
		mech    string
		wantErr string
	}{
		{name: "scram-sha-256", props: map[string]string{"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scramLine}, mech: "SCRAM-SHA-256"},
		{name: "scram-sha-512 lower case", props: map[string]string{"sasl.mechanism": "scram-sha-512", "sasl.jaas.config": scramLine}, mech: "SCRAM-SHA-512"},
		{name: "plain", props: map[string]string{"sasl.mechanism": "PLAIN", "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\"w";`}, mech: "PLAIN"},
		{name: "no mechanism: PLAIN as before", props: map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\"w";`}, mech: "PLAIN"},
		{name: "scram module without mechanism", props: map[string]string{"sasl.jaas.config": scramLine}, wantErr: "sasl.mechanism is not set: set it to SCRAM-SHA-256 or SCRAM-SHA-512"},
		{name: "gssapi", props: map[string]string{"sasl.mechanism": "GSSAPI", "sasl.jaas.config": scramLine}, wantErr: "sasl.mechanism GSSAPI is not supported: use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER"},
		{name: "oauthbearer with unsecured tokens", props: map[string]string{"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="u";`}, wantErr: "unsecured tokens"},
		{name: "no jaas", props: map[string]string{"sasl.mechanism": "SCRAM-SHA-512"}, wantErr: "sasl.jaas.config is required"},
		{name: "no password", props: map[string]string{"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": `x.ScramLoginModule required username="u";`}, wantErr: "needs username and password"},
		{name: "tokenauth", props: map[string]string{"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": `x.ScramLoginModule required username="u" password="p" tokenauth="true";`}, wantErr: "tokenauth=true) is not supported"},
		{name: "bad jaas", props: map[string]string{"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": `x.ScramLoginModule required username="u"`}, wantErr: "not terminated by semi-colon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.props["security.protocol"] = "SASL_PLAINTEXT"
			opts, err := ClientOpts(tc.props)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			cl, err := kgo.NewClient(opts...) // validates the options
			require.NoError(t, err)
			defer cl.Close()
			mechs, ok := cl.OptValue(kgo.SASL).([]sasl.Mechanism)
			require.True(t, ok)
			require.Len(t, mechs, 1)
			require.Equal(t, tc.mech, mechs[0].Name())
			if sm, isSCRAM := mechs[0].(scramMechanism); isSCRAM {
				require.Equal(t, "u", sm.user)
				require.Equal(t, `p"w`, sm.password)
			} else {
				// PLAIN's one message: authzid NUL user NUL password
				_, first, err := mechs[0].Authenticate(context.Background(), "broker")
				require.NoError(t, err)
				require.Equal(t, "\x00u\x00p\"w", string(first))
			}
			require.Equal(t, tc.mech != "PLAIN", isSCRAMMechanism(mechs[0]))
		})
	}
}

func isSCRAMMechanism(m sasl.Mechanism) bool { _, ok := m.(scramMechanism); return ok }

func TestSCRAMClientConversation(t *testing.T) {
	// The client's first message: GS2 header without authzid, escaped user name, a nonce.
	m := scramMechanism{name: "SCRAM-SHA-512", hash: scram.SHA512, user: "a=b,c", password: "pw"}
	sess, first, err := m.Authenticate(context.Background(), "broker")
	require.NoError(t, err)
	require.Regexp(t, `^n,,n=a=3Db=2Cc,r=.+$`, string(first))
	ss, ok := sess.(scramSession)
	require.True(t, ok)
	require.False(t, ss.conv.Done())
}

func TestBrokers(t *testing.T) {
	require.Equal(t, []string{"a:9092", "b:9093", "c:9094", "d:9095"},
		Brokers(map[string]string{"bootstrap.servers": "SASL_SSL://a:9092, ssl://b:9093,PLAINTEXT://c:9094,SASL_PLAINTEXT://d:9095"}))
	require.Equal(t, []string{"localhost:9092"}, Brokers(nil))
}
