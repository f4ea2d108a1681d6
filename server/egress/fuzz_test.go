package egress_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/server/egress"
)

// FuzzCheckURL: any resume url an agent sends is handled without a panic,
// and whatever the strict policy admits has a host that, read the way a
// resolver reads it, is no refused address.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://2130706433/", "http://[::ffff:127.0.0.1]/", "https://u:p@x/", "http://0x7f.1/",
		"http://metadata.google.internal./", "https://runtime.example/resume", "http://[fe80::1%25eth0]/", "http://127.1:99999/"} {
		f.Add(s)
	}
	strict := egress.MustNew(egress.Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		if strict.CheckURL(raw) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("admitted an unparsable url %q", raw)
		}
		if u.User != nil {
			t.Fatalf("admitted userinfo in %q", raw)
		}
		host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if a, ok := egress.ParseHostIP(host); ok && egress.Classify(a) != "" {
			t.Fatalf("admitted %q: %s is %s", raw, a, egress.Classify(a))
		}
	})
}
