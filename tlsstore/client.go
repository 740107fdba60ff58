package tlsstore

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// ClientConfig builds the TLS settings of a client from the keys under prefix: the trust store, the key
// store (client certificates for mutual TLS) and endpoint.identification.algorithm.
func ClientConfig(props map[string]string, prefix string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if props[prefix+"truststore.location"] != "" {
		pool, err := LoadTrustStore(props, prefix)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = pool
	}
	if props[prefix+"keystore.location"] != "" {
		certs, err := LoadKeyStore(props, prefix)
		if err != nil {
			return nil, err
		}
		tc.Certificates = certs
	}
	// endpoint.identification.algorithm: "https" (the default) checks the host name against the
	// certificate; explicitly empty checks only the chain, as in the JVM client.
	key := prefix + "endpoint.identification.algorithm"
	switch v, set := props[key]; {
	case set && strings.TrimSpace(v) == "":
		tc.InsecureSkipVerify = true // the chain is still verified, by VerifyConnection
		tc.VerifyConnection = VerifyChainOnly(tc.RootCAs)
	case !set || strings.EqualFold(strings.TrimSpace(v), "https"):
	default:
		return nil, fmt.Errorf("invalid value %s for configuration %s: use https or an empty value", v, key)
	}
	return tc, nil
}
