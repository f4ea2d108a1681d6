package email

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/domain"
)

// inboxCookie stands for the web inbox's session cookie; the fake check
// below plays the inbox's SignedIn (adapters/web tests the real one).
const inboxCookie = "askbridge_session"

// newLoginEnv is a bridge whose "prod" route has email: {require_login:
// true} and whose "dev" route does not. The inbox knows one session:
// alice's, for project ops.
func newLoginEnv(t *testing.T) *env {
	t.Helper()
	fake := fakesmtp.Start(t, fakesmtp.Options{Mode: fakesmtp.Plain})
	signedIn := func(r *http.Request, project string) (string, bool) {
		c, err := r.Cookie(inboxCookie)
		if err != nil || c.Value != "alice-session" || project != "ops" {
			return "", false
		}
		return "alice", true
	}
	routes := []domain.Route{
		{Name: "prod", Targets: []domain.Target{emailTarget(ana, bob)}, EmailRequireLogin: true},
		{Name: "dev", Targets: []domain.Target{emailTarget(ana, bob)}},
	}
	e := newEnvOpts(t, "smtp+insecure://"+fake.Addr, "", nil, envOptions{routes: routes, signedIn: signedIn})
	e.smtp = fake
	return e
}

func (e *env) signIn(c *http.Client) {
	u, _ := url.Parse(e.web.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: inboxCookie, Value: "alice-session", Path: "/"}})
}

// A forwarded mail's link, pressed in a browser not signed in to the
// inbox, decides nothing on a require_login route; the same link in a
// signed-in browser records the recipient's answer, and the audit trail
// says who was signed in.
func TestEmailRequireLoginRefusesAForwardedMail(t *testing.T) {
	e := newLoginEnv(t)
	req := deployApproval()
	req.Route = "prod"
	q := e.ask(req)
	allow := links(e.mailsTo(ana)[0])[0]

	forwarded := e.browser()
	p := get(t, forwarded, allow)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Sign-in required") ||
		!strings.Contains(p.body, `href="`+e.web.URL+`/login?next=%2Femail%2Fc%2F`) {
		t.Fatalf("the confirmation page does not say a sign-in is needed: %d\n%s", p.status, p.body)
	}
	p = confirm(t, forwarded, allow, nil)
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "Sign in to answer") || !strings.Contains(p.body, "Nothing was recorded") {
		t.Fatalf("a POST without a session: %d\n%s", p.status, p.body)
	}
	if got := e.question(q.ID); got.Status != domain.StatusPending || got.RespondedBy != nil {
		t.Fatalf("a POST without a session decided the question: %s by %+v", got.Status, got.RespondedBy)
	}
	// A stale or foreign cookie is no session either.
	u, _ := url.Parse(e.web.URL)
	forwarded.Jar.SetCookies(u, []*http.Cookie{{Name: inboxCookie, Value: "forged", Path: "/"}})
	if p = confirm(t, forwarded, allow, nil); p.status != http.StatusForbidden {
		t.Fatalf("a POST with a forged session cookie: %d", p.status)
	}

	// The refusal did not use the link: signed in, the same link answers.
	person := e.browser()
	e.signIn(person)
	p = get(t, person, allow)
	if !strings.Contains(p.body, "you are signed in as alice") || strings.Contains(p.body, "/login?next=") {
		t.Errorf("the page for a signed-in browser:\n%s", p.body)
	}
	p = confirm(t, person, allow, nil)
	if p.status != http.StatusOK {
		t.Fatalf("a signed-in POST: %d\n%s", p.status, p.body)
	}
	got := e.question(q.ID)
	if got.Status != domain.StatusAnswered || got.Response != "Allow" || got.RespondedBy.Key() != "email:"+ana {
		t.Fatalf("recorded %s %q by %+v, want Allow by email:%s", got.Status, got.Response, got.RespondedBy, ana)
	}
	trail, err := e.st.Audit(context.Background(), "ops", q.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, a := range trail {
		if a.Type == "email_signed_in" && a.By != nil && a.By.Key() == "email:"+ana && strings.Contains(a.Detail, "signed in to the inbox as alice") {
			noted = true
		}
	}
	if !noted {
		t.Errorf("the audit trail does not say who was signed in: %+v", trail)
	}
}

// A route without the key answers from the link alone, as before.
func TestEmailRouteWithoutRequireLoginIsUnchanged(t *testing.T) {
	e := newLoginEnv(t)
	req := deployApproval()
	req.Route = "dev"
	q := e.ask(req)
	allow := links(e.mailsTo(ana)[0])[0]
	c := e.browser()
	if p := get(t, c, allow); strings.Contains(p.body, "Sign-in required") || strings.Contains(p.body, "/login?next=") {
		t.Errorf("a route without require_login asks for a sign-in:\n%s", p.body)
	}
	if p := confirm(t, c, allow, nil); p.status != http.StatusOK {
		t.Fatalf("%d %s", p.status, p.body)
	}
	if got := e.question(q.ID); got.Status != domain.StatusAnswered || got.RespondedBy.Key() != "email:"+ana {
		t.Fatalf("recorded %s by %+v", got.Status, got.RespondedBy)
	}
}
