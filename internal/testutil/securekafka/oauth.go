package securekafka

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// OAuth client credentials the OAuth server accepts, and the JAAS line of a JVM client using them.
const (
	OAuthClientID     = "connect"
	OAuthClientSecret = "connect-secret"
	OAuthJAAS         = `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="connect" clientSecret="connect-secret" scope="kafka";`
	oauthAudience     = "connectd-test-cluster"
	oauthIssuer       = "connectd-test-idp"
)

// OAuthServer is an OAuth server for a broker: a JWKS endpoint with one RSA key and a token endpoint that
// issues RS256 tokens signed by it for the client credentials grant of OAuthClientID.
type OAuthServer struct {
	JWKSURL, TokenURL string
	Issued            *atomic.Int32 // tokens issued
}

// StartOAuthServer serves one until the test ends.
func StartOAuthServer(t testing.TB) OAuthServer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	enc := base64.RawURLEncoding.EncodeToString
	issued := &atomic.Int32{}
	mux := http.NewServeMux()
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
			"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": enc(key.N.Bytes()), "e": enc(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != OAuthClientID || pass != OAuthClientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
			return
		}
		issued.Add(1)
		now := time.Now()
		header, _ := json.Marshal(map[string]any{"alg": "RS256", "typ": "JWT", "kid": "k1"})
		claims, _ := json.Marshal(map[string]any{"sub": user, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
			"scope": "kafka", "aud": oauthAudience, "iss": oauthIssuer})
		signing := enc(header) + "." + enc(claims)
		sum := sha256.Sum256([]byte(signing))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": signing + "." + enc(sig), "token_type": "Bearer", "expires_in": 3600})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return OAuthServer{JWKSURL: srv.URL + "/jwks", TokenURL: srv.URL + "/token", Issued: issued}
}

// StartOAuthBroker starts a broker of its own whose SASL_PLAINTEXT listener takes OAUTHBEARER only,
// validating tokens with o's keys, audience and issuer (Plain and SASLPlain of the Broker are set). It sets
// KAFKA_JVM_OPTS for the test: Kafka 4 fetches keys only from URLs a system property allows.
func StartOAuthBroker(t *testing.T, o OAuthServer) Broker {
	t.Helper()
	t.Setenv("KAFKA_JVM_OPTS", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData -Djava.awt.headless=true"+
		" -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="+o.JWKSURL)
	b := kafkatest.StartBroker(t, kafkatest.BrokerOptions{
		ExtraPorts: 1,
		Config: func(b *kafkatest.Broker) string {
			h := "127.0.0.1"
			adv := fmt.Sprintf("PLAINTEXT://%s:%d,SASL_PLAINTEXT://%s:%d", h, b.Port, h, b.Ports[0])
			return strings.Join([]string{
				fmt.Sprintf("listeners=%s,CONTROLLER://%s:%d", adv, h, b.ControllerPort),
				"advertised.listeners=" + adv,
				"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
				"sasl.enabled.mechanisms=OAUTHBEARER",
				"listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
				"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
				"sasl.oauthbearer.jwks.endpoint.url=" + o.JWKSURL,
				"sasl.oauthbearer.expected.audience=" + oauthAudience,
				"sasl.oauthbearer.expected.issuer=" + oauthIssuer,
			}, "\n")
		},
	})
	return Broker{Plain: b.Addr, SASLPlain: fmt.Sprintf("127.0.0.1:%d", b.Ports[0])}
}
