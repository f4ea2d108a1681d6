// Command check decodes the manifests `helm template` rendered for the
// askbridge chart strictly into the Kubernetes API types (an unknown or
// misspelt field, a wrong type or a duplicate key is an error) and checks
// what a deployment relies on: probes, non-root, resources, secrets mounted
// where their _FILE variables point, selectors that match, and the Redis
// URL of the expected mode.
//
//	helm template t ../askbridge -f values.yaml | go run . -mode sentinel
//
// It is its own module so the repository's module does not carry the
// Kubernetes API; its versions are those helm v3.22.0 builds with, so the
// build cache of installing helm is reused.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// serviceMonitor holds the fields of monitoring.coreos.com/v1 ServiceMonitor
// the chart renders. The Prometheus Operator's Go module is not pulled in
// for one small CRD; strict decoding into this struct still refuses any
// field the chart renders that is not listed here.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			Authorization *struct {
				Type        string                   `json:"type"`
				Credentials corev1.SecretKeySelector `json:"credentials"`
			} `json:"authorization"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type rendered struct {
	deployments []appsv1.Deployment
	services    []corev1.Service
	configMaps  []corev1.ConfigMap
	pdbs        []policyv1.PodDisruptionBudget
	monitors    []serviceMonitor
}

func main() {
	mode := flag.String("mode", "", "the Redis mode the values select: standalone, sentinel or cluster")
	urlSecret := flag.Bool("url-secret", false, "the values take REDIS_URL from a Secret (REDIS_URL_FILE)")
	monitor := flag.Bool("service-monitor", false, "the values enable the ServiceMonitor")
	flag.Parse()
	r, err := decode(os.Stdin)
	if err == nil {
		err = check(r, *mode, *urlSecret, *monitor)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "chart check (%s): %v\n", *mode, err)
		os.Exit(1)
	}
	fmt.Printf("chart check (%s): %d Deployment, %d Service, %d ConfigMap, %d PodDisruptionBudget, %d ServiceMonitor decoded strictly and consistent\n",
		*mode, len(r.deployments), len(r.services), len(r.configMaps), len(r.pdbs), len(r.monitors))
}

// decode splits the YAML stream into documents and decodes each strictly
// by its kind; an unknown kind is an error too.
func decode(in io.Reader) (*rendered, error) {
	var r rendered
	docs, err := splitDocuments(in)
	if err != nil {
		return nil, err
	}
	for _, doc := range docs {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("not YAML: %v\n%s", err, doc)
		}
		var dst any
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			r.deployments = append(r.deployments, appsv1.Deployment{})
			dst = &r.deployments[len(r.deployments)-1]
		case "v1 Service":
			r.services = append(r.services, corev1.Service{})
			dst = &r.services[len(r.services)-1]
		case "v1 ConfigMap":
			r.configMaps = append(r.configMaps, corev1.ConfigMap{})
			dst = &r.configMaps[len(r.configMaps)-1]
		case "policy/v1 PodDisruptionBudget":
			r.pdbs = append(r.pdbs, policyv1.PodDisruptionBudget{})
			dst = &r.pdbs[len(r.pdbs)-1]
		case "monitoring.coreos.com/v1 ServiceMonitor":
			r.monitors = append(r.monitors, serviceMonitor{})
			dst = &r.monitors[len(r.monitors)-1]
		default:
			return nil, fmt.Errorf("unexpected kind %q (apiVersion %q): teach this check about it", head.Kind, head.APIVersion)
		}
		if err := yaml.UnmarshalStrict(doc, dst); err != nil {
			return nil, fmt.Errorf("%s: %v", head.Kind, err)
		}
	}
	return &r, nil
}

func splitDocuments(in io.Reader) ([][]byte, error) {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if len(bytes.TrimSpace(stripComments(cur.Bytes()))) > 0 {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimRight(sc.Text(), " ") == "---" {
			flush()
			continue
		}
		cur.WriteString(sc.Text())
		cur.WriteByte('\n')
	}
	flush()
	return docs, sc.Err()
}

func stripComments(b []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

func check(r *rendered, mode string, urlSecret, monitor bool) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(r.deployments) != 1 || len(r.services) != 1 || len(r.configMaps) != 1 {
		return fmt.Errorf("want one Deployment, Service and ConfigMap, got %d, %d, %d", len(r.deployments), len(r.services), len(r.configMaps))
	}
	d, svc := r.deployments[0], r.services[0]
	pod := d.Spec.Template.Spec
	podLabels := labels.Set(d.Spec.Template.Labels)
	if sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels); !sel.Matches(podLabels) {
		fail("the Deployment's selector does not match its pods")
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
		fail("the Service's selector does not match the pods")
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 1 {
		fail("replicas: want at least 1")
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		fail("the pod must run as a non-root user")
	}
	if len(pod.Containers) != 1 {
		return errors.Join(append(errs, fmt.Errorf("want one container, got %d", len(pod.Containers)))...)
	}
	c := pod.Containers[0]
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path {
			fail("%s probe: want GET %s", name, path)
			return
		}
		if p.HTTPGet.Port.String() != "http" || !hasPort(c, "http") {
			fail("%s probe: port %q is not a port of the container", name, p.HTTPGet.Port.String())
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[res]; !ok || q.IsZero() {
			fail("resources.requests.%s: missing", res)
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.String() != "http" || !hasPort(c, "http") {
			fail("Service port %d targets %q, not the container's http port", p.Port, p.TargetPort.String())
		}
	}

	env := map[string]string{}
	for _, e := range c.Env {
		if _, dup := env[e.Name]; dup {
			fail("env %s is set twice", e.Name)
		}
		env[e.Name] = e.Value
	}
	for name, path := range env {
		if strings.HasSuffix(name, "_FILE") && !mounted(pod, c, path) {
			fail("%s=%s: no Secret volume is mounted there", name, path)
		}
	}
	if urlSecret {
		if _, ok := env["REDIS_URL_FILE"]; !ok {
			fail("REDIS_URL_FILE: want it set from redis.urlSecret")
		}
		if _, ok := env["REDIS_URL"]; ok {
			fail("REDIS_URL is set beside REDIS_URL_FILE")
		}
	} else {
		want := map[string]string{"standalone": "redis://", "sentinel": "redis+sentinel://", "cluster": "redis+cluster://"}[mode]
		if want == "" {
			fail("-mode %q: want standalone, sentinel or cluster", mode)
		} else if !strings.HasPrefix(env["REDIS_URL"], want) {
			fail("REDIS_URL %q: want a %s URL for mode %s", env["REDIS_URL"], want, mode)
		}
	}
	cfg, ok := r.configMaps[0].Data["bridge.yaml"]
	var parsed map[string]any
	if !ok {
		fail("the ConfigMap has no bridge.yaml")
	} else if err := yaml.UnmarshalStrict([]byte(cfg), &parsed); err != nil {
		fail("bridge.yaml: %v", err)
	} else if !mountedConfigMap(pod, c, r.configMaps[0].Name, "/etc/askbridge") {
		fail("the ConfigMap %s is not mounted at /etc/askbridge", r.configMaps[0].Name)
	}

	if len(r.pdbs) != 1 {
		fail("want one PodDisruptionBudget, got %d", len(r.pdbs))
	} else if !labels.SelectorFromSet(r.pdbs[0].Spec.Selector.MatchLabels).Matches(podLabels) {
		fail("the PodDisruptionBudget's selector does not match the pods")
	}
	if monitor != (len(r.monitors) == 1) {
		fail("ServiceMonitor: want %v, got %d", monitor, len(r.monitors))
	}
	for _, m := range r.monitors {
		if !labels.SelectorFromSet(m.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
			fail("the ServiceMonitor's selector does not match the Service")
		}
		if len(m.Spec.Endpoints) != 1 || m.Spec.Endpoints[0].Path != "/metrics" || m.Spec.Endpoints[0].Port != "http" {
			fail("the ServiceMonitor must scrape /metrics on port http")
		}
	}
	return errors.Join(errs...)
}

func hasPort(c corev1.Container, name string) bool {
	for _, p := range c.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

// mounted reports whether path lies in a Secret volume mounted in c.
func mounted(pod corev1.PodSpec, c corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				return true
			}
		}
	}
	return false
}

func mountedConfigMap(pod corev1.PodSpec, c corev1.Container, name, dir string) bool {
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && m.MountPath == dir && v.ConfigMap != nil && v.ConfigMap.Name == name {
				return true
			}
		}
	}
	return false
}
