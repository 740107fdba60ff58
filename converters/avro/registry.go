package avro

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/tlsstore"
)

// TLS keys (schema.registry.ssl.*): JKS, PKCS12 and PEM stores, read as the worker reads its ssl.* stores,
// and inline PEM certificates and keys.
const (
	sslPrefix               = "schema.registry.ssl."
	ConfigSSLTruststoreType = sslPrefix + "truststore.type"
	ConfigSSLTruststoreLoc  = sslPrefix + "truststore.location"
	ConfigSSLTruststorePass = sslPrefix + "truststore.password"
	ConfigSSLTruststoreCert = sslPrefix + "truststore.certificates"
	ConfigSSLKeystoreType   = sslPrefix + "keystore.type"
	ConfigSSLKeystoreLoc    = sslPrefix + "keystore.location"
	ConfigSSLKeystorePass   = sslPrefix + "keystore.password"
	ConfigSSLKeystoreChain  = sslPrefix + "keystore.certificate.chain"
	ConfigSSLKeystoreKey    = sslPrefix + "keystore.key"
	ConfigSSLKeyPassword    = sslPrefix + "key.password"
	ConfigSSLEndpointAlgo   = sslPrefix + "endpoint.identification.algorithm"
	ConfigSSLProtocol       = sslPrefix + "protocol"
)

func defineTLS(d *connect.ConfigDef) {
	str := func(name, def, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.ConfigString, Default: def, Importance: connect.Medium, Doc: doc})
	}
	str(ConfigSSLTruststoreType, "JKS", "The file format of the trust store file: JKS, PKCS12 or PEM (JKS and PKCS12 read either binary format, as the JVM).")
	str(ConfigSSLTruststoreLoc, "", "The location of the trust store file.")
	d.Define(connect.ConfigKey{Name: ConfigSSLTruststorePass, Type: connect.ConfigPassword, Default: "", Importance: connect.High,
		Doc: "The password of the trust store file; without it a JKS store is read without checking its integrity."})
	d.Define(connect.ConfigKey{Name: ConfigSSLTruststoreCert, Type: connect.ConfigPassword, Default: "", Importance: connect.Medium,
		Doc: "Trusted certificates in PEM format."})
	str(ConfigSSLKeystoreType, "JKS", "The file format of the key store file: JKS, PKCS12 or PEM.")
	str(ConfigSSLKeystoreLoc, "", "The location of the key store file (the client certificate and its private key).")
	d.Define(connect.ConfigKey{Name: ConfigSSLKeystorePass, Type: connect.ConfigPassword, Default: "", Importance: connect.High,
		Doc: "The store password of the key store file."})
	d.Define(connect.ConfigKey{Name: ConfigSSLKeystoreChain, Type: connect.ConfigPassword, Default: "", Importance: connect.Medium,
		Doc: "Certificate chain in PEM format."})
	d.Define(connect.ConfigKey{Name: ConfigSSLKeystoreKey, Type: connect.ConfigPassword, Default: "", Importance: connect.Medium,
		Doc: "Private key in PEM format (unencrypted)."})
	d.Define(connect.ConfigKey{Name: ConfigSSLKeyPassword, Type: connect.ConfigPassword, Default: "", Importance: connect.High,
		Doc: "The password of the private key in the key store file; the store password when not set."})
	str(ConfigSSLEndpointAlgo, "https", "The endpoint identification algorithm; empty disables host name verification.")
	str(ConfigSSLProtocol, "TLSv1.3", "Minimum TLS protocol (TLSv1.2 or TLSv1.3 accepted; TLSv1.2 is the floor used).")
}

// registryError is an answer of the registry other than 2xx: its HTTP status and the Confluent error body
// (error_code, message). The JVM's client raises it as a RestClientException.
type registryError struct {
	Status  int
	Code    int // error_code of the body; the HTTP status when the body has none
	Message string
}

// Error renders as RestClientException.getMessage: "<message>; error code: <code>".
func (e *registryError) Error() string {
	return fmt.Sprintf("%s; error code: %d", e.Message, e.Code)
}

// Registry error codes (Confluent's Errors, also Karapace's SchemaErrorCodes).
const (
	codeSubjectNotFound = 40401
	codeVersionNotFound = 40402
	codeSchemaNotFound  = 40403
)

// transient reports whether an answer may change by itself: a schema not found (a registry that has not
// loaded its schemas topic yet, such as Karapace just after a restart, answers 40403 for ids it will know)
// or a server error. Those are retried within errors.retry.timeout; any other answer is final.
func (e *registryError) transient() bool {
	return e.Code == codeSchemaNotFound || e.Status >= 500
}

// registryClient talks to one of several registry URLs, moving on to the next on network errors.
type registryClient struct {
	http *http.Client
	urls []string
	auth func(*http.Request)
	cur  atomic.Int32

	mu       sync.Mutex
	versions map[string]int // subject|schema → version
	ids      map[string]int // subject|schema → id (register / lookup)
}

func newRegistryClient(cfg *connect.Config, raw map[string]string) (*registryClient, error) {
	urls := cfg.List(ConfigURL)
	if len(urls) == 0 {
		return nil, &connect.ConfigError{Name: ConfigURL, Value: "", Message: "Missing Schema Registry url!"}
	}
	tlsCfg, err := tlsConfig(cfg, raw)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tr}
	rc := &registryClient{http: hc, versions: map[string]int{}, ids: map[string]int{}}

	var user, pass, bearer string
	switch cfg.String(ConfigAuthSource) {
	case "USER_INFO":
		ui := cfg.Password(ConfigUserInfo)
		if ui == "" {
			ui = raw["schema.registry.basic.auth.user.info"] // the deprecated serde alias
		}
		if ui == "" { // as Confluent's UserInfoCredentialProvider: no silent anonymous access
			return nil, &connect.ConfigError{Name: ConfigUserInfo, Value: "[hidden]",
				Message: ConfigUserInfo + " must be provided when " + ConfigAuthSource + " is set to USER_INFO"}
		}
		i := strings.IndexByte(ui, ':')
		if i < 0 {
			return nil, &connect.ConfigError{Name: ConfigUserInfo, Value: "[hidden]", Message: "must be user:password"}
		}
		user, pass = ui[:i], ui[i+1:]
	case "SASL_INHERIT":
		return nil, &connect.ConfigError{Name: ConfigAuthSource, Value: "SASL_INHERIT", Message: "not supported"}
	}
	if _, set := raw[ConfigBearerToken]; set {
		if cfg.String(ConfigBearerSource) != "STATIC_TOKEN" {
			return nil, &connect.ConfigError{Name: ConfigBearerSource, Value: cfg.String(ConfigBearerSource), Message: "only STATIC_TOKEN is supported"}
		}
		bearer = cfg.Password(ConfigBearerToken)
	}
	for _, u := range urls {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		pu, err := url.Parse(u)
		if err != nil || pu.Host == "" {
			return nil, &connect.ConfigError{Name: ConfigURL, Value: u, Message: "invalid URL"}
		}
		cu, cp := user, pass
		if cfg.String(ConfigAuthSource) == "URL" && pu.User != nil {
			cu = pu.User.Username()
			cp, _ = pu.User.Password()
			pu.User = nil
		}
		rc.urls = append(rc.urls, pu.String())
		if rc.auth == nil {
			au, ap, bt := cu, cp, bearer
			rc.auth = func(r *http.Request) {
				if au != "" || ap != "" {
					r.SetBasicAuth(au, ap)
				} else if bt != "" {
					r.Header.Set("Authorization", "Bearer "+bt)
				}
			}
		}
	}
	return rc, nil
}

// tlsConfig reads the schema.registry.ssl.* stores as the Kafka clients read ssl.* (JKS, PKCS12 or PEM files),
// plus the inline PEM keys.
func tlsConfig(cfg *connect.Config, raw map[string]string) (*tls.Config, error) {
	t, err := tlsstore.ClientConfig(raw, sslPrefix)
	if err != nil {
		return nil, &connect.ConfigError{Name: sslPrefix + "*", Value: "", Message: err.Error()}
	}
	if inline := cfg.Password(ConfigSSLTruststoreCert); inline != "" {
		if t.RootCAs == nil {
			t.RootCAs = x509.NewCertPool()
		}
		if !t.RootCAs.AppendCertsFromPEM([]byte(inline)) {
			return nil, &connect.ConfigError{Name: ConfigSSLTruststoreCert, Value: "[hidden]", Message: "no PEM certificates found"}
		}
		if t.VerifyConnection != nil { // no host name check: verify the chain against the pool with the inline certificates
			t.VerifyConnection = tlsstore.VerifyChainOnly(t.RootCAs)
		}
	}
	if chain := cfg.Password(ConfigSSLKeystoreChain); chain != "" && cfg.String(ConfigSSLKeystoreLoc) == "" {
		cert, err := tls.X509KeyPair([]byte(chain), []byte(cfg.Password(ConfigSSLKeystoreKey)))
		if err != nil {
			return nil, &connect.ConfigError{Name: ConfigSSLKeystoreChain, Value: "[hidden]", Message: err.Error()}
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// try runs fn against the current URL, failing over to the others on network errors.
func (rc *registryClient) try(fn func(base string) error) error {
	start := int(rc.cur.Load())
	var err error
	for k := 0; k < len(rc.urls); k++ {
		i := (start + k) % len(rc.urls)
		err = fn(rc.urls[i])
		var re *registryError
		if err == nil || errors.As(err, &re) {
			if k > 0 {
				rc.cur.Store(int32(i))
			}
			return err
		}
	}
	return err
}

// call sends one request with a JSON body (nil for none) and decodes a 2xx answer into out; any other
// status is a *registryError.
func (rc *registryClient) call(method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	if rc.auth != nil {
		rc.auth(req)
	}
	resp, err := rc.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		re := &registryError{Status: resp.StatusCode, Code: resp.StatusCode}
		var eb struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &eb) == nil && eb.Code != 0 {
			re.Code, re.Message = eb.Code, eb.Message
		} else {
			re.Message = strings.TrimSpace(resp.Status + " " + string(b))
		}
		return re
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decoding the answer of %s %s: %w", method, url, err)
	}
	return nil
}

type schemaAnswer struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []schemaRef `json:"references"`
}

// schemaRef is a schema reference: the named type Name is defined by Subject's Version.
type schemaRef struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

func (rc *registryClient) schemaByID(id int) (schemaAnswer, error) {
	var a schemaAnswer
	err := rc.try(func(base string) error {
		return rc.call(http.MethodGet, base+"/schemas/ids/"+strconv.Itoa(id), nil, &a)
	})
	return a, err
}

func (rc *registryClient) subjectVersion(subject string, version int) (schemaAnswer, error) {
	var a schemaAnswer
	err := rc.try(func(base string) error {
		return rc.call(http.MethodGet, base+"/subjects/"+url.PathEscape(subject)+"/versions/"+strconv.Itoa(version), nil, &a)
	})
	return a, err
}

func (rc *registryClient) lookupVersion(subject, schema string, refs []schemaRef) (int, error) {
	_, v, err := rc.lookup(subject, schema, refs, rc.versions)
	return v, err
}

func (rc *registryClient) lookupID(subject, schema string) (int, error) {
	id, _, err := rc.lookup(subject, schema, nil, rc.ids)
	return id, err
}

// lookup resolves a schema under a subject (POST /subjects/{s}) once, caching both its id and its version;
// cache says which of the two the caller needs, to answer from it without a request.
func (rc *registryClient) lookup(subject, schema string, refs []schemaRef, cache map[string]int) (id, version int, err error) {
	key := subject + "|" + schema
	rc.mu.Lock()
	cached, ok := cache[key]
	rc.mu.Unlock()
	if ok {
		return cached, cached, nil
	}
	body := map[string]any{"schema": schema}
	if len(refs) > 0 {
		body["references"] = refs
	}
	var a schemaAnswer
	err = rc.try(func(base string) error {
		return rc.call(http.MethodPost, base+"/subjects/"+url.PathEscape(subject), body, &a)
	})
	if err != nil {
		return 0, 0, err
	}
	rc.mu.Lock()
	rc.ids[key], rc.versions[key] = a.ID, a.Version
	rc.mu.Unlock()
	return a.ID, a.Version, nil
}

// register posts the schema (POST /subjects/{s}/versions) and returns its id.
func (rc *registryClient) register(subject, schema string) (int, error) {
	key := subject + "|" + schema
	rc.mu.Lock()
	id, ok := rc.ids[key]
	rc.mu.Unlock()
	if ok {
		return id, nil
	}
	var a schemaAnswer
	err := rc.try(func(base string) error {
		return rc.call(http.MethodPost, base+"/subjects/"+url.PathEscape(subject)+"/versions", map[string]string{"schema": schema}, &a)
	})
	if err != nil {
		return 0, err
	}
	rc.mu.Lock()
	rc.ids[key] = a.ID
	rc.mu.Unlock()
	return a.ID, nil
}

func (rc *registryClient) latest(subject string) (text string, id int, err error) {
	var a schemaAnswer
	err = rc.try(func(base string) error {
		return rc.call(http.MethodGet, base+"/subjects/"+url.PathEscape(subject)+"/versions/latest", nil, &a)
	})
	return a.Schema, a.ID, err
}
