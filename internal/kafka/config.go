// Package kafka builds the worker's Kafka clients from JVM-style client properties (bootstrap.servers,
// security.protocol, sasl.*, ssl.*, consumer and producer keys), so worker files and consumer.override.* keep
// working. Its franz-go clients (ClientOpts, ConsumerOpts, ProducerOpts, Open, EnsureTopic) serve the sink
// tasks' consumers, the producers, the admin and the plugins' connect.KafkaClients; the group consumers
// decompress lz4 batches through lz4frame (Decompressor).
package kafka

import (
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/tlsstore"
)

// Brokers splits bootstrap.servers.
func Brokers(props map[string]string) []string {
	bs := props["bootstrap.servers"]
	if bs == "" {
		bs = "localhost:9092"
	}
	var out []string
	for _, b := range strings.Split(bs, ",") {
		b = strings.TrimSpace(b)
		for _, p := range []string{"SASL_PLAINTEXT://", "SASL_SSL://", "PLAINTEXT://", "SSL://"} {
			if len(b) > len(p) && strings.EqualFold(b[:len(p)], p) {
				b = b[len(p):]
				break
			}
		}
		if b != "" {
			out = append(out, b)
		}
	}
	return out
}

// DefaultMaxPartitionFetchBytes is max.partition.fetch.bytes of the sink tasks' consumer when the
// properties do not set it. The JVM consumer keeps a fetched partition's batches compressed and
// decompresses one batch at a time as poll() hands out records; franz-go decompresses a whole fetch
// response as it arrives, so the JVM's default of 1 MiB per partition would cost several MiB of
// decompressed batches per partition here (compressible JSON: 10 MiB). A quarter of it keeps memory per
// partition near the JVM's and still moves thousands of records per fetch.
const DefaultMaxPartitionFetchBytes = 256 << 10

func durationMS(props map[string]string, key string, dst *time.Duration) error {
	v, ok := props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return fmt.Errorf("invalid value %s for configuration %s: not a number", v, key)
	}
	*dst = time.Duration(n) * time.Millisecond
	return nil
}

// securityProtocol is security.protocol, upper case; empty is PLAINTEXT.
func securityProtocol(props map[string]string) (string, error) {
	proto := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	switch proto {
	case "", "PLAINTEXT", "SSL", "SASL_SSL", "SASL_PLAINTEXT":
		return proto, nil
	default:
		return "", fmt.Errorf("invalid value %s for configuration security.protocol", props["security.protocol"])
	}
}

// tlsConfig builds the TLS settings of an SSL or SASL_SSL connection from the ssl.* keys.
func tlsConfig(props map[string]string) (*tls.Config, error) {
	return tlsstore.ClientConfig(props, "ssl.")
}

type saslSettings struct {
	mechanism, user, password string
	oauth                     oauthSettings // OAUTHBEARER
}

// saslCredentials reads sasl.mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER) and the user
// name and password of sasl.jaas.config, or the OAUTHBEARER client credentials (oauthCredentials).
func saslCredentials(props map[string]string) (saslSettings, error) {
	mech := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	switch mech {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER":
	default:
		return saslSettings{}, fmt.Errorf("sasl.mechanism %s is not supported: use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", props["sasl.mechanism"])
	}
	jaas := strings.TrimSpace(props["sasl.jaas.config"])
	if jaas == "" {
		return saslSettings{}, fmt.Errorf("sasl.jaas.config is required for security.protocol %s (JAAS files named by java.security.auth.login.config are not read)", props["security.protocol"])
	}
	e, err := parseJAAS(jaas)
	if err != nil {
		return saslSettings{}, err
	}
	if mech == "OAUTHBEARER" {
		o, err := oauthCredentials(props, e)
		return saslSettings{mechanism: mech, oauth: o}, err
	}
	if mech == "" {
		// The JVM client defaults to GSSAPI, which connectd lacks; it has always defaulted to PLAIN.
		if e.Module == oauthLoginModule {
			return saslSettings{}, fmt.Errorf("sasl.jaas.config uses %s but sasl.mechanism is not set: set it to OAUTHBEARER", e.Module)
		}
		if strings.HasSuffix(e.Module, "ScramLoginModule") {
			return saslSettings{}, fmt.Errorf("sasl.jaas.config uses %s but sasl.mechanism is not set: set it to SCRAM-SHA-256 or SCRAM-SHA-512", e.Module)
		}
		mech = "PLAIN"
	}
	if e.Options["tokenauth"] == "true" {
		return saslSettings{}, fmt.Errorf("sasl.jaas.config: delegation token authentication (tokenauth=true) is not supported")
	}
	user, okU := e.Options["username"]
	pass, okP := e.Options["password"]
	if !okU || !okP {
		return saslSettings{}, fmt.Errorf("sasl.jaas.config: %s needs username and password options", e.Module)
	}
	return saslSettings{mechanism: mech, user: user, password: pass}, nil
}
