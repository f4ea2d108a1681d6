package main

import (
	"os"
	"strings"
	"testing"
)

// The fixture is `helm template askbridge ../askbridge -f ../askbridge/ci/standalone-values.yaml`.
func TestCheckRefusesWhatADeploymentWouldTripOn(t *testing.T) {
	b, err := os.ReadFile("testdata/standalone.yaml")
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	run := func(manifest, mode string) error {
		r, err := decode(strings.NewReader(manifest))
		if err != nil {
			return err
		}
		return check(r, mode, false, false)
	}
	if err := run(good, "standalone"); err != nil {
		t.Fatalf("the rendered chart: %v", err)
	}
	for _, tc := range []struct {
		name, from, to, mode, want string
	}{
		{"misspelt field", "readinessProbe:", "readinesProbe:", "standalone", `unknown field "readinesProbe"`},
		{"wrong type", "replicas: 2", `replicas: "2"`, "standalone", "cannot unmarshal string"},
		{"duplicate key", "      terminationGracePeriodSeconds: 40", "      terminationGracePeriodSeconds: 40\n      terminationGracePeriodSeconds: 41", "standalone", "already set in map"},
		{"unknown kind", "kind: Service\n", "kind: Ingress\n", "standalone", `unexpected kind "Ingress"`},
		{"readiness on /healthz", "path: /readyz", "path: /healthz", "standalone", "readiness probe: want GET /readyz"},
		{"URL of another mode", "", "", "sentinel", "want a redis+sentinel:// URL"},
		{"secret not mounted", "mountPath: /run/secrets/askbridge", "mountPath: /run/secrets/other", "standalone", "no Secret volume is mounted there"},
		{"root", "runAsNonRoot: true", "runAsNonRoot: false", "standalone", "non-root"},
		{"selector", "  selector:\n    app.kubernetes.io/name: askbridge", "  selector:\n    app.kubernetes.io/name: other", "standalone", "Service's selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := good
			if tc.from != "" {
				if !strings.Contains(good, tc.from) {
					t.Fatalf("the fixture has no %q", tc.from)
				}
				bad = strings.Replace(good, tc.from, tc.to, 1)
			}
			err := run(bad, tc.mode)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
