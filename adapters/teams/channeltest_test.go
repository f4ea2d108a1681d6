package teams

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/teams/faketeams"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestChannelConformance runs the suite every Channel adapter passes
// against the fake Teams.
func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.Env {
		e := newEnv(t, &rc)
		f := e.F
		op := map[channeltest.Op]string{channeltest.OpPost: faketeams.OpCreate, channeltest.OpFinish: faketeams.OpUpdate}
		return &channeltest.Env{
			Router: e.Router, Channel: e.A, Target: domain.Target{Platform: Platform, Channel: testChannel},
			Missing:   "19:missing@thread.tacv2",
			Delete:    func(c domain.Target) { f.Delete(c.MessageTS) },
			RateLimit: func(o channeltest.Op) { f.Fail(op[o], http.StatusTooManyRequests) },
			Fail: func(o channeltest.Op, status, n int) {
				for range n {
					f.Fail(op[o], status)
				}
			},
			Text:  func(c domain.Target) string { return seenText(f.Activity(c.MessageTS).Card()) },
			Live:  func(c domain.Target) bool { return seenLive(f.Activity(c.MessageTS).Card()) },
			Count: func(c domain.Target) int { return len(f.Activities(c.Channel)) },
			Unreachable: func() lifecycle.Channel {
				cfg := testConfig(f)
				cfg.TokenURL = "http://127.0.0.1:1/" + f.Tenant + "/oauth2/v2.0/token"
				cfg.ServiceURL = "http://127.0.0.1:1/"
				cfg.ServiceURLAllow = append(cfg.ServiceURLAllow, "http://127.0.0.1:1")
				log, _ := channeltest.NewLog()
				gone, err := New(cfg, e.Router, log)
				if err != nil {
					t.Fatal(err)
				}
				return gone
			},
			Secrets: []string{f.AppSecret},
			Logs:    e.Logs,
		}
	})
}

// TestFinishRenewsExpiredToken: the Connector refusing an app token that
// expired early (401) gets a new token and the call goes through.
func TestFinishRenewsExpiredToken(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(t, domain.AskRequest{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	e.F.ExpireTokens()
	q.Status, q.CancelReason = domain.StatusCancelled, domain.CancelAgent
	if err := e.A.Finish(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatalf("finish after the token expired: %v", err)
	}
	if seenLive(e.F.Activity(q.Targets[0].MessageTS).Card()) {
		t.Error("the copy still takes answers")
	}
}

// TestServiceURLNotAllowed: a conversation whose serviceUrl is not a Teams
// host is never called; the error says what to change.
func TestServiceURLNotAllowed(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(t, domain.AskRequest{Question: "Ship it?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	c := q.Targets[0]
	c.Refs["service_url"] = "https://attacker.example/"
	calls := e.F.Calls(faketeams.OpUpdate)
	err := e.A.Finish(context.Background(), q, c)
	if err == nil || !lifecycle.IsPermanent(err) {
		t.Fatalf("finish at a foreign serviceUrl: %v, want a permanent refusal", err)
	}
	if got := err.Error(); !strings.Contains(got, "TEAMS_SERVICE_URL_ALLOW") || !strings.Contains(got, "attacker.example") {
		t.Errorf("the error does not say which host nor what to change: %s", got)
	}
	if e.F.Calls(faketeams.OpUpdate) != calls {
		t.Error("the fake was called")
	}
	for _, allow := range []struct {
		list []string
		url  string
		ok   bool
	}{
		{DefaultServiceURLAllow, "https://smba.trafficmanager.net/amer/", true},
		{DefaultServiceURLAllow, "https://europe.webchat.botframework.com/", true},
		{DefaultServiceURLAllow, "https://smba.infra.gcc.teams.microsoft.com/", true},
		{DefaultServiceURLAllow, "http://smba.trafficmanager.net/amer/", false},
		{DefaultServiceURLAllow, "https://smba.trafficmanager.net.evil.example/", false},
		{DefaultServiceURLAllow, "https://evilbotframework.com/", false},
		{DefaultServiceURLAllow, "https://user:pw@smba.trafficmanager.net/", false},
		{DefaultServiceURLAllow, "https://smba.trafficmanager.net:8443/", false},
		{[]string{"http://127.0.0.1:9"}, "http://127.0.0.1:9/", true},
		{[]string{"http://127.0.0.1:9"}, "http://127.0.0.1:10/", false},
	} {
		if err := hostAllow(allow.list).check(allow.url); (err == nil) != allow.ok {
			t.Errorf("%s with %v: %v, want allowed %t", allow.url, allow.list, err, allow.ok)
		}
	}
}
