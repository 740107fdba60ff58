// Command manifestcheck checks the Kubernetes manifests connectd ships (and the Helm chart's rendering)
// against the API's Go types, the schema the API server itself decodes with: every YAML document must
// decode strictly (no unknown field, no value of the wrong type) into the type its apiVersion and kind
// name, and a kind it does not know is an error. It also checks the rules a connectd workload keeps:
// a versioned image with a pull policy, probes whose timeout is shorter than their period, a memory
// limit, and on a read-only root a writable volume holding TMPDIR.
//
//	go run . file.yaml ... (or - for stdin)
//
// It is a module of its own so that the Kubernetes API types are no dependency of connectd.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

func newObject(apiVersion, kind string) (any, bool) {
	switch apiVersion + " " + kind {
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, true
	case "v1 Secret":
		return &corev1.Secret{}, true
	case "v1 Service":
		return &corev1.Service{}, true
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}, true
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, true
	case "apps/v1 StatefulSet":
		return &appsv1.StatefulSet{}, true
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, true
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return &monitoringv1.ServiceMonitor{}, true
	}
	return nil, false
}

func main() {
	var docs, bad int
	for _, name := range os.Args[1:] {
		var data []byte
		var err error
		if name == "-" {
			data, err = io.ReadAll(os.Stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for i, doc := range splitDocs(data) {
			docs++
			if err := check(doc); err != nil {
				bad++
				fmt.Printf("%s: document %d: %v\n", name, i+1, err)
			}
		}
	}
	fmt.Printf("%d documents, %d invalid\n", docs, bad)
	if bad > 0 || docs == 0 {
		os.Exit(1)
	}
}

// splitDocs splits a YAML stream at its "---" lines, dropping documents that hold only comments.
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), data...), []byte("\n---")) {
		empty := true
		for _, l := range strings.Split(string(d), "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				empty = false
				break
			}
		}
		if !empty {
			out = append(out, d)
		}
	}
	return out
}

func check(doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	obj, ok := newObject(head.APIVersion, head.Kind)
	if !ok {
		return fmt.Errorf("unknown kind %q of %q", head.Kind, head.APIVersion)
	}
	if head.Metadata.Name == "" {
		return fmt.Errorf("%s without metadata.name", head.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
	}
	var err error
	switch o := obj.(type) {
	case *appsv1.Deployment:
		err = checkPod(&o.Spec.Template.Spec)
	case *appsv1.StatefulSet:
		err = checkPod(&o.Spec.Template.Spec)
	case *policyv1.PodDisruptionBudget:
		if (o.Spec.MinAvailable == nil) == (o.Spec.MaxUnavailable == nil) {
			err = errors.New("needs exactly one of minAvailable and maxUnavailable")
		}
	case *monitoringv1.ServiceMonitor:
		if len(o.Spec.Endpoints) == 0 {
			err = errors.New("no endpoints")
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
	}
	return nil
}

func checkPod(pod *corev1.PodSpec) error {
	if len(pod.Containers) == 0 {
		return errors.New("no containers")
	}
	writable := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil || v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			writable[v.Name] = true
		}
	}
	for _, c := range pod.Containers {
		i := strings.LastIndex(c.Image, ":")
		if i < 0 || strings.Contains(c.Image[i:], "/") || c.Image[i+1:] == "latest" {
			return fmt.Errorf("container %s: image %q has no version tag", c.Name, c.Image)
		}
		if c.ImagePullPolicy == "" {
			return fmt.Errorf("container %s: no imagePullPolicy", c.Name)
		}
		for name, p := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe, "startupProbe": c.StartupProbe} {
			if p == nil {
				continue
			}
			timeout, period := max(p.TimeoutSeconds, 1), p.PeriodSeconds
			if period == 0 {
				period = 10
			}
			if timeout >= period {
				return fmt.Errorf("container %s: %s timeout %ds is not shorter than its period %ds", c.Name, name, timeout, period)
			}
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			return fmt.Errorf("container %s: no memory limit", c.Name)
		}
		if sc := c.SecurityContext; sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
			tmp := ""
			for _, e := range c.Env {
				if e.Name == "TMPDIR" {
					tmp = e.Value
				}
			}
			if tmp == "" {
				return fmt.Errorf("container %s: read-only root without TMPDIR on a writable volume", c.Name)
			}
			ok := false
			for _, m := range c.VolumeMounts {
				if writable[m.Name] && !m.ReadOnly && (tmp == m.MountPath || strings.HasPrefix(path.Clean(tmp), path.Clean(m.MountPath)+"/")) {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("container %s: TMPDIR %s is on no writable volume", c.Name, tmp)
			}
		}
	}
	return nil
}
