// Package securekafka is a test fixture for Kafka security settings: TLS key and trust stores made by
// keytool (JKS, PKCS12 and PEM, as JVM users make them) and a broker of its own with SSL, SASL_PLAINTEXT
// and SASL_SSL listeners and SCRAM users.
package securekafka

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/connectd/connectd/internal/testutil/kafkatest"
)

// Passwords of the generated stores; each differs, so a mix-up shows.
const (
	CAPass         = "ca-pass"
	TrustPass      = "trust-pass"
	ServerPass     = "server-pass"
	ClientJKSStore = "client-store"
	ClientJKSKey   = "client-key" // JKS allows a key password other than the store's
	ClientP12Pass  = "client-p12"
	ScramUser      = "alice"
	ScramPass      = "alice-secret"
	ScramJAAS      = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`
)

// Stores are the TLS files made by keytool: a CA, a server key signed by it (SAN ip:127.0.0.1
// only), a client key signed by it, and trust stores holding the CA.
type Stores struct {
	Dir                string
	TrustJKS, TrustP12 string // password TrustPass
	ServerP12          string // password ServerPass
	ClientJKS          string // store password ClientJKSStore, key password ClientJKSKey
	ClientP12          string // password ClientP12Pass
	CAPEM              string
}

// Keytool finds the keytool of the java that scripts/kafka.sh runs.
func Keytool(t testing.TB) string {
	t.Helper()
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		if p := filepath.Join(jh, "bin", "keytool"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("keytool")
	require.NoError(t, err, "keytool (Java 17+) is needed to make JKS and PKCS12 stores")
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// MakeStores runs keytool (a few independent chains in parallel: each call is a JVM start).
func MakeStores(t testing.TB) Stores {
	t.Helper()
	kt := Keytool(t)
	d := t.TempDir()
	s := Stores{
		Dir:       d,
		TrustJKS:  filepath.Join(d, "truststore.jks"),
		TrustP12:  filepath.Join(d, "truststore.p12"),
		ServerP12: filepath.Join(d, "server.p12"),
		ClientJKS: filepath.Join(d, "client.jks"),
		ClientP12: filepath.Join(d, "client.p12"),
		CAPEM:     filepath.Join(d, "ca.pem"),
	}
	run := func(args ...string) error {
		full := append([]string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-XX:-UsePerfData"}, args...)
		cmd := exec.Command(kt, full...)
		cmd.Dir = d
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("keytool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	seq := func(steps ...[]string) error {
		for _, st := range steps {
			if err := run(st...); err != nil {
				return err
			}
		}
		return nil
	}
	par := func(chains ...func() error) {
		var wg sync.WaitGroup
		errs := make([]error, len(chains))
		for i, c := range chains {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = c() }()
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
	}
	ec := []string{"-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2"}
	// The CA, then its certificate as PEM.
	require.NoError(t, seq(
		append([]string{"-genkeypair", "-alias", "ca", "-dname", "CN=connectd test CA", "-ext", "bc:c",
			"-keystore", "ca.p12", "-storetype", "PKCS12", "-storepass", CAPass}, ec...),
		[]string{"-exportcert", "-rfc", "-alias", "ca", "-keystore", "ca.p12", "-storepass", CAPass, "-file", "ca.pem"},
	))
	// signed makes a key pair in store, has the CA sign it (with extra -ext), imports the chain.
	signed := func(alias, dname, store, stype, spass, kpass string, ext ...string) func() error {
		return func() error {
			steps := [][]string{
				append([]string{"-genkeypair", "-alias", alias, "-dname", dname, "-keystore", store,
					"-storetype", stype, "-storepass", spass, "-keypass", kpass}, ec...),
				{"-certreq", "-alias", alias, "-keystore", store, "-storepass", spass, "-keypass", kpass, "-file", alias + ".csr"},
				append([]string{"-gencert", "-alias", "ca", "-keystore", "ca.p12", "-storepass", CAPass, "-rfc",
					"-infile", alias + ".csr", "-outfile", alias + ".pem", "-validity", "2"}, ext...),
				{"-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", store, "-storepass", spass},
				{"-importcert", "-alias", alias, "-file", alias + ".pem", "-keystore", store, "-storepass", spass, "-keypass", kpass},
			}
			return seq(steps...)
		}
	}
	par(
		func() error {
			return run("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem",
				"-keystore", "truststore.jks", "-storetype", "JKS", "-storepass", TrustPass)
		},
		func() error {
			return run("-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem",
				"-keystore", "truststore.p12", "-storetype", "PKCS12", "-storepass", TrustPass)
		},
		signed("server", "CN=127.0.0.1", "server.p12", "PKCS12", ServerPass, ServerPass, "-ext", "SAN=ip:127.0.0.1"),
		func() error {
			if err := signed("client", "CN=connectd client", "client.jks", "JKS", ClientJKSStore, ClientJKSKey)(); err != nil {
				return err
			}
			return run("-importkeystore", "-noprompt", "-srckeystore", "client.jks", "-srcstoretype", "JKS",
				"-srcstorepass", ClientJKSStore, "-srcalias", "client", "-srckeypass", ClientJKSKey,
				"-destkeystore", "client.p12", "-deststoretype", "PKCS12", "-deststorepass", ClientP12Pass,
				"-destkeypass", ClientP12Pass)
		},
	)
	return s
}

// Broker is a broker of its own with these listeners besides PLAINTEXT:
// SASL_PLAINTEXT and SASL_SSL (SCRAM-SHA-256 and -512, user alice) and SSL with
// ssl.client.auth=required. The server key store is PKCS12, as the JVM makes them by default.
type Broker struct {
	Plain     string // PLAINTEXT, host:port
	SASLPlain string // SASL_PLAINTEXT
	SASLSSL   string // SASL_SSL
	SSL       string // SSL, client certificate required
}

// StartBroker starts it for this test (kafkatest.StartBroker) with the server and trust stores of s.
func StartBroker(t testing.TB, s Stores) Broker {
	t.Helper()
	b := kafkatest.StartBroker(t, kafkatest.BrokerOptions{
		ExtraPorts: 3,
		FormatArgs: []string{
			"--add-scram", fmt.Sprintf("SCRAM-SHA-256=[name=%s,password=%s]", ScramUser, ScramPass),
			"--add-scram", fmt.Sprintf("SCRAM-SHA-512=[name=%s,password=%s]", ScramUser, ScramPass),
		},
		Config: func(b *kafkatest.Broker) string {
			h := "127.0.0.1"
			adv := fmt.Sprintf("PLAINTEXT://%s:%d,SASL_PLAINTEXT://%s:%d,SASL_SSL://%s:%d,SSL://%s:%d",
				h, b.Port, h, b.Ports[0], h, b.Ports[1], h, b.Ports[2])
			lines := []string{
				fmt.Sprintf("listeners=%s,CONTROLLER://%s:%d", adv, h, b.ControllerPort),
				"advertised.listeners=" + adv,
				"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL",
				"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
				"ssl.keystore.type=PKCS12",
				"ssl.keystore.location=" + s.ServerP12,
				"ssl.keystore.password=" + ServerPass,
				"ssl.truststore.type=PKCS12",
				"ssl.truststore.location=" + s.TrustP12,
				"ssl.truststore.password=" + TrustPass,
				"listener.name.ssl.ssl.client.auth=required",
			}
			for _, l := range []string{"sasl_plaintext", "sasl_ssl"} {
				for _, m := range []string{"scram-sha-256", "scram-sha-512"} {
					lines = append(lines, fmt.Sprintf("listener.name.%s.%s.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;", l, m))
				}
			}
			return strings.Join(lines, "\n")
		},
	})
	return Broker{
		Plain:     b.Addr,
		SASLPlain: fmt.Sprintf("127.0.0.1:%d", b.Ports[0]),
		SASLSSL:   fmt.Sprintf("127.0.0.1:%d", b.Ports[1]),
		SSL:       fmt.Sprintf("127.0.0.1:%d", b.Ports[2]),
	}
}
