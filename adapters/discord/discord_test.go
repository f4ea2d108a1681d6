package discord

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// env is one bridge replica with the Discord adapter, talking to a fake
// Discord.
type env struct {
	t      testing.TB
	fake   *fakediscord.Server
	store  lifecycle.Store
	router *lifecycle.Router
	ad     *Adapter
	srv    *httptest.Server
}

type envOption func(*lifecycle.RouterConfig, *Config)

func newEnv(t testing.TB, fake *fakediscord.Server, st lifecycle.Store, opts ...envOption) *env {
	t.Helper()
	rc := lifecycle.RouterConfig{Store: st, Routes: []domain.Route{
		{Name: "threads", Targets: []domain.Target{{Platform: "discord", Channel: "1000"}}, Thread: "per-run"},
	}, HasWebhookSecret: func(string) bool { return true }, PostTimeout: 5 * time.Second, PauseWait: 2 * time.Second}
	cfg := Config{BotToken: fake.BotToken, ApplicationID: fake.AppID, PublicKey: fake.PublicKey(), APIURL: fake.APIURL(),
		RetryBackoff: 10 * time.Millisecond,
		// Under the race detector a click can take longer than the 20 ms
		// default; the tests' clicks get their outcome in the response.
		AckAfter: time.Second}
	for _, o := range opts {
		o(&rc, &cfg)
	}
	router := lifecycle.NewRouter(rc)
	ad, err := New(cfg, router, nil)
	if err != nil {
		t.Fatal(err)
	}
	router.AddChannel(ad)
	mux := http.NewServeMux()
	ad.Register(mux)
	srv := httptest.NewServer(mux)
	fake.Target = srv.URL + "/discord/interactions"
	e := &env{t: t, fake: fake, store: st, router: router, ad: ad, srv: srv}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ad.Close(ctx)
		_ = router.Close(ctx)
		srv.Close()
	})
	return e
}

func (e *env) ask(req *domain.AskRequest) *domain.Question {
	e.t.Helper()
	if len(req.Targets) == 0 && req.Route == "" {
		req.Targets = []domain.Target{{Platform: "discord", Channel: "1000"}}
	}
	if req.AgentID == "" {
		req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
	}
	res, err := e.router.Ask(context.Background(), "ops", req, "")
	if err != nil {
		e.t.Fatalf("ask: %v", err)
	}
	return res.Question
}

// copyOf returns the message id of the question's Discord copy.
func (e *env) copyOf(q *domain.Question) string {
	e.t.Helper()
	for _, t := range q.Targets {
		if t.Platform == "discord" {
			if t.Error != "" || t.MessageTS == "" {
				e.t.Fatalf("discord copy not posted: %q", t.Error)
			}
			return t.MessageTS
		}
	}
	e.t.Fatal("no discord target")
	return ""
}

// wait is the agent's waiter: it returns the final record.
func (e *env) wait(q *domain.Question) *domain.Question {
	e.t.Helper()
	final, err := e.router.Wait(context.Background(), "ops", q.ID, 5*time.Second)
	if err != nil {
		e.t.Fatalf("wait: %v", err)
	}
	if !final.Status.Final() {
		e.t.Fatalf("question still %s", final.Status)
	}
	return final
}

// settle waits for the adapter's background work (handling interactions,
// which may still be answering), then for the finishing of copies: the
// order of a shutdown, since answers start the finishing.
func (e *env) settle() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.ad.Close(ctx); err != nil {
		e.t.Fatalf("adapter background work: %v", err)
	}
	if err := e.router.Flush(ctx); err != nil {
		e.t.Fatalf("finishing copies: %v", err)
	}
}

// assertFinished checks a copy shows the outcome line and no live control.
func (e *env) assertFinished(msgID, outcome string) {
	e.t.Helper()
	m := e.fake.Message(msgID)
	if !strings.Contains(m.Content, outcome) {
		e.t.Errorf("finished copy says %q, want it to contain %q", m.Content, outcome)
	}
	for _, row := range m.Components {
		for _, c := range row.Components {
			if !c.Disabled {
				e.t.Errorf("finished copy still has a live control %q (%s)", c.Label, c.CustomID)
			}
		}
	}
}

var (
	alice = fakediscord.User{ID: "4455", Name: "alice", Roles: []string{"667788"}}
	bob   = fakediscord.User{ID: "9999", Name: "bob"}
	carol = fakediscord.User{ID: "7777", Name: "carol", Roles: []string{"667788"}}
)

func authItem() domain.Item {
	return domain.Item{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{
		{Label: "OAuth 2.0", Description: "Standard", Value: "oauth", Recommended: true},
		{Label: "API key", Description: "Simple"},
	}}
}

func featuresItem() domain.Item {
	return domain.Item{Question: "Which features?", Header: "Features", MultiSelect: true, Options: []domain.Option{
		{Label: "Login"}, {Label: "Dashboard"}, {Label: "Billing", Description: "Stripe"},
	}}
}
