// Package kafka builds sarama clients from JVM-style client properties (bootstrap.servers, security.protocol,
// sasl.*, ssl.*, consumer and producer keys), so worker files and consumer.override.* keep working.
package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
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
		b = strings.TrimPrefix(strings.TrimPrefix(b, "PLAINTEXT://"), "SASL_PLAINTEXT://")
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
		c.ClientID = sanitizeClientID(v)
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

// ApplyConsumer applies consumer keys (max.poll.records is handled by the caller).
func ApplyConsumer(c *sarama.Config, props map[string]string) error {
	c.Consumer.Offsets.AutoCommit.Enable = false
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	switch strings.ToLower(props["auto.offset.reset"]) {
	case "", "earliest":
	case "latest":
		c.Consumer.Offsets.Initial = sarama.OffsetNewest
	case "none":
		// sarama has no "fail if no offset"; earliest is the safe choice for a sink.
	default:
		return fmt.Errorf("invalid value %s for configuration auto.offset.reset", props["auto.offset.reset"])
	}
	if v := props["isolation.level"]; v == "read_committed" {
		c.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	if err := durationMS(props, "session.timeout.ms", &c.Consumer.Group.Session.Timeout); err != nil {
		return err
	}
	if err := durationMS(props, "heartbeat.interval.ms", &c.Consumer.Group.Heartbeat.Interval); err != nil {
		return err
	}
	if err := durationMS(props, "max.poll.interval.ms", &c.Consumer.Group.Rebalance.Timeout); err != nil {
		return err
	}
	if err := durationMS(props, "fetch.max.wait.ms", &c.Consumer.MaxWaitTime); err != nil {
		return err
	}
	if v := props["fetch.min.bytes"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid fetch.min.bytes %q: %w", v, err)
		}
		c.Consumer.Fetch.Min = int32(n)
	}
	if v := props["max.partition.fetch.bytes"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid max.partition.fetch.bytes %q: %w", v, err)
		}
		c.Consumer.Fetch.Default = int32(n)
	}
	switch props["partition.assignment.strategy"] {
	case "":
		c.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	default:
		var ss []sarama.BalanceStrategy
		for _, s := range strings.Split(props["partition.assignment.strategy"], ",") {
			switch {
			case strings.Contains(s, "RoundRobin"):
				ss = append(ss, sarama.NewBalanceStrategyRoundRobin())
			case strings.Contains(s, "Sticky"):
				ss = append(ss, sarama.NewBalanceStrategySticky())
			default:
				ss = append(ss, sarama.NewBalanceStrategyRange())
			}
		}
		c.Consumer.Group.Rebalance.GroupStrategies = ss
	}
	return nil
}

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

var jaasKV = regexp.MustCompile(`(\w+)\s*=\s*"([^"]*)"`)

func applySecurity(c *sarama.Config, props map[string]string) error {
	proto := strings.ToUpper(props["security.protocol"])
	switch proto {
	case "", "PLAINTEXT":
	case "SSL", "SASL_SSL", "SASL_PLAINTEXT":
	default:
		return fmt.Errorf("invalid value %s for configuration security.protocol", props["security.protocol"])
	}
	if proto == "SSL" || proto == "SASL_SSL" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if f := props["ssl.truststore.location"]; f != "" {
			if t := strings.ToUpper(props["ssl.truststore.type"]); t != "PEM" {
				return fmt.Errorf("ssl.truststore.type %q is not supported: use PEM files (ssl.truststore.type=PEM)", props["ssl.truststore.type"])
			}
			pem, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("reading ssl.truststore.location: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return fmt.Errorf("no certificates in %s", f)
			}
			tc.RootCAs = pool
		}
		if f := props["ssl.keystore.location"]; f != "" {
			cert, err := tls.LoadX509KeyPair(f, f)
			if err != nil {
				return fmt.Errorf("loading ssl.keystore.location (PEM with key and certificate): %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		// An explicitly empty algorithm disables host name checks, as in the JVM client.
		if v, set := props["ssl.endpoint.identification.algorithm"]; set && strings.TrimSpace(v) == "" {
			tc.InsecureSkipVerify = true
		}
		c.Net.TLS.Enable = true
		c.Net.TLS.Config = tc
	}
	if strings.HasPrefix(proto, "SASL") {
		c.Net.SASL.Enable = true
		for _, m := range jaasKV.FindAllStringSubmatch(props["sasl.jaas.config"], -1) {
			switch m[1] {
			case "username":
				c.Net.SASL.User = m[2]
			case "password":
				c.Net.SASL.Password = m[2]
			}
		}
		switch strings.ToUpper(props["sasl.mechanism"]) {
		case "", "PLAIN":
			c.Net.SASL.Mechanism = sarama.SASLTypePlaintext
		case "SCRAM-SHA-256", "SCRAM-SHA-512":
			return fmt.Errorf("sasl.mechanism %s is not supported yet", props["sasl.mechanism"])
		default:
			return fmt.Errorf("sasl.mechanism %s is not supported", props["sasl.mechanism"])
		}
	}
	return nil
}

// Logger adapts sarama's logger to slog at debug level (sarama is chatty).
func init() {
	sarama.Logger = slogAdapter{}
}

type slogAdapter struct{}

func (slogAdapter) Print(v ...any) {
	slog.Debug(strings.TrimSpace(fmt.Sprint(v...)), "component", "sarama")
}
func (slogAdapter) Printf(format string, v ...any) {
	slog.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)), "component", "sarama")
}
func (slogAdapter) Println(v ...any) {
	slog.Debug(strings.TrimSpace(fmt.Sprint(v...)), "component", "sarama")
}
