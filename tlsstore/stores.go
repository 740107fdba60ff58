// Package tlsstore reads the JVM's TLS store settings (ssl.truststore.*, ssl.keystore.*, ssl.key.password,
// ssl.endpoint.identification.algorithm) with JKS, PKCS12 and PEM stores into Go TLS settings. The Kafka
// clients and the REST server read them under "ssl.", the Schema Registry client under "schema.registry.ssl.".
package tlsstore

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// Store types accepted in ssl.truststore.type / ssl.keystore.type, as the JVM client.
const (
	storeJKS    = "JKS"
	storePKCS12 = "PKCS12"
	storePEM    = "PEM"
)

const jksMagic = 0xFEEDFEED

// storeFormat decides how to read a store file. The JVM's default type is JKS, and since Java 9
// both JKS and PKCS12 key stores read either format (keystore.type.compat), so the file content
// decides between those two. A PEM file is read as PEM when the type says so or when no type is
// set (a convenience: earlier connectd releases read PEM without ssl.*.type).
func storeFormat(key, typ string, data []byte) (string, error) {
	t := strings.ToUpper(strings.TrimSpace(typ))
	isPEM := bytes.Contains(data, []byte("-----BEGIN "))
	switch t {
	case "", storeJKS, storePKCS12:
		if len(data) >= 4 && binary.BigEndian.Uint32(data) == jksMagic {
			return storeJKS, nil
		}
		if t == "" && isPEM {
			return storePEM, nil
		}
		if len(data) > 0 && data[0] == 0x30 { // DER SEQUENCE: a PKCS#12 PFX
			return storePKCS12, nil
		}
		if t == "" {
			t = storeJKS
		}
		return "", fmt.Errorf("%s: file is neither a JKS nor a PKCS12 store (%s.type=%s)", key, key, t)
	case storePEM:
		return storePEM, nil
	default:
		return "", fmt.Errorf("%s.type %q is not supported: use JKS, PKCS12 or PEM", key, typ)
	}
}

// LoadTrustStore reads prefix+"truststore.location" (its .type and .password) into a certificate pool. As
// the JVM's PKIX trust manager, trusted certificate entries and the certificates of key entries are trusted.
func LoadTrustStore(props map[string]string, prefix string) (*x509.CertPool, error) {
	key := prefix + "truststore"
	file := props[key+".location"]
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading %s.location: %w", key, err)
	}
	format, err := storeFormat(key, props[key+".type"], data)
	if err != nil {
		return nil, err
	}
	password, hasPassword := props[key+".password"]
	var certs []*x509.Certificate
	switch format {
	case storePEM:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s.location: no certificates in %s", key, file)
		}
		return pool, nil
	case storeJKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
			// Without a password the JVM loads a JKS store without checking its integrity;
			// keystore-go has read every entry when it reports the digest mismatch.
			if hasPassword || err.Error() != "got invalid digest" {
				return nil, fmt.Errorf("loading %s.location %s (JKS): %w%s", key, file, err, passwordHint(key, err))
			}
		}
		for _, alias := range ks.Aliases() {
			var raw []keystore.Certificate
			if ks.IsTrustedCertificateEntry(alias) {
				e, err := ks.GetTrustedCertificateEntry(alias)
				if err != nil {
					return nil, fmt.Errorf("%s.location %s: entry %q: %w", key, file, alias, err)
				}
				raw = []keystore.Certificate{e.Certificate}
			} else if chain, err := ks.GetPrivateKeyEntryCertificateChain(alias); err == nil && len(chain) > 0 {
				raw = chain[:1]
			}
			for _, c := range raw {
				cert, err := x509.ParseCertificate(c.Content)
				if err != nil {
					return nil, fmt.Errorf("%s.location %s: entry %q: %w", key, file, alias, err)
				}
				certs = append(certs, cert)
			}
		}
	case storePKCS12:
		certs, err = pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			// A PKCS12 file with a key entry (no Java trust attribute): trust its certificate.
			if _, leaf, _, err2 := pkcs12.DecodeChain(data, password); err2 == nil {
				certs, err = []*x509.Certificate{leaf}, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("loading %s.location %s (PKCS12): %w%s", key, file, err, passwordHint(key, err))
		}
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s.location: no certificates in %s", key, file)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// LoadKeyStore reads prefix+"keystore.location" (its .type and .password) into certificates with their
// keys. The private key password is prefix+"key.password", defaulting to the store password as in the JVM.
func LoadKeyStore(props map[string]string, prefix string) ([]tls.Certificate, error) {
	key := prefix + "keystore"
	file := props[key+".location"]
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading %s.location: %w", key, err)
	}
	format, err := storeFormat(key, props[key+".type"], data)
	if err != nil {
		return nil, err
	}
	storePassword := props[key+".password"]
	keyPassword, ok := props[prefix+"key.password"]
	if !ok {
		keyPassword = storePassword
	}
	switch format {
	case storePEM:
		cert, err := tls.X509KeyPair(data, data)
		if err != nil {
			return nil, fmt.Errorf("loading %s.location %s (PEM with an unencrypted key and its certificate): %w", key, file, err)
		}
		return []tls.Certificate{cert}, nil
	case storeJKS:
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(storePassword)); err != nil {
			return nil, fmt.Errorf("loading %s.location %s (JKS): %w%s", key, file, err, passwordHint(key, err))
		}
		var out []tls.Certificate
		for _, alias := range ks.Aliases() {
			if !ks.IsPrivateKeyEntry(alias) {
				continue
			}
			e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPassword))
			if err != nil {
				return nil, fmt.Errorf("%s.location %s: key %q: %w (check %skey.password)", key, file, alias, err, prefix)
			}
			pk, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
			if err != nil {
				return nil, fmt.Errorf("%s.location %s: key %q: %w", key, file, alias, err)
			}
			tc := tls.Certificate{PrivateKey: pk}
			for _, c := range e.CertificateChain {
				tc.Certificate = append(tc.Certificate, c.Content)
			}
			if len(tc.Certificate) == 0 {
				return nil, fmt.Errorf("%s.location %s: key %q has no certificate", key, file, alias)
			}
			if tc.Leaf, err = x509.ParseCertificate(tc.Certificate[0]); err != nil {
				return nil, fmt.Errorf("%s.location %s: key %q: %w", key, file, alias, err)
			}
			out = append(out, tc)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s.location %s: no private key entry", key, file)
		}
		return out, nil
	default: // PKCS12
		pk, leaf, chain, err := pkcs12.DecodeChain(data, storePassword)
		if err != nil && keyPassword != storePassword {
			pk, leaf, chain, err = pkcs12.DecodeChain(data, keyPassword)
		}
		if err != nil {
			return nil, fmt.Errorf("loading %s.location %s (PKCS12 with one key): %w%s", key, file, err, passwordHint(key, err))
		}
		signer, ok := pk.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%s.location %s: unsupported private key type %T", key, file, pk)
		}
		tc := tls.Certificate{PrivateKey: signer, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
		for _, c := range chain {
			tc.Certificate = append(tc.Certificate, c.Raw)
		}
		return []tls.Certificate{tc}, nil
	}
}

// passwordHint says what a failed integrity check or decryption most likely means, as the JVM's
// "keystore password was incorrect".
func passwordHint(key string, err error) string {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || strings.Contains(err.Error(), "invalid digest") {
		return fmt.Sprintf(" (wrong %s.password, or a damaged file?)", key)
	}
	return ""
}

// VerifyChainOnly checks the server's chain against roots (nil: the system roots) without
// matching the host name: ssl.endpoint.identification.algorithm set to empty in the JVM client.
func VerifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: server sent no certificate")
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: x509.NewCertPool(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}
