package api

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"

	"github.com/connectd/connectd/tlsstore"
)

// Prefixes of the REST TLS settings (RestServerConfig): each falls back, as a whole, to the worker's ssl.* keys.
const (
	listenersHTTPSPrefix      = "listeners.https."
	adminListenersHTTPSPrefix = "admin.listeners.https."
)

// tlsProps is AbstractConfig.valuesWithPrefixAllOrNothing: the keys under prefix (prefix removed) when any is
// set, otherwise the worker's own keys.
func tlsProps(worker map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range worker {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	if len(out) > 0 {
		return out
	}
	return worker
}

// serverTLSConfig is SSLUtils.createServerSideSslContextFactory: the key store is the listener's certificate,
// the trust store verifies client certificates when ssl.client.auth asks for them.
func serverTLSConfig(p map[string]string, prefix string) (*tls.Config, error) {
	for _, k := range []string{"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates"} {
		if strings.TrimSpace(p[k]) != "" {
			return nil, fmt.Errorf("%s%s: inline PEM stores are not supported for https listeners; use a PEM file in %sssl.keystore.location / ssl.truststore.location", prefix, k, prefix)
		}
	}
	if strings.TrimSpace(p["ssl.keystore.location"]) == "" {
		return nil, fmt.Errorf("an https listener needs a key store: set %sssl.keystore.location or ssl.keystore.location", prefix)
	}
	certs, err := tlsstore.LoadKeyStore(p, "ssl.")
	if err != nil {
		return nil, fmt.Errorf("https listener: %w", err)
	}
	tc := &tls.Config{Certificates: certs}
	if err := applyTLSAlgorithms(tc, p); err != nil {
		return nil, err
	}
	auth := "none"
	if v, ok := p["ssl.client.auth"]; ok {
		auth = strings.TrimSpace(v)
	}
	switch auth {
	case "none":
		tc.ClientAuth = tls.NoClientCert
		return tc, nil
	case "requested":
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	case "required":
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("Invalid value %s for configuration ssl.client.auth: String must be one of: required, requested, none", auth)
	}
	if strings.TrimSpace(p["ssl.truststore.location"]) != "" {
		if tc.ClientCAs, err = tlsstore.LoadTrustStore(p, "ssl."); err != nil {
			return nil, fmt.Errorf("https listener: %w", err)
		}
	} else if tc.ClientCAs, err = x509.SystemCertPool(); err != nil { // the JVM's default trust store
		return nil, fmt.Errorf("https listener: system certificates: %w", err)
	}
	return tc, nil
}

// clientTLSConfig is SSLUtils.createClientSideSslContextFactory, used to reach other workers over https.
func clientTLSConfig(p map[string]string) (*tls.Config, error) {
	tc, err := tlsstore.ClientConfig(p, "ssl.")
	if err != nil {
		return nil, fmt.Errorf("REST client TLS: %w", err)
	}
	if err := applyTLSAlgorithms(tc, p); err != nil {
		return nil, err
	}
	return tc, nil
}

// applyTLSAlgorithms applies ssl.enabled.protocols and ssl.cipher.suites; settings this worker cannot honour
// are refused rather than ignored.
func applyTLSAlgorithms(tc *tls.Config, p map[string]string) error {
	protocols := "TLSv1.2,TLSv1.3"
	if v, ok := p["ssl.enabled.protocols"]; ok && strings.TrimSpace(v) != "" {
		protocols = v
	}
	tc.MinVersion, tc.MaxVersion = 0, 0
	for _, name := range splitTrim(protocols) {
		var v uint16
		switch name {
		case "TLSv1.2":
			v = tls.VersionTLS12
		case "TLSv1.3":
			v = tls.VersionTLS13
		default:
			return fmt.Errorf("ssl.enabled.protocols: %s is not supported (TLSv1.2, TLSv1.3)", name)
		}
		if tc.MinVersion == 0 || v < tc.MinVersion {
			tc.MinVersion = v
		}
		if v > tc.MaxVersion {
			tc.MaxVersion = v
		}
	}
	if v := strings.TrimSpace(p["ssl.cipher.suites"]); v != "" {
		known := map[string]uint16{}
		for _, cs := range tls.CipherSuites() {
			known[cs.Name] = cs.ID
		}
		tls13 := map[string]bool{"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true}
		tc.CipherSuites = nil
		for _, name := range splitTrim(v) {
			if tls13[name] {
				continue // TLS 1.3 suites are always enabled by Go's TLS stack
			}
			id, ok := known[name]
			if !ok {
				return fmt.Errorf("ssl.cipher.suites: %s is not a supported cipher suite", name)
			}
			tc.CipherSuites = append(tc.CipherSuites, id)
		}
	}
	for _, k := range []string{"ssl.provider", "ssl.engine.factory.class"} {
		if v := strings.TrimSpace(p[k]); v != "" {
			return fmt.Errorf("%s=%s is not supported for the REST server", k, v)
		}
	}
	return nil
}
