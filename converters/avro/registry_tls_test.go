package avro

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/avrotest"
	"github.com/connectd/connectd/internal/testutil/testcerts"
)

// The registry's trust store is read as the worker's ssl.truststore.*: a JKS or a PKCS12 file with the
// Confluent keys reaches a TLS registry, and a wrong password or a store without its certificate does not.
func TestTLSTrustStoreJKSAndPKCS12(t *testing.T) {
	reg := avrotest.NewTLS()
	defer reg.Close()
	blk, _ := pem.Decode([]byte(avrotest.CertPEM(reg)))
	require.NotNil(t, blk)
	cert, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	dir := t.TempDir()

	ks := keystore.New()
	require.NoError(t, ks.SetTrustedCertificateEntry("registry", keystore.TrustedCertificateEntry{
		CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: cert.Raw}}))
	var buf bytes.Buffer
	require.NoError(t, ks.Store(&buf, []byte("jks-pass")))
	jksFile := filepath.Join(dir, "trust.jks")
	require.NoError(t, os.WriteFile(jksFile, buf.Bytes(), 0o600))

	p12, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{cert}, "p12-pass")
	require.NoError(t, err)
	p12File := filepath.Join(dir, "trust.p12")
	require.NoError(t, os.WriteFile(p12File, p12, 0o600))

	for name, props := range map[string]map[string]string{
		"jks":                 {ConfigSSLTruststoreType: "JKS", ConfigSSLTruststoreLoc: jksFile, ConfigSSLTruststorePass: "jks-pass"},
		"pkcs12":              {ConfigSSLTruststoreType: "PKCS12", ConfigSSLTruststoreLoc: p12File, ConfigSSLTruststorePass: "p12-pass"},
		"pkcs12 without type": {ConfigSSLTruststoreLoc: p12File, ConfigSSLTruststorePass: "p12-pass"},
	} {
		t.Run(name, func(t *testing.T) {
			c := newConverter(t, reg.URL(), false, props)
			b, err := c.FromConnectData("t", nil, connect.Int64Schema, int64(7))
			require.NoError(t, err)
			got, err := c.ToConnectData("t", nil, b)
			require.NoError(t, err)
			require.Equal(t, int64(7), got.Value)
		})
	}

	err = New().Configure(map[string]string{ConfigURL: reg.URL(), ConfigSSLTruststoreLoc: p12File, ConfigSSLTruststorePass: "wrong"}, false)
	require.ErrorContains(t, err, "wrong schema.registry.ssl.truststore.password")

	other, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{testcerts.NewCA(t, "other").Cert}, "p12-pass")
	require.NoError(t, err)
	otherFile := filepath.Join(dir, "other.p12")
	require.NoError(t, os.WriteFile(otherFile, other, 0o600))
	c := newConverter(t, reg.URL(), false, map[string]string{ConfigSSLTruststoreLoc: otherFile, ConfigSSLTruststorePass: "p12-pass"})
	_, err = c.FromConnectData("t", nil, connect.Int64Schema, int64(7))
	require.ErrorContains(t, err, "certificate", "a trust store without the registry's certificate")
}
