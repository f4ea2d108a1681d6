package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
)

// The bridge as wired: a route with email: {require_login: true} refuses
// the link's POST until the browser signs in to the web inbox (whose
// sign-in brings it back to the link's page), then records the
// recipient's answer.
func TestEmailRequireLoginThroughTheInboxSignIn(t *testing.T) {
	fake := fakesmtp.Start(t, fakesmtp.Options{Mode: fakesmtp.Plain})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	a, err := app.New(context.Background(), app.Settings{Addr: addr, PublicURL: base,
		Operators: []api.Operator{{ID: "maria", Projects: []string{"ops"}, Token: "maria-operator-token-0123"}},
		Routes:    []domain.Route{{Name: "prod", Targets: []domain.Target{{Platform: "email", To: []string{"ana@example.com"}}}, EmailRequireLogin: true}},
		Email:     email.Config{SMTPURL: "smtp+insecure://" + fake.Addr, From: "askbridge@example.com", LinkSecret: strings.Repeat("k", 32)}})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, a)
	res, err := a.Router().Ask(context.Background(), "ops", &domain.AskRequest{RunID: "r1", AgentID: "bot", Route: "prod",
		Kind: domain.KindApproval, Question: "Deploy to production?", Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(fake.Messages()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(fake.Messages()) == 0 {
		t.Fatal("no mail")
	}
	link := regexp.MustCompile(`http://[^\s"<>]+/email/c/[A-Za-z0-9_-]+`).FindString(fake.Messages()[0].Parts()["text/plain"])
	if link == "" {
		t.Fatal("no answer link in the mail")
	}
	path := strings.TrimPrefix(link, base)

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	csrfRe := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	unescape := strings.NewReplacer("&#43;", "+", "&#61;", "=", "&amp;", "&").Replace
	call := func(method, u string, form url.Values) (int, string, http.Header) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, u, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", base)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header
	}
	press := func() (int, string) {
		t.Helper()
		status, body, _ := call("GET", link, nil)
		m := csrfRe.FindStringSubmatch(body)
		if status != http.StatusOK || m == nil {
			t.Fatalf("the link's page: %d\n%s", status, body)
		}
		status, body, _ = call("POST", link, url.Values{"csrf": {unescape(m[1])}})
		return status, body
	}

	status, body, _ := call("GET", link, nil)
	signIn := "/login?next=" + url.QueryEscape(path)
	if status != http.StatusOK || !strings.Contains(body, "Sign-in required") || !strings.Contains(body, signIn) {
		t.Fatalf("the page before signing in: %d\n%s", status, body)
	}
	if status, body = press(); status != http.StatusForbidden || !strings.Contains(body, "Sign in to answer") {
		t.Fatalf("the POST before signing in: %d\n%s", status, body)
	}
	if q, _ := a.Router().Question(context.Background(), "ops", res.Question.ID); q.Status != domain.StatusPending {
		t.Fatalf("refused, yet the question is %s", q.Status)
	}

	// The sign-in the page links to, and back to the page.
	status, body, _ = call("GET", base+signIn, nil)
	m := csrfRe.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("the sign-in page: %d\n%s", status, body)
	}
	status, _, h := call("POST", base+"/login", url.Values{"csrf": {unescape(m[1])}, "token": {"maria-operator-token-0123"}, "next": {path}})
	if status != http.StatusSeeOther || h.Get("Location") != path {
		t.Fatalf("signing in: %d to %q, want back to %s", status, h.Get("Location"), path)
	}
	if _, body, _ = call("GET", link, nil); !strings.Contains(body, "you are signed in as maria") {
		t.Errorf("the page after signing in:\n%s", body)
	}
	if status, body = press(); status != http.StatusOK {
		t.Fatalf("the POST after signing in: %d\n%s", status, body)
	}
	q, _ := a.Router().Question(context.Background(), "ops", res.Question.ID)
	if q.Status != domain.StatusAnswered || q.Response != "Allow" || q.RespondedBy.Key() != "email:ana@example.com" {
		t.Fatalf("recorded %s %q by %+v", q.Status, q.Response, q.RespondedBy)
	}
}
