package kafka

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"software.sslmate.com/src/go-pkcs12"
)

// selfSigned makes an EC key and a self-signed certificate (fast; the keytool-made stores are
// exercised against a real broker in security_test.go).
func selfSigned(t *testing.T, cn string) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return key, cert
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

func TestKeyStores(t *testing.T) {
	key, cert := selfSigned(t, "client")
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)

	ks := keystore.New()
	require.NoError(t, ks.SetPrivateKeyEntry("client", keystore.PrivateKeyEntry{
		CreationTime: time.Now(), PrivateKey: pkcs8,
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: cert.Raw}},
	}, []byte("key-pass")))
	var buf bytes.Buffer
	require.NoError(t, ks.Store(&buf, []byte("store-pass")))
	jksFile := writeFile(t, "client.jks", buf.Bytes())

	p12, err := pkcs12.Modern.Encode(key, cert, nil, "p12-pass")
	require.NoError(t, err)
	p12File := writeFile(t, "client.p12", p12)

	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	pemFile := writeFile(t, "client.pem", append(keyPEM, certPEM...))

	tests := []struct {
		name    string
		props   map[string]string
		wantErr string
	}{
		{"jks", map[string]string{"ssl.keystore.location": jksFile, "ssl.keystore.password": "store-pass", "ssl.key.password": "key-pass"}, ""},
		{"jks typed PKCS12", map[string]string{"ssl.keystore.location": jksFile, "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "store-pass", "ssl.key.password": "key-pass"}, ""},
		{"jks key password defaults to store password", map[string]string{"ssl.keystore.location": jksFile, "ssl.keystore.password": "store-pass"}, "check ssl.key.password"},
		{"jks wrong store password", map[string]string{"ssl.keystore.location": jksFile, "ssl.keystore.password": "x", "ssl.key.password": "key-pass"}, "wrong ssl.keystore.password"},
		{"pkcs12", map[string]string{"ssl.keystore.location": p12File, "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "p12-pass"}, ""},
		{"pkcs12 default type", map[string]string{"ssl.keystore.location": p12File, "ssl.keystore.password": "p12-pass"}, ""},
		{"pkcs12 wrong password", map[string]string{"ssl.keystore.location": p12File, "ssl.keystore.password": "x"}, "wrong ssl.keystore.password"},
		{"pem", map[string]string{"ssl.keystore.location": pemFile, "ssl.keystore.type": "PEM"}, ""},
		{"pem without type", map[string]string{"ssl.keystore.location": pemFile}, ""},
		{"missing file", map[string]string{"ssl.keystore.location": filepath.Join(t.TempDir(), "nope.jks")}, "reading ssl.keystore.location"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.props["security.protocol"] = "SSL"
			c, err := clientTLS(t, tc.props)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, c.Certificates, 1)
			got := c.Certificates[0]
			require.Equal(t, cert.Raw, got.Certificate[0])
			require.True(t, key.PublicKey.Equal(got.PrivateKey.(crypto.Signer).Public()))
		})
	}
}

func TestTrustStoresAndHostnameCheck(t *testing.T) {
	_, ca := selfSigned(t, "ca")
	_, other := selfSigned(t, "other")
	ks := keystore.New()
	require.NoError(t, ks.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{
		CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Raw}}))
	var buf bytes.Buffer
	require.NoError(t, ks.Store(&buf, []byte("trust-pass")))
	jksFile := writeFile(t, "trust.jks", buf.Bytes())
	p12, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca}, "trust-pass")
	require.NoError(t, err)
	p12File := writeFile(t, "trust.p12", p12)

	for _, tc := range []struct {
		name    string
		props   map[string]string
		wantErr string
	}{
		{"jks", map[string]string{"ssl.truststore.location": jksFile, "ssl.truststore.password": "trust-pass"}, ""},
		{"jks without password: no integrity check, as the JVM", map[string]string{"ssl.truststore.location": jksFile}, ""},
		{"jks wrong password", map[string]string{"ssl.truststore.location": jksFile, "ssl.truststore.password": "x"}, "wrong ssl.truststore.password"},
		{"pkcs12", map[string]string{"ssl.truststore.location": p12File, "ssl.truststore.type": "PKCS12", "ssl.truststore.password": "trust-pass"}, ""},
		{"pkcs12 wrong password", map[string]string{"ssl.truststore.location": p12File, "ssl.truststore.password": "x"}, "wrong ssl.truststore.password"},
		{"bad endpoint algorithm", map[string]string{"ssl.truststore.location": jksFile, "ssl.endpoint.identification.algorithm": "ldaps"}, "ssl.endpoint.identification.algorithm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.props["security.protocol"] = "SASL_SSL"
			tc.props["sasl.mechanism"] = "SCRAM-SHA-512"
			tc.props["sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`
			c, err := clientTLS(t, tc.props)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc := c
			require.False(t, tc.InsecureSkipVerify, "https is the default")
			_, err = ca.Verify(x509.VerifyOptions{Roots: tc.RootCAs})
			require.NoError(t, err)
			_, err = other.Verify(x509.VerifyOptions{Roots: tc.RootCAs})
			require.Error(t, err)
		})
	}

	// Empty algorithm: no host name check, but the chain is still verified.
	tc, err := clientTLS(t, map[string]string{"security.protocol": "SSL", "ssl.truststore.location": p12File,
		"ssl.truststore.password": "trust-pass", "ssl.endpoint.identification.algorithm": ""})
	require.NoError(t, err)
	require.True(t, tc.InsecureSkipVerify)
	require.NotNil(t, tc.VerifyConnection)
	require.NoError(t, tc.VerifyConnection(tls.ConnectionState{PeerCertificates: []*x509.Certificate{ca}}))
	require.ErrorContains(t, tc.VerifyConnection(tls.ConnectionState{PeerCertificates: []*x509.Certificate{other}}), "unknown authority")
}

// clientTLS is the TLS configuration of a franz-go client built by ClientOpts from props.
func clientTLS(t *testing.T, props map[string]string) (*tls.Config, error) {
	t.Helper()
	opts, err := ClientOpts(props)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(opts...)
	require.NoError(t, err)
	defer cl.Close()
	c, ok := cl.OptValue(kgo.DialTLSConfig).(*tls.Config)
	require.True(t, ok && c != nil, "the client has no TLS configuration")
	return c, nil
}
