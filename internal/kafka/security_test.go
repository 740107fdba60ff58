package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testutil/kafkatest"
	"github.com/connectd/connectd/internal/testutil/securekafka"
)

// roundTrip produces one record through a client configured from props and reads it back.
func roundTrip(t *testing.T, b securekafka.Broker, addr string, props map[string]string) {
	t.Helper()
	topic := kafkatest.UniqueName(t, "sec")
	kafkatest.CreateTopic(t, b.Plain, topic, 1, nil)

	props["bootstrap.servers"] = addr
	popts, err := ProducerOpts(props)
	require.NoError(t, err)
	pcopts, err := ClientOpts(props)
	require.NoError(t, err)
	producer, err := kgo.NewClient(append(pcopts, popts...)...)
	require.NoError(t, err)
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	require.NoError(t, producer.ProduceSync(pctx, &kgo.Record{Topic: topic, Value: []byte("hello " + t.Name())}).FirstErr())
	producer.Close()

	copts, err := ClientOpts(props)
	require.NoError(t, err)
	got := kafkatest.ConsumeAll(t, Brokers(props)[0], topic, 1, 30*time.Second, copts...)
	require.Len(t, got, 1)
	require.Equal(t, "hello "+t.Name(), string(got[0].Value))

	// the sink tasks' consumer, configured by ConsumerOpts, in a group as a task's
	opts, err := ConsumerOpts(props)
	require.NoError(t, err)
	cl, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(kafkatest.UniqueName(t, "g")), kgo.ConsumeTopics(topic))...)
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, PingConsumer(context.Background(), cl, props))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs := cl.PollRecords(ctx, 10)
	require.NoError(t, fs.Err0())
	recs := fs.Records()
	require.Len(t, recs, 1)
	require.Equal(t, "hello "+t.Name(), string(recs[0].Value))

	factoryRoundTrip(t, props)
}

// factoryRoundTrip checks the clients of the one factory with the same settings: the admin creates a
// topic (as for the DLQ), the producer of the DLQ sink and of the worker's DLQ reporter writes to it, a
// transactional producer commits a record and aborts another, and a read_committed consumer reads back.
func factoryRoundTrip(t *testing.T, props map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clients := PluginClients{}
	topic := kafkatest.UniqueName(t, "factory")

	admin, err := clients.NewTopicAdmin(props)
	require.NoError(t, err, "admin")
	require.NoError(t, admin.EnsureTopic(ctx, connect.TopicSpec{Name: topic, Partitions: 2, ReplicationFactor: 1,
		Configs: map[string]string{"cleanup.policy": "delete"}}))
	require.NoError(t, admin.EnsureTopic(ctx, connect.TopicSpec{Name: topic, Partitions: 2, ReplicationFactor: 1}), "an existing topic is fine")
	admin.Close()

	producer, err := clients.NewProducer(props)
	require.NoError(t, err, "producer")
	require.NoError(t, producer.Produce(ctx, &connect.ProducerRecord{Topic: topic, Partition: 1, Value: []byte("plain"),
		Headers: []connect.RecordHeader{{Key: "h", Value: []byte("v")}}}))
	err = producer.Produce(ctx, &connect.ProducerRecord{Topic: topic, Partition: 5, Value: []byte("nowhere")})
	var pe *connect.ProduceError
	require.ErrorAs(t, err, &pe)
	require.True(t, pe.Fatal, "a partition the topic lacks: %v", err)
	producer.Close()

	tx, err := clients.NewTransactionalProducer(props, kafkatest.UniqueName(t, "tx"))
	require.NoError(t, err, "transactional producer")
	require.NoError(t, tx.BeginTransaction())
	require.NoError(t, tx.Produce(ctx, &connect.ProducerRecord{Topic: topic, Partition: 0, Value: []byte("aborted")}))
	require.NoError(t, tx.AbortTransaction(ctx))
	require.NoError(t, tx.BeginTransaction())
	require.NoError(t, tx.Produce(ctx, &connect.ProducerRecord{Topic: topic, Partition: 0, Value: []byte("committed")}))
	group := kafkatest.UniqueName(t, "txgroup")
	require.NoError(t, tx.SendOffsetsToTransaction(ctx, group, []connect.TopicPartitionOffset{{Topic: topic, Partition: 0, Offset: 7}}))
	require.NoError(t, tx.CommitTransaction(ctx))
	tx.Close()

	admin, err = clients.NewTopicAdmin(props)
	require.NoError(t, err, "admin")
	offs, err := admin.GroupOffsets(ctx, group, topic)
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 7}, offs, "offsets sent to the committed transaction")
	admin.Close()

	reader, err := clients.NewTopicReader(props, connect.TopicReaderSpec{Topic: topic, ReadCommitted: true,
		Partitions: map[int32]connect.ReadPosition{0: {Offset: connect.ReadFromStart}}})
	require.NoError(t, err, "topic reader")
	recs, err := reader.Poll(ctx)
	require.NoError(t, err)
	require.Equal(t, "committed", string(recs[0].Value), "read_committed skips the aborted record")
	reader.Close()

	cl, err := Open(ctx, props, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	require.NoError(t, err, "consumer")
	defer cl.Close()
	got := map[string]int32{}
	for len(got) < 2 {
		fs := cl.PollFetches(ctx)
		require.NoError(t, fs.Err0())
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)] = r.Partition })
	}
	require.Equal(t, map[string]int32{"plain": 1, "committed": 0}, got)
}

// factoryConnectErr is connectErr for the factory's producer and admin, as the DLQs open them.
func factoryConnectErr(t *testing.T, addr string, props map[string]string, admin bool) error {
	t.Helper()
	props["bootstrap.servers"] = addr
	start := time.Now()
	var err error
	if admin {
		var a connect.TopicAdmin
		if a, err = (PluginClients{}).NewTopicAdmin(props); err == nil {
			a.Close()
		}
	} else {
		var p connect.Producer
		if p, err = (PluginClients{}).NewProducer(props); err == nil {
			p.Close()
		}
	}
	require.Less(t, time.Since(start), time.Minute, "the client neither connected nor failed within a minute")
	return err
}

// consumerConnectErr is connectErr for the sink tasks' consumer (ConsumerOpts and PingConsumer).
func consumerConnectErr(t *testing.T, addr string, props map[string]string) error {
	t.Helper()
	props["bootstrap.servers"] = addr
	opts, err := ConsumerOpts(props)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(kafkatest.UniqueName(t, "g")), kgo.ConsumeTopics("t"))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	start := time.Now()
	err = PingConsumer(context.Background(), cl, props)
	require.Less(t, time.Since(start), time.Minute, "the consumer neither connected nor failed within a minute")
	return err
}

// connectErr returns the error of opening a client from props against addr; a client that
// neither connects nor fails within a minute fails the test as hung.
func connectErr(t *testing.T, addr string, props map[string]string) error {
	t.Helper()
	props["bootstrap.servers"] = addr
	done := make(chan error, 1)
	go func() {
		cl, err := Open(context.Background(), props)
		if err == nil {
			cl.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("client neither connected nor failed within a minute")
		return nil
	}
}

func scramProps(mech string) map[string]string {
	return map[string]string{
		"security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanism":    mech,
		"sasl.jaas.config":  securekafka.ScramJAAS,
	}
}

func TestSecurityAgainstBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("needs keytool (a JVM) and a Kafka broker: skipped under -short")
	}
	start := time.Now()
	s := securekafka.MakeStores(t)
	t.Logf("keytool stores made in %v", time.Since(start).Round(time.Millisecond))
	b := securekafka.StartBroker(t, s)

	sslProps := func(proto string, extra map[string]string) map[string]string {
		p := map[string]string{"security.protocol": proto}
		if proto == "SASL_SSL" {
			p["sasl.mechanism"] = "SCRAM-SHA-512"
			p["sasl.jaas.config"] = securekafka.ScramJAAS
		}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	jksTrust := map[string]string{"ssl.truststore.location": s.TrustJKS, "ssl.truststore.password": securekafka.TrustPass} // type: JVM default JKS
	p12Trust := map[string]string{"ssl.truststore.location": s.TrustP12, "ssl.truststore.password": securekafka.TrustPass, "ssl.truststore.type": "PKCS12"}
	merge := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}

	ok := []struct {
		name  string
		addr  string
		props map[string]string
	}{
		{"scram-sha-256", b.SASLPlain, scramProps("SCRAM-SHA-256")},
		{"scram-sha-512", b.SASLPlain, scramProps("SCRAM-SHA-512")},
		{"sasl_ssl-jks-truststore", b.SASLSSL, sslProps("SASL_SSL", jksTrust)},
		{"sasl_ssl-pkcs12-truststore", b.SASLSSL, sslProps("SASL_SSL", p12Trust)},
		{"sasl_ssl-scram-sha-256-pem-truststore", b.SASLSSL, merge(sslProps("SASL_SSL", map[string]string{
			"ssl.truststore.location": s.CAPEM, "ssl.truststore.type": "PEM", "sasl.mechanism": "SCRAM-SHA-256"}))},
		{"sasl_ssl-jks-truststore-without-password", b.SASLSSL, sslProps("SASL_SSL", map[string]string{
			"ssl.truststore.location": s.TrustJKS})},
		{"sasl_ssl-no-hostname-check-via-localhost", "localhost:" + portOf(b.SASLSSL), sslProps("SASL_SSL", merge(p12Trust,
			map[string]string{"ssl.endpoint.identification.algorithm": ""}))},
		{"mtls-jks-keystore-with-key-password", b.SSL, sslProps("SSL", merge(jksTrust, map[string]string{
			"ssl.keystore.location": s.ClientJKS, "ssl.keystore.password": securekafka.ClientJKSStore, "ssl.key.password": securekafka.ClientJKSKey}))},
		{"mtls-pkcs12-keystore", b.SSL, sslProps("SSL", merge(p12Trust, map[string]string{
			"ssl.keystore.location": s.ClientP12, "ssl.keystore.password": securekafka.ClientP12Pass, "ssl.keystore.type": "PKCS12"}))},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) { roundTrip(t, b, tc.addr, tc.props) })
	}

	bad := []struct {
		name  string
		addr  string
		props map[string]string
		want  []string // all substrings of the error, case-insensitive
	}{
		{"scram-wrong-password", b.SASLPlain, map[string]string{
			"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="wrong";`},
			[]string{"authentication failed", "SCRAM-SHA-512"}},
		{"scram-unknown-user", b.SASLPlain, map[string]string{
			"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="mallory" password="x";`},
			[]string{"authentication failed"}},
		{"mechanism-not-enabled-on-broker", b.SASLPlain, map[string]string{
			"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";`},
			[]string{"sasl.mechanism PLAIN is not enabled", "does not support the requested SASL mechanism"}},
		{"hostname-mismatch", "localhost:" + portOf(b.SASLSSL), sslProps("SASL_SSL", p12Trust),
			[]string{"certificate", "localhost"}},
		{"untrusted-server-without-hostname-check", b.SASLSSL, sslProps("SASL_SSL", map[string]string{
			"ssl.endpoint.identification.algorithm": ""}),
			[]string{"certificate"}},
		{"mtls-without-client-certificate", b.SSL, sslProps("SSL", jksTrust), []string{"tls"}},
		{"wrong-truststore-password", b.SASLSSL, sslProps("SASL_SSL", merge(p12Trust, map[string]string{"ssl.truststore.password": "nope"})),
			[]string{"ssl.truststore.location", "password"}},
		{"wrong-jks-keystore-password", b.SSL, sslProps("SSL", merge(jksTrust, map[string]string{
			"ssl.keystore.location": s.ClientJKS, "ssl.keystore.password": "nope"})),
			[]string{"ssl.keystore.location", "password"}},
		{"wrong-jks-key-password", b.SSL, sslProps("SSL", merge(jksTrust, map[string]string{
			"ssl.keystore.location": s.ClientJKS, "ssl.keystore.password": securekafka.ClientJKSStore})), // key password defaults to the store's
			[]string{"ssl.key.password"}},
		{"unsupported-mechanism", b.SASLPlain, map[string]string{
			"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": securekafka.ScramJAAS},
			[]string{"sasl.mechanism GSSAPI is not supported", "SCRAM-SHA-512"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			err := connectErr(t, tc.addr, tc.props)
			require.Error(t, err)
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				require.Contains(t, strings.ToLower(err.Error()), strings.ToLower(w))
			}
		})
		t.Run(tc.name+"/consumer", func(t *testing.T) {
			err := consumerConnectErr(t, tc.addr, tc.props)
			require.Error(t, err)
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				require.Contains(t, strings.ToLower(err.Error()), strings.ToLower(w))
			}
		})
		for _, admin := range []bool{false, true} {
			name := map[bool]string{false: "/producer", true: "/admin"}[admin]
			t.Run(tc.name+name, func(t *testing.T) {
				err := factoryConnectErr(t, tc.addr, tc.props, admin)
				require.Error(t, err)
				t.Logf("error: %v", err)
				for _, w := range tc.want {
					require.Contains(t, strings.ToLower(err.Error()), strings.ToLower(w))
				}
			})
		}
	}
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

func portOf(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }
