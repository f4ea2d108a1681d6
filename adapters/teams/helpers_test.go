package teams

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/storetest"
)

// The channel every test posts in.
const (
	testTeam    = "19:team0001@thread.tacv2"
	testChannel = "19:deploys0001@thread.tacv2"
)

// env is an adapter on a Router with its own store, against a fake Teams,
// its messaging endpoint served at Endpoint.
type env struct {
	F        *faketeams.Server
	A        *Adapter
	Router   *lifecycle.Router
	Endpoint string
	Logs     func() string
}

// testConfig is a Config for f.
func testConfig(f *faketeams.Server) Config {
	return Config{AppID: f.AppID, AppSecret: f.AppSecret, TenantID: f.Tenant,
		OpenIDMetadataURL: f.MetadataURL(), TokenURL: f.TokenURL(), ServiceURL: f.ServiceURL(),
		ServiceURLAllow: []string{"http://" + f.Host()}, RetryBackoff: 10 * time.Millisecond}
}

// newEnv builds an env on rc (the suites' clock and logger) or a default.
func newEnv(t testing.TB, rc *lifecycle.RouterConfig, tweak ...func(*Config)) *env {
	t.Helper()
	f := faketeams.New(t)
	f.AddChannel(testChannel, "Deployments")
	if rc == nil {
		rc = &lifecycle.RouterConfig{HasWebhookSecret: func(string) bool { return true },
			CopyRetryBackoff: 5 * time.Millisecond, CopyRetryFor: time.Second}
	}
	rc.Store = storetest.Open(t, "")
	router := lifecycle.NewRouter(*rc)
	log, logs := channeltest.NewLog()
	cfg := testConfig(f)
	for _, fn := range tweak {
		fn(&cfg)
	}
	a, err := New(cfg, router, log)
	if err != nil {
		t.Fatal(err)
	}
	router.AddChannel(a)
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = router.Close(ctx)
	})
	return &env{F: f, A: a, Router: router, Endpoint: srv.URL + "/teams/messages", Logs: logs}
}

// ask asks req in project "ops" on the test channel.
func (e *env) ask(t testing.TB, req domain.AskRequest) *domain.Question {
	t.Helper()
	if req.AgentID == "" {
		req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
	}
	if req.RunID == "" {
		req.RunID = "run-1"
	}
	if req.Targets == nil {
		req.Targets = []domain.Target{{Platform: Platform, Channel: testChannel}}
	}
	res, err := e.Router.Ask(context.Background(), "ops", &req, "")
	if err != nil {
		t.Fatalf("ask: %v", err)
	}
	for _, tg := range res.Question.Targets {
		if tg.Error != "" || tg.MessageTS == "" {
			t.Fatalf("posting to %s failed: %q", tg.Channel, tg.Error)
		}
	}
	return res.Question
}

func (e *env) get(t *testing.T, q *domain.Question) *domain.Question {
	t.Helper()
	got, err := e.Router.Question(context.Background(), q.ProjectID, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (e *env) settle(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Router.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// faketeamsTokenOptions is a valid token's options.
func faketeamsTokenOptions() faketeams.TokenOptions { return faketeams.TokenOptions{} }

// postRaw posts body to the endpoint with token and returns the status.
func postRaw(t *testing.T, endpoint, token string, body []byte) int {
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
