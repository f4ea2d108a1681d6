package teams

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
)

var aliceUser = faketeams.User{AADObjectID: "aad-alice", Name: "Alice Example"}

// pressOption is the invoke of the option button labelled label on q's
// posted card, as the card carries it.
func pressOption(t *testing.T, e *env, q *domain.Question, label string) map[string]any {
	t.Helper()
	c := e.F.Activity(q.Targets[0].MessageTS).Versions[0]
	act, ok := seenAction(c, label)
	if !ok {
		t.Fatalf("the card has no action %q:\n%s", label, c)
	}
	return e.F.InvokeActivity(aliceUser, q.Targets[0].MessageTS, act.Verb, act.Data)
}

// TestTokensRefused: a request whose Bot Framework token is forged,
// expired, for another bot, from another issuer, signed by an unknown key,
// or for another serviceUrl gets 401, and the click it carries changes
// nothing; the same click with a valid token answers.
func TestTokensRefused(t *testing.T) {
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		token func(f *faketeams.Server) string
		act   func(a map[string]any)
	}{
		{"no token", func(*faketeams.Server) string { return "-" }, nil},
		{"forged: right key id, another key", func(f *faketeams.Server) string { return f.Token(faketeams.TokenOptions{Key: other}) }, nil},
		{"alg none", func(f *faketeams.Server) string { return f.Token(faketeams.TokenOptions{Alg: "none"}) }, nil},
		{"expired", func(f *faketeams.Server) string {
			return f.Token(faketeams.TokenOptions{Expires: time.Now().Add(-10 * time.Minute), NotBefore: time.Now().Add(-time.Hour)})
		}, nil},
		{"not yet valid", func(f *faketeams.Server) string {
			return f.Token(faketeams.TokenOptions{NotBefore: time.Now().Add(30 * time.Minute)})
		}, nil},
		{"wrong audience", func(f *faketeams.Server) string { return f.Token(faketeams.TokenOptions{Audience: "another-bot"}) }, nil},
		{"wrong issuer", func(f *faketeams.Server) string {
			return f.Token(faketeams.TokenOptions{Issuer: "https://sts.windows.net/evil/"})
		}, nil},
		{"unknown key", func(f *faketeams.Server) string {
			return f.Token(faketeams.TokenOptions{Key: other, Kid: "not-published"})
		}, nil},
		{"serviceUrl mismatch", func(f *faketeams.Server) string {
			return f.Token(faketeams.TokenOptions{ServiceURL: "https://smba.trafficmanager.net/emea/"})
		}, nil},
		{"key not endorsed for the channel", func(*faketeams.Server) string { return "" }, func(a map[string]any) { a["channelId"] = "webchat" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			q := e.ask(t, domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth",
				Options: []domain.Option{{Label: "OAuth 2.0"}, {Label: "API key"}}}}})
			act := pressOption(t, e, q, "API key")
			if c.act != nil {
				c.act(act)
			}
			tok := c.token(e.F)
			if tok == "-" {
				tok = "not.a.jwt"
			}
			r := e.F.Post(e.Endpoint, act, tok)
			if r.HTTPStatus != http.StatusUnauthorized {
				t.Errorf("answered %d, want 401", r.HTTPStatus)
			}
			if got := e.get(t, q); got.Status != domain.StatusPending || got.RespondedBy != nil {
				t.Errorf("a refused request changed the question: %s by %v", got.Status, got.RespondedBy)
			}
			// The same click, signed properly, is an answer.
			act["id"] = "retry-" + c.name
			delete(act, "channelId")
			if r := e.F.Post(e.Endpoint, act, ""); r.HTTPStatus != http.StatusOK || r.Type != cardContentType {
				t.Fatalf("a valid click answered %d %q", r.HTTPStatus, r.Type)
			}
			if got := e.get(t, q); got.Status != domain.StatusAnswered || got.Response != "API key" {
				t.Errorf("a valid click left %s %q", got.Status, got.Response)
			}
		})
	}
}

// TestKeyRotation: a token signed by a key published after the keys were
// fetched is accepted (the keys are fetched again for its unknown id);
// tokens naming unknown keys fetch the keys at most once per KeyRefreshMin.
func TestKeyRotation(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) { c.KeyRefreshMin = time.Hour })
	q := e.ask(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy?", Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}})
	first := pressOption(t, e, q, "Approve")
	// The first request fetches the keys.
	act := e.F.InvokeActivity(aliceUser, q.Targets[0].MessageTS, "refresh", json.RawMessage(`{"q":"`+q.ID+`"}`))
	if r := e.F.Post(e.Endpoint, act, ""); r.HTTPStatus != http.StatusOK {
		t.Fatalf("refresh: %d", r.HTTPStatus)
	}
	fetched := e.F.Calls("jwks")
	for i := range 5 {
		forged, _ := rsa.GenerateKey(rand.Reader, 2048)
		a := e.F.InvokeActivity(aliceUser, q.Targets[0].MessageTS, "refresh", json.RawMessage(`{"q":"`+q.ID+`"}`))
		if r := e.F.Post(e.Endpoint, a, e.F.Token(faketeams.TokenOptions{Key: forged, Kid: "made-up-" + string(rune('a'+i))})); r.HTTPStatus != http.StatusUnauthorized {
			t.Fatalf("unknown key: %d", r.HTTPStatus)
		}
	}
	if n := e.F.Calls("jwks") - fetched; n > 1 {
		t.Errorf("five tokens with made-up key ids fetched the keys %d times, want at most once", n)
	}

	e2 := newEnv(t, nil, func(c *Config) { c.KeyRefreshMin = time.Nanosecond })
	q2 := e2.ask(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy?", Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}})
	a := e2.F.InvokeActivity(aliceUser, q2.Targets[0].MessageTS, "refresh", json.RawMessage(`{"q":"`+q2.ID+`"}`))
	if r := e2.F.Post(e2.Endpoint, a, ""); r.HTTPStatus != http.StatusOK {
		t.Fatalf("refresh: %d", r.HTTPStatus)
	}
	e2.F.Rotate()
	_ = first
	if r := e2.F.Post(e2.Endpoint, pressOption(t, e2, q2, "Approve"), ""); r.HTTPStatus != http.StatusOK {
		t.Fatalf("a token signed by the new key answered %d, want 200", r.HTTPStatus)
	}
	if got := e2.get(t, q2); got.Status != domain.StatusAnswered {
		t.Errorf("after the rotation: %s", got.Status)
	}
}

// TestReplayIgnored: an activity sent again (same id, valid token) is
// acknowledged and changes nothing; the card is not touched again.
func TestReplayIgnored(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(t, domain.AskRequest{Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth",
		Options: []domain.Option{{Label: "OAuth 2.0"}, {Label: "API key"}}}}})
	act := pressOption(t, e, q, "API key")
	if r := e.F.Post(e.Endpoint, act, ""); r.Type != cardContentType {
		t.Fatalf("first: %+v", r)
	}
	e.settle(t)
	updates := e.F.Calls(faketeams.OpUpdate)
	again := e.F.Post(e.Endpoint, act, "")
	if again.HTTPStatus != http.StatusOK || again.Type == cardContentType {
		t.Errorf("the replay was handled again: %d %q %s", again.HTTPStatus, again.Type, again.Value)
	}
	e.settle(t)
	if n := e.F.Calls(faketeams.OpUpdate); n != updates {
		t.Errorf("the replay updated the card %d more times", n-updates)
	}
}

// TestKeysFetchedAgainAfterAFailure: when the OpenID metadata could not be
// read (an outage, a request cancelled), the next request a moment later
// fetches the keys again instead of every request being refused until the
// unknown-key rate limit allows it.
func TestKeysFetchedAgainAfterAFailure(t *testing.T) {
	e := newEnv(t, nil, func(c *Config) { c.KeyRefreshMin = time.Hour })
	q := e.ask(t, domain.AskRequest{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	e.F.Fail(faketeams.OpOpenID, http.StatusServiceUnavailable)
	if r := e.F.Post(e.Endpoint, pressOption(t, e, q, "Yes"), ""); r.HTTPStatus != http.StatusUnauthorized {
		t.Fatalf("while the metadata is down: %d, want 401", r.HTTPStatus)
	}
	time.Sleep(keyRetryAfterFailure + 100*time.Millisecond)
	if r := e.F.Post(e.Endpoint, pressOption(t, e, q, "Yes"), ""); r.HTTPStatus != http.StatusOK {
		t.Fatalf("once the metadata is back: %d, want 200", r.HTTPStatus)
	}
}
