// Package deployments holds the container image, the Kubernetes manifests and the Helm chart; its tests
// check them: the manifests against the Kubernetes API types (manifestcheck), the chart rendered by helm
// with its default values and with TLS and basic authentication.
package deployments

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// helmVersion is the helm the chart is rendered with, run through the Go module proxy (not a
// dependency of the module).
const helmVersion = "v3.22.0"

// manifestCheck runs manifestcheck (a module of its own, fetched through the Go module proxy) on yaml
// and fails the test with its report when a document is invalid.
func manifestCheck(t *testing.T, yaml []byte) {
	t.Helper()
	cmd := exec.Command("go", "run", ".", "-")
	cmd.Dir = "manifestcheck"
	cmd.Stdin = bytes.NewReader(yaml)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("manifestcheck: %v\n%s", err, out)
	}
	t.Logf("manifestcheck: %s", bytes.TrimSpace(out))
}

// TestManifestsValid: the plain Kubernetes manifests decode strictly into the API's types and keep the
// workload rules (manifestcheck).
func TestManifestsValid(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds manifestcheck with the Kubernetes API types")
	}
	b, err := os.ReadFile("kubernetes/connectd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifestCheck(t, b)
}

// helm runs helm's command line at helmVersion; the test skips, saying why, when it cannot be fetched
// or built.
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "helm.sh/helm/v3/cmd/helm@" + helmVersion}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func needHelm(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds helm " + helmVersion)
	}
	if out, err := exec.Command("go", "run", "helm.sh/helm/v3/cmd/helm@"+helmVersion, "version", "--short").CombinedOutput(); err != nil {
		t.Skipf("helm %s cannot be fetched or built through the Go module proxy: %v\n%s", helmVersion, err, out)
	}
}

// docOf returns the rendered document of kind named name.
func docOf(t *testing.T, rendered []byte, kind string) string {
	t.Helper()
	for _, d := range strings.Split(string(rendered), "\n---") {
		if strings.Contains(d, "\nkind: "+kind+"\n") {
			return d
		}
	}
	t.Fatalf("no %s rendered", kind)
	return ""
}

func requireLines(t *testing.T, doc string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		found := false
		for _, dl := range strings.Split(doc, "\n") {
			if strings.TrimSpace(dl) == l {
				found = true
			}
		}
		if !found {
			t.Errorf("no line %q in\n%s", l, doc)
		}
	}
}

func forbidText(t *testing.T, doc string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(doc, s) {
			t.Errorf("%q in\n%s", s, doc)
		}
	}
}

// TestHelmChartDefaults renders the chart with its default values: valid manifests, plain HTTP with
// /health probes, the scratch volume, a PodDisruptionBudget and no ServiceMonitor.
func TestHelmChartDefaults(t *testing.T) {
	needHelm(t)
	chart := filepath.Join("helm", "connectd")
	helm(t, "lint", "--strict", chart)
	out := helm(t, "template", "demo", chart)
	manifestCheck(t, out)
	cm := docOf(t, out, "ConfigMap")
	requireLines(t, cm,
		"listeners=http://0.0.0.0:8083",
		"connectd.scratch.dir=/data/scratch",
		"config.storage.replication.factor=3",
		"config.providers=directory,env",
	)
	forbidText(t, cm, "rest.extension.classes", "ssl.")
	dep := docOf(t, out, "Deployment")
	requireLines(t, dep,
		"replicas: 3",
		`image: "connectd:0.1.0"`,
		"imagePullPolicy: IfNotPresent",
		"httpGet: {path: /health, port: rest, scheme: HTTP}",
		"readOnlyRootFilesystem: true",
		"emptyDir: {sizeLimit: 4Gi}",
	)
	docOf(t, out, "PodDisruptionBudget")
	forbidText(t, string(out), "kind: ServiceMonitor")
}

// TestHelmChartTLSAndAuth renders the chart with https, basic authentication, a secret for connector
// configurations and a ServiceMonitor (helm/connectd/ci/tls-auth-values.yaml).
func TestHelmChartTLSAndAuth(t *testing.T) {
	needHelm(t)
	chart := filepath.Join("helm", "connectd")
	values := filepath.Join(chart, "ci", "tls-auth-values.yaml")
	helm(t, "lint", "--strict", chart, "--values", values)
	out := helm(t, "template", "demo", chart, "--values", values)
	manifestCheck(t, out)
	cm := docOf(t, out, "ConfigMap")
	requireLines(t, cm,
		"listeners=https://0.0.0.0:8083",
		"rest.advertised.listener=https",
		"listeners.https.ssl.keystore.location=/etc/connectd/tls/keystore.p12",
		"listeners.https.ssl.keystore.password=${directory:/etc/connectd/secrets/tls-password:password}",
		"listeners.https.ssl.client.auth=requested",
		"rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
		"java.security.auth.login.config=/etc/connectd/config/connect_jaas.conf",
		`file="/etc/connectd/basic-auth/credentials.properties";`,
		"config.storage.replication.factor=1",
		"consumer.sasl.jaas.config=${directory:/etc/connectd/secrets/kafka-credentials:jaas}",
	)
	dep := docOf(t, out, "Deployment")
	requireLines(t, dep,
		"replicas: 2",
		`image: "registry.example.com/connectd:0.1.0"`,
		"tcpSocket: {port: rest}",
		"- {name: tls, mountPath: /etc/connectd/tls, readOnly: true}",
		"- {name: basic-auth, mountPath: /etc/connectd/basic-auth, readOnly: true}",
		"- {name: secret-kafka-credentials, mountPath: /etc/connectd/secrets/kafka-credentials, readOnly: true}",
	)
	forbidText(t, dep, "httpGet")
	sm := docOf(t, out, "ServiceMonitor")
	requireLines(t, sm,
		"scheme: https",
		"release: prometheus",
		"secret: {name: connectd-ca, key: ca.crt}",
		"username: {name: connectd-prometheus, key: username}",
	)
}
