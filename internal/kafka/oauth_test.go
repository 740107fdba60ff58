package kafka

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/securekafka"
)

// fakeJWT is an unsigned token with an exp claim: the client reads exp only to know when to renew.
func fakeJWT(exp time.Time, sub string) string {
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"sub": sub, "exp": exp.Unix()})
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(claims) + ".sig"
}

// tokenEndpoint is an OAuth server's token endpoint for the client credentials grant, checking the request as
// an OAuth server does.
func tokenEndpoint(t *testing.T, expiresIn int, tokenLife time.Duration, wantUser, wantPass string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		user, pass, ok := r.BasicAuth()
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if !ok || user != wantUser || pass != wantPass {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		require.NoError(t, r.ParseForm())
		if r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "kafka connect" {
			http.Error(w, "bad form "+r.PostForm.Encode(), http.StatusBadRequest)
			return
		}
		body := map[string]any{"access_token": fakeJWT(time.Now().Add(tokenLife), fmt.Sprintf("call-%d", n)), "token_type": "Bearer"}
		if expiresIn > 0 {
			body["expires_in"] = expiresIn
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func oauthProps(endpoint, jaasOptions string) map[string]string {
	return map[string]string{
		"security.protocol":                   "SASL_SSL",
		"sasl.mechanism":                      "OAUTHBEARER",
		"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
		"sasl.oauthbearer.token.endpoint.url": endpoint,
		"sasl.jaas.config":                    oauthLoginModule + " required " + jaasOptions + ";",
	}
}

const oauthJAAS = `clientId="connect worker" clientSecret="s3cr:t" scope="kafka connect" extension_logicalCluster="lkc-1"`

// initialResponse is the client's first OAUTHBEARER message (RFC 7628) for props.
func initialResponse(t *testing.T, props map[string]string) string {
	t.Helper()
	c, err := saslCredentials(props)
	require.NoError(t, err)
	_, first, err := c.oauth.mechanism().Authenticate(context.Background(), "broker:9093")
	require.NoError(t, err)
	return string(first)
}

// The JVM's OAUTHBEARER client settings fetch a token with the client credentials grant, which the
// client sends with the JAAS extensions, and reuse it until 80% of its life has passed.
func TestOAuthBearerClientCredentials(t *testing.T) {
	srv, calls := tokenEndpoint(t, 3600, time.Hour, "connect worker", "s3cr:t")
	props := oauthProps(srv.URL+"/oauth2/token", oauthJAAS)
	_, err := ClientOpts(props)
	require.NoError(t, err)

	c, err := saslCredentials(props)
	require.NoError(t, err)
	mech := c.oauth.mechanism()
	require.Equal(t, "OAUTHBEARER", mech.Name())
	_, first, err := mech.Authenticate(context.Background(), "broker:9093")
	require.NoError(t, err)
	parts := strings.Split(string(first), "\x01")
	require.Equal(t, "n,,", parts[0])
	require.True(t, strings.HasPrefix(parts[1], "auth=Bearer "), "%q", first)
	require.Contains(t, parts[1], ".", "the token the endpoint issued")
	require.Contains(t, parts, "logicalCluster=lkc-1", "JAAS extension_ options are SASL extensions")
	_, again, err := mech.Authenticate(context.Background(), "broker:9093")
	require.NoError(t, err)
	require.Equal(t, string(first), string(again), "the token is reused")
	require.EqualValues(t, 1, calls.Load())

	// the 3.x handler name, and a token without expires_in that is renewed by its exp claim
	srv2, calls2 := tokenEndpoint(t, 0, 100*time.Millisecond, "connect+worker", "s3cr%3At")
	props = oauthProps(srv2.URL, oauthJAAS)
	props["sasl.login.callback.handler.class"] = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	props["sasl.oauthbearer.header.urlencode"] = "true" // RFC 6749's encoding, off by default as in the JVM
	c, err = saslCredentials(props)
	require.NoError(t, err)
	mech = c.oauth.mechanism()
	_, first, err = mech.Authenticate(context.Background(), "b")
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond) // exp has a resolution of seconds
	_, again, err = mech.Authenticate(context.Background(), "b")
	require.NoError(t, err)
	require.NotEqual(t, string(first), string(again), "an expiring token is renewed")
	require.EqualValues(t, 2, calls2.Load())

	// the client credentials as the JVM's sasl.oauthbearer.client.credentials.* and sasl.oauthbearer.scope keys
	props = oauthProps(srv.URL, "")
	props["sasl.oauthbearer.client.credentials.client.id"] = "connect worker"
	props["sasl.oauthbearer.client.credentials.client.secret"] = "s3cr:t"
	props["sasl.oauthbearer.scope"] = "kafka connect"
	require.Contains(t, initialResponse(t, props), "auth=Bearer ")
	require.EqualValues(t, 2, calls.Load())

	// a file URL holds the token itself
	tokFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokFile, []byte("file-token\n"), 0o600))
	require.Contains(t, initialResponse(t, oauthProps("file://"+tokFile, "")), "auth=Bearer file-token\x01")

	// the endpoint refusing the client: the cause reaches the client's error
	c, err = saslCredentials(oauthProps(srv.URL, `clientId="other" clientSecret="x" scope="kafka connect"`))
	require.NoError(t, err)
	_, _, err = c.oauth.mechanism().Authenticate(context.Background(), "b")
	require.ErrorContains(t, err, "401 Unauthorized")
	require.ErrorContains(t, err, "invalid_client")
}

// OAUTHBEARER settings connectd does not support are start-up errors naming what to set.
func TestOAuthBearerUnsupported(t *testing.T) {
	good := oauthProps("https://idp.example/token", oauthJAAS)
	with := func(k, v string) map[string]string {
		p := map[string]string{}
		for key, val := range good {
			p[key] = val
		}
		if v == "" {
			delete(p, k)
		} else {
			p[k] = v
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"unsecured tokens", with("sasl.login.callback.handler.class", ""), "unsecured tokens"},
		{"other handler", with("sasl.login.callback.handler.class", "com.example.MyHandler"), "sasl.login.callback.handler.class com.example.MyHandler is not supported"},
		{"no endpoint", with("sasl.oauthbearer.token.endpoint.url", ""), "sasl.oauthbearer.token.endpoint.url is required"},
		{"jwt bearer grant", with("sasl.oauthbearer.jwt.retriever.class", "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"), "only the client credentials grant"},
		{"urlencode", with("sasl.oauthbearer.header.urlencode", "yes"), "sasl.oauthbearer.header.urlencode"},
		{"endpoint scheme", with("sasl.oauthbearer.token.endpoint.url", "ftp://idp/token"), "use an http, https or file URL"},
		{"no client secret", with("sasl.jaas.config", oauthLoginModule+` required clientId="a";`), "clientId and clientSecret"},
		{"other login module", with("sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`), "needs the login module"},
		{"module without mechanism", with("sasl.mechanism", ""), "set it to OAUTHBEARER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ClientOpts(tc.props)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A broker validating OAUTHBEARER tokens against the OAuth server's keys accepts the clients of the JVM's
// OAUTHBEARER settings (a producer, the admin and a consumer), each with a token the client fetched, and
// refuses a client whose credentials the OAuth server refuses, with the server's answer.
func TestOAuthBearerAgainstBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a Kafka broker: skipped under -short")
	}
	o := securekafka.StartOAuthServer(t)
	addr := securekafka.StartOAuthBroker(t, o).SASLPlain
	tokenURL, issued := o.TokenURL, o.Issued
	props := map[string]string{
		"bootstrap.servers":                   addr,
		"security.protocol":                   "SASL_PLAINTEXT",
		"sasl.mechanism":                      "OAUTHBEARER",
		"sasl.login.callback.handler.class":   oauthLoginHandler,
		"sasl.oauthbearer.token.endpoint.url": tokenURL,
		"sasl.jaas.config":                    securekafka.OAuthJAAS,
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := kafkatest.UniqueName(t, "oauth")
	clients := PluginClients{}
	admin, err := clients.NewTopicAdmin(props)
	require.NoError(t, err, "admin")
	require.NoError(t, admin.EnsureTopic(ctx, connect.TopicSpec{Name: topic, Partitions: 1, ReplicationFactor: 1}))
	admin.Close()
	producer, err := clients.NewProducer(props)
	require.NoError(t, err, "producer")
	require.NoError(t, producer.Produce(ctx, &connect.ProducerRecord{Topic: topic, Value: []byte("over oauth")}))
	producer.Close()
	copts, err := ClientOpts(props)
	require.NoError(t, err)
	got := kafkatest.ConsumeAll(t, addr, topic, 1, 30*time.Second, copts...)
	require.Len(t, got, 1)
	require.Equal(t, "over oauth", string(got[0].Value))
	require.GreaterOrEqual(t, issued.Load(), int32(3), "each client fetched its token")

	bad := map[string]string{}
	for k, v := range props {
		bad[k] = v
	}
	bad["sasl.jaas.config"] = oauthLoginModule + ` required clientId="connect" clientSecret="wrong";`
	err = connectErr(t, addr, bad)
	require.Error(t, err)
	t.Logf("error: %v", err)
	require.ErrorContains(t, err, "invalid_client")
}
