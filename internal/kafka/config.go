// Package kafka builds the worker's Kafka clients from JVM-style client properties (bootstrap.servers,
// security.protocol, sasl.*, ssl.*, consumer and producer keys), so worker files and consumer.override.* keep
// working. franz-go clients (ClientOpts, ConsumerOpts, ProducerOpts, Open, EnsureTopic) serve the sink tasks'
// consumers, the producers, the admin and the plugins' connect.KafkaClients; this file's sarama translation
// (NewConfig, ApplyProducer) serves the clients that have not moved to franz-go yet.
package kafka

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"

	"github.com/connectd/connectd/tlsstore"
)

// Version is the protocol version we speak (brokers ≥ 2.1 per KIP-896; Kafka 4 brokers).
var Version = sarama.V3_6_0_0

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

// NewConfig returns a sarama config with the common client properties applied (security, client.id,
// timeouts). Unknown keys are ignored, as the JVM clients only warn about them.
func NewConfig(props map[string]string) (*sarama.Config, error) {
	c := sarama.NewConfig()
	c.Version = Version
	c.Metadata.RefreshFrequency = 5 * time.Minute
	if v := props["client.id"]; v != "" {
		c.ClientID = ClientID(sanitizeClientID(v))
	}
	if err := durationMS(props, "request.timeout.ms", &c.Net.ReadTimeout); err != nil {
		return nil, err
	}
	if err := durationMS(props, "metadata.max.age.ms", &c.Metadata.RefreshFrequency); err != nil {
		return nil, err
	}
	if err := applySecurity(c, props); err != nil {
		return nil, err
	}
	return c, nil
}

var clientIDRe = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// sarama rejects client ids with characters the JVM accepts; keep them recognisable.
func sanitizeClientID(s string) string { return clientIDRe.ReplaceAllString(s, "_") }

// DefaultMaxPartitionFetchBytes is max.partition.fetch.bytes of the sink tasks' consumer when the
// properties do not set it. The JVM consumer keeps a fetched partition's batches compressed and
// decompresses one batch at a time as poll() hands out records; franz-go decompresses a whole fetch
// response as it arrives, so the JVM's default of 1 MiB per partition would cost several MiB of
// decompressed batches per partition here (compressible JSON: 10 MiB). A quarter of it keeps memory per
// partition near the JVM's and still moves thousands of records per fetch.
const DefaultMaxPartitionFetchBytes = 256 << 10

// ApplyProducer applies producer keys; Connect's internal producers use acks=all.
func ApplyProducer(c *sarama.Config, props map[string]string) error {
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	switch props["acks"] {
	case "0":
		c.Producer.RequiredAcks = sarama.NoResponse
	case "1":
		c.Producer.RequiredAcks = sarama.WaitForLocal
	}
	switch props["compression.type"] {
	case "gzip":
		c.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		c.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		c.Producer.Compression = sarama.CompressionLZ4
	case "zstd":
		c.Producer.Compression = sarama.CompressionZSTD
	}
	if v := props["max.request.size"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid max.request.size %q: %w", v, err)
		}
		c.Producer.MaxMessageBytes = n
	}
	return durationMS(props, "linger.ms", &c.Producer.Flush.Frequency)
}

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

func applySecurity(c *sarama.Config, props map[string]string) error {
	proto, err := securityProtocol(props)
	if err != nil {
		return err
	}
	if proto == "SSL" || proto == "SASL_SSL" {
		tc, err := tlsConfig(props)
		if err != nil {
			return err
		}
		c.Net.TLS.Enable = true
		c.Net.TLS.Config = tc
	}
	if strings.HasPrefix(proto, "SASL") {
		return applySASL(c, props)
	}
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

// applySASL applies sasl.mechanism and the user name and password of sasl.jaas.config.
func applySASL(c *sarama.Config, props map[string]string) error {
	cr, err := saslCredentials(props)
	if err != nil {
		return err
	}
	switch cr.mechanism {
	case "PLAIN":
		c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	case "SCRAM-SHA-256":
		c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
		c.Net.SASL.SCRAMClientGeneratorFunc = newSCRAMClientGenerator(scram.SHA256)
	case "SCRAM-SHA-512":
		c.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		c.Net.SASL.SCRAMClientGeneratorFunc = newSCRAMClientGenerator(scram.SHA512)
	}
	c.Net.SASL.Enable = true
	c.Net.SASL.User = cr.user
	c.Net.SASL.Password = cr.password
	return nil
}

type saslSettings struct{ mechanism, user, password string }

// saslCredentials reads sasl.mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) and the user name and
// password of sasl.jaas.config.
func saslCredentials(props map[string]string) (saslSettings, error) {
	mech := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	switch mech {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return saslSettings{}, fmt.Errorf("sasl.mechanism %s is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", props["sasl.mechanism"])
	}
	jaas := strings.TrimSpace(props["sasl.jaas.config"])
	if jaas == "" {
		return saslSettings{}, fmt.Errorf("sasl.jaas.config is required for security.protocol %s (JAAS files named by java.security.auth.login.config are not read)", props["security.protocol"])
	}
	e, err := parseJAAS(jaas)
	if err != nil {
		return saslSettings{}, err
	}
	if mech == "" {
		// The JVM client defaults to GSSAPI, which connectd lacks; it has always defaulted to PLAIN.
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

// Logger adapts sarama's logger to slog at debug level (sarama is chatty). Its SASL lines are all
// failures (refused mechanism, bad credentials), some of which sarama leaves out of the errors it
// returns, so they are logged at warn level.
func init() {
	sarama.Logger = slogAdapter{}
}

type slogAdapter struct{}

func (slogAdapter) log(msg string) {
	msg = strings.TrimSpace(msg)
	if strings.Contains(msg, "SASL") {
		slog.Warn(msg, "component", "sarama")
		return
	}
	slog.Debug(msg, "component", "sarama")
}

func (a slogAdapter) Print(v ...any)                 { a.log(fmt.Sprint(v...)) }
func (a slogAdapter) Printf(format string, v ...any) { a.log(fmt.Sprintf(format, v...)) }
func (a slogAdapter) Println(v ...any)               { a.log(fmt.Sprint(v...)) }
