package resume_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/server/egress"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// apiBridge is the real HTTP API with tokens configured (so loopback is
// not admitted by default), an egress policy and a deliverer.
type apiBridge struct {
	t      *testing.T
	url    string
	store  *store.Store
	policy *egress.Policy
}

func newAPIBridge(t *testing.T, policy *egress.Policy) *apiBridge {
	st, err := store.Open(context.Background(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, HasWebhookSecret: func(string) bool { return true },
		CheckResumeURL: policy.CheckURL})
	auth := api.NewAuth([]api.Agent{{ID: "bot", Project: "ops", Token: "agent-tok", Tools: []string{"ask_user"}}},
		[]api.Operator{{ID: "alice", Projects: []string{"ops"}, Token: "op-tok"}})
	mux := http.NewServeMux()
	api.New(api.Config{Router: router, Auth: auth, Metrics: api.NewMetrics()}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &apiBridge{t: t, url: srv.URL, store: st, policy: policy}
}

func (b *apiBridge) call(method, path, token string, body any) (int, map[string]any) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, b.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// answerInWebhookMode asks with resumeURL, pauses the run and answers.
func (b *apiBridge) answerInWebhookMode(run, resumeURL string) string {
	b.t.Helper()
	code, q := b.call("POST", "/api/projects/ops/agent-questions", "agent-tok", map[string]any{"run_id": run, "agent_id": "bot",
		"question": "Continue?", "resume": map[string]any{"url": resumeURL}})
	require.Equal(b.t, 201, code, q)
	code, _ = b.call("POST", "/api/projects/ops/agent-runs/"+run+"/pause", "agent-tok", nil)
	require.Equal(b.t, 200, code)
	code, r := b.call("POST", "/api/projects/ops/agent-questions/"+q["id"].(string)+"/respond", "op-tok", map[string]any{"response": "yes"})
	require.Equal(b.t, 202, code, r)
	return q["id"].(string)
}

func (b *apiBridge) failures() []string {
	evs, err := b.store.Events(context.Background(), "ops", "", 1000)
	require.NoError(b.t, err)
	var out []string
	for _, e := range evs {
		if e.Type == domain.EventResumeFailed {
			var d map[string]string
			_ = json.Unmarshal(e.Data, &d)
			out = append(out, d["reason"])
		}
	}
	return out
}

// TestRefusedResumeURLsThroughTheAPI: every resume url the trust-model
// issue found accepted is refused at ask time with 400 invalid on
// resume.url, saying why, and nothing is stored.
func TestRefusedResumeURLsThroughTheAPI(t *testing.T) {
	b := newAPIBridge(t, egress.MustNew(egress.Config{}))
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://metadata.google.internal/",
		"http://100.100.100.200/", "http://10.0.0.5/", "http://192.168.1.1/", "http://127.0.0.1:8080/api/projects/ops/agent-questions",
		"http://localhost/", "http://[::1]/", "http://0.0.0.0/", "http://2130706433/", "https://user:pass@runtime.example/resume",
	} {
		code, body := b.call("POST", "/api/projects/ops/agent-questions", "agent-tok", map[string]any{"run_id": "r", "agent_id": "bot",
			"question": "Continue?", "resume": map[string]any{"url": u}})
		require.Equal(t, 400, code, u)
		e := body["error"].(map[string]any)
		assert.Equal(t, "invalid", e["code"], u)
		details := e["details"].([]any)
		require.Len(t, details, 1, u)
		d := details[0].(map[string]any)
		assert.Equal(t, "resume.url", d["field"], u)
		assert.Regexp(t, "loopback|private|metadata|unspecified|user name", d["problem"], u)
	}
	qs, err := b.store.List(context.Background(), "ops", "", 100)
	require.NoError(t, err)
	assert.Empty(t, qs, "nothing was stored")
	_, err = b.store.Run(context.Background(), "ops", "r")
	assert.Equal(t, domain.ENotFound, domain.ErrorCode(err), "no run was created")
}

// TestNameResolvingToLoopbackIsRefusedWhenConnecting: a resume url whose
// name passes the ask-time check but resolves to loopback (DNS rebinding)
// never reaches the receiver: the delivery fails for good, visibly.
func TestNameResolvingToLoopbackIsRefusedWhenConnecting(t *testing.T) {
	var hits atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer receiver.Close()
	ru, _ := url.Parse(receiver.URL)
	policy := egress.MustNew(egress.Config{LookupNetIP: func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host == "runtime.example" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}})
	b := newAPIBridge(t, policy)
	b.answerInWebhookMode("r1", "https://runtime.example:"+ru.Port()+"/resume")
	var outcomes []string
	d := resume.New(resume.Config{Store: b.store, Egress: policy, Secret: func(string) []byte { return []byte("s") },
		Observe: func(o string) { outcomes = append(outcomes, o) }})
	d.Once(context.Background())
	d.Once(context.Background())
	assert.Zero(t, hits.Load(), "the receiver on loopback was never reached")
	assert.Equal(t, []string{"failed"}, outcomes, "failed for good at once, not retried")
	fails := b.failures()
	require.Len(t, fails, 1)
	assert.Contains(t, fails[0], "runtime.example (127.0.0.1) is a loopback address")
}

// TestRedirectIsAFailedDeliveryNotFollowed: a 307 to another host is not
// followed; the signed body never reaches it, and the delivery fails for
// good with the Location in its reason.
func TestRedirectIsAFailedDeliveryNotFollowed(t *testing.T) {
	var stolen, redirects atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stolen.Add(1) }))
	defer other.Close()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirects.Add(1)
		http.Redirect(w, r, other.URL+"/collect", http.StatusTemporaryRedirect)
	}))
	defer receiver.Close()
	ru, _ := url.Parse(receiver.URL)
	policy := egress.MustNew(egress.Config{Allow: []string{"127.0.0.1:" + ru.Port()}})
	b := newAPIBridge(t, policy)
	b.answerInWebhookMode("r1", receiver.URL+"/resume")
	d := resume.New(resume.Config{Store: b.store, Egress: policy, Secret: func(string) []byte { return []byte("s") }})
	d.Once(context.Background())
	d.Once(context.Background())
	assert.EqualValues(t, 1, redirects.Load(), "one attempt: a 3xx is not retried")
	assert.Zero(t, stolen.Load(), "the redirect target never got the signed body")
	fails := b.failures()
	require.Len(t, fails, 1)
	assert.Contains(t, fails[0], "307")
	assert.Contains(t, fails[0], other.URL+"/collect")
}
