package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/askbridge/askbridge/server/egress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAskTimeProbes: every resume url the trust-model issue found accepted,
// and its neighbours, each a row: refused by default with a reason a user can
// act on, or admitted.
func TestAskTimeProbes(t *testing.T) {
	strict := egress.MustNew(egress.Config{})
	local := egress.MustNew(egress.Config{AllowLoopback: true})
	allow := egress.MustNew(egress.Config{Allow: []string{"10.0.0.0/8", "runtime.internal:8443", "*.svc.cluster.local",
		"169.254.0.0/16", "192.168.1.5", "[fd00::7]:9000"}})
	cases := []struct {
		name   string
		policy *egress.Policy
		url    string
		want   string // "" = admitted, else a part of the reason
	}{
		{"metadata IPv4", strict, "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"metadata AWS IPv6", strict, "http://[fd00:ec2::254]/", "cloud metadata"},
		{"metadata GCP name", strict, "http://metadata.google.internal/computeMetadata/v1/", "cloud metadata"},
		{"metadata GCP name, trailing dot", strict, "http://metadata.google.internal./", "cloud metadata"},
		{"metadata Alibaba", strict, "http://100.100.100.200/", "cloud metadata"},
		{"metadata ECS", strict, "http://169.254.170.2/v2/credentials", "cloud metadata"},
		{"private 10/8", strict, "http://10.0.0.5/resume", "private network"},
		{"private 172.16/12", strict, "http://172.20.1.1/", "private network"},
		{"private 192.168/16", strict, "http://192.168.1.10:8080/", "private network"},
		{"loopback, the bridge's own API", strict, "http://127.0.0.1:8080/api/projects/demo/agent-questions", "loopback"},
		{"loopback 127/8", strict, "http://127.8.9.10/", "loopback"},
		{"localhost", strict, "http://localhost:9000/", "loopback"},
		{"LOCALHOST.", strict, "http://LOCALHOST./", "loopback"},
		{"a .localhost name", strict, "http://app.localhost/", "loopback"},
		{"loopback IPv6", strict, "http://[::1]:9000/", "loopback"},
		{"IPv4-mapped loopback", strict, "http://[::ffff:127.0.0.1]/", "loopback"},
		{"IPv4-mapped loopback, hex", strict, "http://[::ffff:7f00:1]/", "loopback"},
		{"unspecified 0.0.0.0", strict, "http://0.0.0.0:8080/", "unspecified"},
		{"unspecified ::", strict, "http://[::]/", "unspecified"},
		{"decimal loopback", strict, "http://2130706433/", "loopback"},
		{"hex loopback", strict, "http://0x7f000001/", "loopback"},
		{"octal loopback", strict, "http://0177.0.0.1/", "loopback"},
		{"short loopback", strict, "http://127.1/", "loopback"},
		{"decimal metadata", strict, "http://2852039166/", "cloud metadata"},
		{"not a valid number", strict, "http://99999999999/", "not a valid address"},
		{"link-local IPv4", strict, "http://169.254.10.10/", "link-local"},
		{"link-local IPv6", strict, "http://[fe80::1]/", "link-local"},
		{"ULA fc00::/7", strict, "http://[fd12:3456::1]/", "private network"},
		{"CGNAT", strict, "http://100.64.0.1/", "carrier-grade NAT"},
		{"multicast", strict, "http://224.0.0.1/", "multicast"},
		{"broadcast", strict, "http://255.255.255.255/", "reserved"},
		{"IPv6 multicast", strict, "http://[ff02::1]/", "multicast"},
		{"NAT64 of metadata", strict, "http://[64:ff9b::a9fe:a9fe]/", "cloud metadata"},
		{"6to4 of private", strict, "http://[2002:0a00:0001::1]/", "private network"},
		{"IPv4-compatible loopback", strict, "http://[::127.0.0.1]/", "loopback"},
		{"IPv4-compatible metadata", strict, "http://[::a9fe:a9fe]/", "cloud metadata"},
		{"IPv4-translated loopback", strict, "http://[::ffff:0:7f00:1]/", "loopback"},
		{"IPv4-translated private", strict, "http://[::ffff:0:a00:1]/", "private network"},
		{"local-use NAT64 of metadata", strict, "http://[64:ff9b:1::a9fe:a9fe]/", "cloud metadata"},
		{"local-use NAT64 /48 of loopback", strict, "http://[64:ff9b:1:7f00:0:100::]/", "private network"},
		{"local-use NAT64 of a public address", strict, "http://[64:ff9b:1::808:808]/", "private network"},
		{"user and password", strict, "https://user:pass@runtime.example/resume", "user name or password"},
		{"user only", strict, "https://user@runtime.example/resume", "user name or password"},
		{"ftp", strict, "ftp://runtime.example/resume", "http or https"},
		{"file", strict, "file:///etc/passwd", "http or https"},
		{"relative", strict, "/resume", "http or https"},
		{"public name", strict, "https://runtime.example/resume", ""},
		{"public address", strict, "https://93.184.216.34:8080/resume", ""},
		{"plain http to a public address", strict, "http://93.184.216.34:8080/resume", "unencrypted"},
		{"plain http to a public name", strict, "http://runtime.example/resume", "unencrypted"},
		{"plain http to an allowed name", egress.MustNew(egress.Config{Allow: []string{"runtime.example"}}), "http://runtime.example/resume", ""},
		{"plain http to an allowed network", egress.MustNew(egress.Config{Allow: []string{"10.0.0.0/8"}}), "http://10.1.2.3/resume", ""},
		{"public IPv6", strict, "https://[2606:2800:220:1:248:1893:25c8:1946]/", ""},
		{"a name that resolves later", strict, "https://rebind.example/", ""},

		{"local default: loopback", local, "http://127.0.0.1:9000/resume", ""},
		{"local default: localhost", local, "http://localhost:9000/resume", ""},
		{"local default: [::1]", local, "http://[::1]:9000/resume", ""},
		{"local default: decimal loopback", local, "http://2130706433:9000/", ""},
		{"local default: still no private", local, "http://10.0.0.5/", "private network"},
		{"local default: still no metadata", local, "http://169.254.169.254/", "cloud metadata"},
		{"local default: still no userinfo", local, "http://u:p@127.0.0.1/", "user name or password"},

		{"allowed CIDR", allow, "http://10.1.2.3/resume", ""},
		{"allowed host:port", allow, "https://runtime.internal:8443/resume", ""},
		{"allowed host, other port", allow, "https://runtime.internal/resume", ""},
		{"allowed wildcard", allow, "http://runner.ci.svc.cluster.local/resume", ""},
		{"allowed single address", allow, "http://192.168.1.5/", ""},
		{"neighbour of an allowed address", allow, "http://192.168.1.6/", "private network"},
		{"allowed IPv6 with port", allow, "http://[fd00::7]:9000/", ""},
		{"allowed IPv6, other port", allow, "http://[fd00::7]:9001/", "private network"},
		{"a CIDR does not admit metadata", allow, "http://169.254.169.254/", "cloud metadata"},
		{"a CIDR admits the rest of it", allow, "http://169.254.1.1/", ""},
		{"allow list does not admit loopback", allow, "http://127.0.0.1/", "loopback"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.CheckURL(c.url)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			var re *egress.RefusedError
			assert.True(t, errors.As(err, &re))
		})
	}
}

func TestRefusalSaysHowToAllow(t *testing.T) {
	err := egress.MustNew(egress.Config{}).CheckURL("http://10.0.0.5/")
	require.Error(t, err)
	assert.Equal(t, "10.0.0.5 is a private network address; resume webhooks may not reach it; "+
		"to deliver there on purpose, add it to webhooks.allow in the bridge's configuration", err.Error())
}

func TestAllowListErrorsNameTheEntry(t *testing.T) {
	_, err := egress.New(egress.Config{Allow: []string{"10.0.0.0/8", "not a host!", "host:99999", "*.x:80"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"not a host!"`)
	assert.Contains(t, err.Error(), `"host:99999": the port must be a number from 1 to 65535`)
	assert.Contains(t, err.Error(), `"*.x:80"`)
	assert.NotContains(t, err.Error(), `"10.0.0.0/8"`)
}

func TestParseHostIPMatchesInetAton(t *testing.T) {
	for in, want := range map[string]string{
		"2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1", "127.1": "127.0.0.1",
		"127.0.1": "127.0.0.1", "10.0x10.1": "10.16.0.1", "1.2.3.4": "1.2.3.4", "::1": "::1",
	} {
		a, ok := egress.ParseHostIP(in)
		require.True(t, ok, in)
		assert.Equal(t, want, a.String(), in)
	}
	for _, in := range []string{"example.com", "1.2.3.4.5", "256.1.1.1", "4294967296", "08.1.1.1", ""} {
		_, ok := egress.ParseHostIP(in)
		assert.False(t, ok, in)
	}
}

// fakeDNS resolves the names of a test.
func fakeDNS(m map[string][]string) func(context.Context, string, string) ([]netip.Addr, error) {
	return func(_ context.Context, _, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range m[host] {
			out = append(out, netip.MustParseAddr(a))
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

// TestConnectTimeChecksEveryResolvedAddress: a name passes the ask-time
// check, then resolves to loopback or metadata (DNS rebinding): the
// connection is refused before anything is sent. An allowed name, or the
// local default, reaches its receiver.
func TestConnectTimeChecksEveryResolvedAddress(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	dns := fakeDNS(map[string][]string{
		"rebind.example":   {"127.0.0.1"},
		"meta.example":     {"169.254.169.254"},
		"mixed.example":    {"10.0.0.1", "127.0.0.1"},
		"runtime.internal": {"127.0.0.1"},
		"compat.example":   {"::127.0.0.1"},
		"xlat.example":     {"::ffff:0:7f00:1"},
		"nat64.example":    {"64:ff9b:1::a9fe:a9fe"},
	})
	cases := []struct {
		name string
		cfg  egress.Config
		host string
		want string
	}{
		{"rebound to loopback", egress.Config{}, "rebind.example", "rebind.example (127.0.0.1) is a loopback address"},
		{"rebound to metadata", egress.Config{}, "meta.example", "cloud metadata"},
		{"every address refused", egress.Config{}, "mixed.example", "private network"},
		{"literal loopback", egress.Config{}, "127.0.0.1", "loopback"},
		{"decimal loopback", egress.Config{}, "2130706433", "loopback"},
		{"localhost is never looked up", egress.Config{}, "localhost", "loopback"},
		{"allowed name", egress.Config{Allow: []string{"runtime.internal"}}, "runtime.internal", ""},
		{"allowed name with its port", egress.Config{Allow: []string{"runtime.internal:" + port}}, "runtime.internal", ""},
		{"allowed name, other port", egress.Config{Allow: []string{"runtime.internal:1"}}, "runtime.internal", "loopback"},
		{"local default", egress.Config{AllowLoopback: true}, "rebind.example", ""},
		{"local default, still no metadata", egress.Config{AllowLoopback: true}, "meta.example", "cloud metadata"},
		{"resolved to IPv4-compatible loopback", egress.Config{}, "compat.example", "loopback"},
		{"resolved to IPv4-translated loopback", egress.Config{}, "xlat.example", "loopback"},
		{"resolved to local-use NAT64 of metadata", egress.Config{AllowLoopback: true}, "nat64.example", "cloud metadata"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.LookupNetIP = dns
			p := egress.MustNew(c.cfg)
			before := hits
			resp, err := p.Client(2*time.Second).Post("http://"+net.JoinHostPort(c.host, port)+"/resume", "application/json", nil)
			if c.want == "" {
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, before+1, hits)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, before, hits, "nothing reached the receiver")
		})
	}
}

// TestRedirectIsNotFollowed: the client hands back the 3xx as it is; the
// signed body never reaches the Location.
func TestRedirectIsNotFollowed(t *testing.T) {
	reached := false
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	resp, err := egress.MustNew(egress.Config{AllowLoopback: true}).Client(time.Second).Post(srv.URL, "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 307, resp.StatusCode)
	assert.Equal(t, other.URL+"/steal", resp.Header.Get("Location"))
	assert.False(t, reached)
}
