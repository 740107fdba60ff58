package kafka

import (
	"crypto/tls"
	"crypto/x509"
)

// The JVM's ssl.* store settings are shared by the Kafka clients and the worker's REST server and client; these
// give the REST layer the same reading of JKS, PKCS12 and PEM stores.

// TLSConfig builds client TLS settings from ssl.* keys: truststore, keystore (client certificates) and
// ssl.endpoint.identification.algorithm.
func TLSConfig(props map[string]string) (*tls.Config, error) { return tlsConfig(props) }

// LoadKeyStore reads ssl.keystore.location (ssl.keystore.type, ssl.keystore.password, ssl.key.password).
func LoadKeyStore(props map[string]string) ([]tls.Certificate, error) { return loadKeyStore(props) }

// LoadTrustStore reads ssl.truststore.location (ssl.truststore.type, ssl.truststore.password).
func LoadTrustStore(props map[string]string) (*x509.CertPool, error) { return loadTrustStore(props) }
