package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
)

// The email section and email targets, as an operator writes them.
func TestEmailConfiguration(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "link-secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(body string) string {
		p := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write(`public_url: https://askbridge.example.com
email: {smtp_url: "smtp://askbridge@mail.example.com:587", from: "askbridge <askbridge@example.com>", link_secret_file: ` + secret + `}
routes:
  - name: release
    targets: [{platform: email, to: [ana@example.com, " bob@example.com "]}]
    responders: {users: ["email:ana@example.com"], email_domains: [example.com]}
`)
	s, err := loadConfig(ok, func(k string) string {
		if k == "EMAIL_SMTP_PASSWORD" {
			return "pw-from-env"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Email.SMTPURL != "smtp://askbridge@mail.example.com:587" || s.Email.SMTPPassword != "pw-from-env" || s.Email.LinkSecret != "0123456789abcdef0123456789abcdef" {
		t.Errorf("email settings: %+v", s.Email)
	}
	tg := s.Routes[0].Targets[0]
	if tg.Platform != "email" || tg.Channel != "ana@example.com,bob@example.com" {
		t.Errorf("target %+v", tg)
	}
	if got := s.Routes[0].Responders.Groups["email_domains"]; len(got) != 1 || got[0] != "example.com" {
		t.Errorf("email_domains: %v", got)
	}
	if s.Routes[0].EmailRequireLogin {
		t.Error("a route without email.require_login requires a login")
	}
	// email: {require_login: true} on a route, with an operator to sign in.
	s, err = loadConfig(write(`public_url: https://askbridge.example.com
email: {smtp_url: "smtp://m.example.com", from: askbridge@example.com, link_secret_file: `+secret+`}
operators: [{id: alice, projects: [ops], token: "operator-token-1"}]
routes:
  - {name: prod, targets: [{platform: email, to: [ana@example.com]}], email: {require_login: true}}
  - {name: dev, targets: [{platform: email, to: [ana@example.com]}]}
`), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if !s.Routes[0].EmailRequireLogin || s.Routes[1].EmailRequireLogin {
		t.Errorf("require_login read as %v, %v; want true, false", s.Routes[0].EmailRequireLogin, s.Routes[1].EmailRequireLogin)
	}

	for body, want := range map[string]string{
		`email: {smtp_url: "smtp://m.example.com"}
routes: [{name: r, targets: [{platform: email}]}]`: "routes[0].targets[0].to: required",
		`email: {smtp_url: "smtp://m.example.com"}
routes: [{name: r, targets: [{platform: email, to: ["not an address"]}]}]`: `routes[0].targets[0].to[0]: "not an address" is not an email address`,
		`routes: [{name: r, targets: [{platform: email, to: [ana@example.com]}]}]`: `"email" is not configured`,
		`email: {smtp_url: "smtp://m.example.com"}
routes: [{name: r, targets: [{platform: email, to: [ana@example.com]}], email: {require_login: true}}]`: `routes[0].email.require_login: route "r" takes email answers only from a browser signed in to the web inbox, but no operator is configured`,
	} {
		_, err := loadConfig(write(body), func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n→ %v, want %q", body, err, want)
		}
	}
}

// The wiring: a bridge with email set mails a question through its
// deliverer and serves the answer links.
func TestBridgeMailsThroughItsDeliverer(t *testing.T) {
	fake := fakesmtp.Start(t, fakesmtp.Options{Mode: fakesmtp.Plain})
	a, err := app.New(context.Background(), app.Settings{Addr: "127.0.0.1:0", PublicURL: "http://127.0.0.1:1",
		Email: email.Config{SMTPURL: "smtp+insecure://" + fake.Addr, From: "askbridge@example.com", LinkSecret: strings.Repeat("k", 32)}})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, a)
	_, err = a.Router().Ask(context.Background(), "ops", &domain.AskRequest{RunID: "r1", AgentID: "bot", Question: "Ship it?",
		Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}, Targets: []domain.Target{{Platform: "email", To: []string{"ana@example.com"}}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(fake.Messages()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ms := fake.Messages()
	if len(ms) != 1 || !strings.Contains(ms[0].Parts()["text/plain"], "http://127.0.0.1:1"+email.LinkPath) {
		t.Fatalf("%d mails", len(ms))
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:1"+email.LinkPath+"bad", nil))
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "not valid") {
		t.Errorf("a bad link through the bridge's handler: %d", rec.Code)
	}
}

// runUntilCleanup runs a until the test ends, then closes it.
func runUntilCleanup(t *testing.T, a *app.App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		c, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		_ = a.Close(c)
	})
}
