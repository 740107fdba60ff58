package tlsstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStoreFormat(t *testing.T) {
	jks := []byte{0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2}
	der := []byte{0x30, 0x82, 0x01, 0x00}
	pemData := []byte("-----BEGIN CERTIFICATE-----\n")
	tests := []struct {
		typ     string
		data    []byte
		want    string
		wantErr string
	}{
		{"", jks, storeJKS, ""},
		{"", der, storePKCS12, ""},
		{"", pemData, storePEM, ""},
		{"JKS", der, storePKCS12, ""}, // Java 9+: a JKS key store reads PKCS12 files (keystore.type.compat)
		{"pkcs12", jks, storeJKS, ""},
		{"PEM", pemData, storePEM, ""},
		{"JKS", pemData, "", "neither a JKS nor a PKCS12 store (ssl.truststore.type=JKS)"},
		{"", []byte("garbage"), "", "neither a JKS nor a PKCS12 store (ssl.truststore.type=JKS)"},
		{"BCFKS", der, "", `ssl.truststore.type "BCFKS" is not supported: use JKS, PKCS12 or PEM`},
	}
	for _, tc := range tests {
		got, err := storeFormat("ssl.truststore", tc.typ, tc.data)
		if tc.wantErr != "" {
			require.ErrorContains(t, err, tc.wantErr, tc.typ)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got, "%s %x", tc.typ, tc.data[:4])
	}
}
