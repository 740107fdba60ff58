// Package testcerts makes a throw-away certificate authority and certificates for TLS tests, written as the
// key and trust stores the JVM's ssl.* keys name (PEM, PKCS12, JKS).
package testcerts

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// CA is a self-signed certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	dir  string
}

// Leaf is a certificate issued by a CA, valid for 127.0.0.1, ::1 and localhost, for servers and clients.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

var serial atomic.Int64

// NewCA makes a CA; its files go to a temporary directory of t.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, Key: key, dir: t.TempDir()}
}

// Issue makes a certificate for cn.
func (ca *CA) Issue(t testing.TB, cn string) *Leaf {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &Leaf{Cert: cert, Key: key}
}

func (ca *CA) write(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(ca.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TrustStorePEM writes the CA certificate as a PEM trust store.
func (ca *CA) TrustStorePEM(t testing.TB) string {
	return ca.write(t, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}))
}

// TrustStoreJKS writes the CA certificate as a JKS trust store.
func (ca *CA) TrustStoreJKS(t testing.TB, password string) string {
	t.Helper()
	ks := keystore.New()
	if err := ks.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{
		CreationTime: time.Now(), Certificate: keystore.Certificate{Type: "X509", Content: ca.Cert.Raw}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(password)); err != nil {
		t.Fatal(err)
	}
	return ca.write(t, "ca.jks", buf.Bytes())
}

// Pool is the CA as a certificate pool.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

func (l *Leaf) pkcs8(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// KeyStorePEM writes the private key and certificate in one PEM file (ssl.keystore.type=PEM).
func (l *Leaf) KeyStorePEM(t testing.TB, ca *CA, name string) string {
	data := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: l.pkcs8(t)})
	data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.Cert.Raw})...)
	return ca.write(t, name+".pem", data)
}

// KeyStorePKCS12 writes a PKCS12 key store with the key, its certificate and the CA.
func (l *Leaf) KeyStorePKCS12(t testing.TB, ca *CA, name, password string) string {
	t.Helper()
	data, err := pkcs12.Modern.Encode(l.Key, l.Cert, []*x509.Certificate{ca.Cert}, password)
	if err != nil {
		t.Fatal(err)
	}
	return ca.write(t, name+".p12", data)
}

// KeyStoreJKS writes a JKS key store; the key entry is protected by keyPassword.
func (l *Leaf) KeyStoreJKS(t testing.TB, ca *CA, name, storePassword, keyPassword string) string {
	t.Helper()
	ks := keystore.New()
	if err := ks.SetPrivateKeyEntry(name, keystore.PrivateKeyEntry{
		CreationTime: time.Now(), PrivateKey: l.pkcs8(t),
		CertificateChain: []keystore.Certificate{{Type: "X509", Content: l.Cert.Raw}, {Type: "X509", Content: ca.Cert.Raw}},
	}, []byte(keyPassword)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(storePassword)); err != nil {
		t.Fatal(err)
	}
	return ca.write(t, name+".jks", buf.Bytes())
}

// TLSCertificate is the leaf as a client or server certificate.
func (l *Leaf) TLSCertificate() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{l.Cert.Raw}, PrivateKey: l.Key, Leaf: l.Cert}
}
