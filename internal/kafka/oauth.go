package kafka

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// The JVM's login callback handler of OAUTHBEARER with an OAuth server: the client credentials grant against
// sasl.oauthbearer.token.endpoint.url. Its 3.x name stays accepted.
const (
	oauthLoginHandler         = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	oauthLoginHandlerSecured  = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	oauthLoginModule          = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	oauthRefreshWindowFactor  = 0.8 // sasl.login.refresh.window.factor's default: a token is renewed at 80% of its life
	oauthDefaultTokenEndpoint = 10 * time.Second
)

// oauthSettings are the client credentials of an OAUTHBEARER login.
type oauthSettings struct {
	endpoint                      string
	clientID, clientSecret, scope string
	urlEncode                     bool // sasl.oauthbearer.header.urlencode
	extensions                    map[string]string
}

// oauthCredentials reads the JVM's OAUTHBEARER settings: sasl.login.callback.handler.class naming the JVM's
// OAuthBearerLoginCallbackHandler, sasl.oauthbearer.token.endpoint.url, the JAAS options clientId,
// clientSecret, scope and extension_<name> (or the keys sasl.oauthbearer.client.credentials.client.id,
// .client.secret and sasl.oauthbearer.scope), and sasl.oauthbearer.header.urlencode. Unsecured tokens (no
// callback handler) and other handlers are refused.
func oauthCredentials(props map[string]string, e jaasEntry) (oauthSettings, error) {
	if e.Module != oauthLoginModule {
		return oauthSettings{}, fmt.Errorf("sasl.jaas.config: sasl.mechanism OAUTHBEARER needs the login module %s, not %s", oauthLoginModule, e.Module)
	}
	switch h := strings.TrimSpace(props["sasl.login.callback.handler.class"]); h {
	case oauthLoginHandler, oauthLoginHandlerSecured:
	case "":
		return oauthSettings{}, fmt.Errorf("sasl.mechanism OAUTHBEARER without sasl.login.callback.handler.class (unsecured tokens) is not supported: set it to %s and sasl.oauthbearer.token.endpoint.url", oauthLoginHandler)
	default:
		return oauthSettings{}, fmt.Errorf("sasl.login.callback.handler.class %s is not supported: use %s", h, oauthLoginHandler)
	}
	switch r := strings.TrimSpace(props["sasl.oauthbearer.jwt.retriever.class"]); r {
	case "", "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever",
		"org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever":
	default:
		return oauthSettings{}, fmt.Errorf("sasl.oauthbearer.jwt.retriever.class %s is not supported: only the client credentials grant is", r)
	}
	o := oauthSettings{
		endpoint:     strings.TrimSpace(props["sasl.oauthbearer.token.endpoint.url"]),
		clientID:     e.Options["clientId"],
		clientSecret: e.Options["clientSecret"],
		scope:        e.Options["scope"],
		extensions:   map[string]string{},
	}
	for dst, key := range map[*string]string{&o.clientID: "sasl.oauthbearer.client.credentials.client.id",
		&o.clientSecret: "sasl.oauthbearer.client.credentials.client.secret", &o.scope: "sasl.oauthbearer.scope"} {
		if *dst == "" {
			*dst = props[key]
		}
	}
	switch v := strings.ToLower(strings.TrimSpace(props["sasl.oauthbearer.header.urlencode"])); v {
	case "", "false":
	case "true":
		o.urlEncode = true
	default:
		return oauthSettings{}, fmt.Errorf("invalid value %s for configuration sasl.oauthbearer.header.urlencode: expected true or false", v)
	}
	u, err := url.Parse(o.endpoint)
	switch {
	case o.endpoint == "":
		return oauthSettings{}, fmt.Errorf("sasl.oauthbearer.token.endpoint.url is required for sasl.mechanism OAUTHBEARER")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file"):
		return oauthSettings{}, fmt.Errorf("invalid value %s for configuration sasl.oauthbearer.token.endpoint.url: use an http, https or file URL", o.endpoint)
	case u.Scheme != "file" && (o.clientID == "" || o.clientSecret == ""):
		return oauthSettings{}, fmt.Errorf("sasl.jaas.config: %s needs the options clientId and clientSecret", e.Module)
	}
	for k, v := range e.Options {
		if name, ok := strings.CutPrefix(k, "extension_"); ok {
			o.extensions[name] = v
		}
	}
	return o, nil
}

// mechanism is franz-go's OAUTHBEARER with tokens from the endpoint, each reused until its refresh time.
func (o oauthSettings) mechanism() sasl.Mechanism {
	src := &oauthTokenSource{settings: o, client: &http.Client{Timeout: oauthDefaultTokenEndpoint}}
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := src.token(ctx)
		if err != nil {
			return oauth.Auth{}, err
		}
		return oauth.Auth{Token: tok, Extensions: o.extensions}, nil
	})
}

type oauthTokenSource struct {
	settings oauthSettings
	client   *http.Client

	mu      sync.Mutex
	cached  string
	refresh time.Time // zero: fetch for every connection
}

func (s *oauthTokenSource) token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached != "" && time.Now().Before(s.refresh) {
		return s.cached, nil
	}
	tok, lifetime, err := s.fetch(ctx)
	if err != nil {
		return "", err
	}
	if lifetime <= 0 {
		lifetime = jwtLifetime(tok)
	}
	s.cached, s.refresh = tok, time.Time{}
	if lifetime > 0 {
		s.refresh = time.Now().Add(time.Duration(float64(lifetime) * oauthRefreshWindowFactor))
	}
	return tok, nil
}

// fetch asks the endpoint for a token as the JVM's HttpAccessTokenRetriever does: a form POST of
// grant_type=client_credentials (and scope) with the client credentials as basic authentication, URL-encoded
// only with sasl.oauthbearer.header.urlencode. A file URL holds the token itself.
func (s *oauthTokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	o := s.settings
	if path, ok := strings.CutPrefix(o.endpoint, "file://"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", 0, fmt.Errorf("reading the OAUTHBEARER token of sasl.oauthbearer.token.endpoint.url: %w", err)
		}
		return strings.TrimSpace(string(b)), 0, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if o.scope != "" {
		form.Set("scope", o.scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	id, secret := o.clientID, o.clientSecret
	if o.urlEncode {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
	resp, err := s.client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("fetching an OAUTHBEARER token from %s: %w", o.endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", 0, fmt.Errorf("fetching an OAUTHBEARER token from %s: %w", o.endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		return "", 0, fmt.Errorf("fetching an OAUTHBEARER token from %s: %s: %s", o.endpoint, resp.Status, strings.TrimSpace(string(body)))
	}
	var tr struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return "", 0, fmt.Errorf("fetching an OAUTHBEARER token from %s: the answer has no access_token", o.endpoint)
	}
	return tr.AccessToken, time.Duration(tr.ExpiresIn * float64(time.Second)), nil
}

// jwtLifetime is the time left until the exp claim of a JWT, or 0 when tok is not one or has none.
func jwtLifetime(tok string) time.Duration {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return 0
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return 0
	}
	var claims struct {
		Exp float64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == 0 {
		return 0
	}
	return time.Until(time.Unix(int64(claims.Exp), 0))
}
