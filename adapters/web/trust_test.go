package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/throttle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAfterSignInTheBrowserOnlyGoesToThisBridge: every next that a browser
// could turn into another site goes to "/" instead.
func TestAfterSignInTheBrowserOnlyGoesToThisBridge(t *testing.T) {
	for _, next := range []string{
		"/\t/evil.example/", "/\n/evil.example/", "/\r/evil.example/", "/ /evil.example/", "/\\evil.example/",
		"/\\/evil.example/", "//evil.example/", "///evil.example/", "https://evil.example/", "javascript:alert(1)",
		" /evil", "evil.example", "/\u0085/evil.example/", "/\x00/evil.example", "\t//evil.example",
	} {
		assert.Equal(t, "/", safeNext(next), "%q", next)
	}
	for _, next := range []string{"/", "/questions/abc", "/projects/ops/runs/r-1?x=1#top", "/%09/stays-here"} {
		assert.Equal(t, next, safeNext(next))
	}

	e := newEnv(t, envOptions{requireLogin: true})
	c := e.client()
	tok := c.csrf("/login")
	p := c.post("/login", url.Values{"csrf": {tok}, "token": {"tok-alice-0123456789"}, "next": {"/\t/evil.example/"}})
	assert.Equal(t, http.StatusSeeOther, p.status)
	assert.Equal(t, "/", p.location)
	p = c.getPage("/login?next=" + url.QueryEscape("/\t/evil.example/"))
	assert.Equal(t, "/", p.location, "signed in already: the GET bounces to / too")
}

// TestSignOutEndsTheSession: a cookie copied before sign-out no longer
// signs anyone in, on this replica or another with the same key.
func TestSignOutEndsTheSession(t *testing.T) {
	st := newTestStore(t)
	key := []byte("shared session key for the tests")
	e := newEnv(t, envOptions{requireLogin: true, sessionKey: key, store: st})
	other := newEnv(t, envOptions{requireLogin: true, sessionKey: key, store: st})
	q := e.ask("ops", domain.AskRequest{Question: "Deploy?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	c := e.client()
	c.login("tok-alice-0123456789")
	u, _ := url.Parse(e.srv.URL)
	stolen := c.hc.Jar.Cookies(u)
	csrf := c.csrf("/")

	replay := func(srv *env, method, path string, form url.Values) *http.Response {
		var body *strings.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, srv.srv.URL+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", srv.srv.URL)
		}
		for _, ck := range stolen {
			req.AddCookie(ck)
		}
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	require.Equal(t, http.StatusOK, replay(e, "GET", "/", nil).StatusCode, "the copied cookie works while signed in")

	p := c.post("/logout", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, p.status)

	for name, srv := range map[string]*env{"this replica": e, "another replica": other} {
		res := replay(srv, "GET", "/", nil)
		assert.Equal(t, http.StatusSeeOther, res.StatusCode, name)
		assert.True(t, strings.HasPrefix(res.Header.Get("Location"), "/login"), name)
		res = replay(srv, "POST", "/questions/"+q.ID+"/answer", url.Values{"csrf": {csrf}, "t0": {"Yes"}})
		assert.Equal(t, http.StatusForbidden, res.StatusCode, "%s: the copied cookie's form is refused", name)
	}
	assert.Equal(t, domain.StatusPending, e.get("ops", q.ID).Status, "nothing was answered with the old cookie")
}

// TestCookiesAreSecureWhenServedOverHTTPS: public_url https makes every
// cookie Secure without web.secure_cookies.
func TestCookiesAreSecureWhenServedOverHTTPS(t *testing.T) {
	for publicURL, want := range map[string]bool{"https://bridge.example.com": true, "": false, "http://127.0.0.1:8080": false} {
		e := newEnv(t, envOptions{requireLogin: true, publicURL: publicURL})
		c := e.client()
		tok := c.csrf("/login")
		p := c.post("/login", url.Values{"csrf": {tok}, "token": {"tok-alice-0123456789"}, "next": {"/"}})
		var sc string
		for _, v := range p.header.Values("Set-Cookie") {
			if strings.HasPrefix(v, sessionCookie+"=") {
				sc = v
			}
		}
		require.NotEmpty(t, sc)
		assert.Equal(t, want, strings.Contains(sc, "; Secure"), "public_url %q: %s", publicURL, sc)
	}
}

// TestAnotherSiteCannotMarkANotificationRead: a navigation that starts on
// another site, and the same-site refresh that carries the cookie after
// it, leave the notification unread; a person's own click reads it.
func TestAnotherSiteCannotMarkANotificationRead(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true})
	q := e.ask("ops", domain.AskRequest{Question: "Deploy?"})
	c := e.client()
	c.login("tok-alice-0123456789")
	get := func(site, user string) {
		req, _ := http.NewRequest("GET", e.srv.URL+"/questions/"+q.ID, nil)
		req.Header.Set("Sec-Fetch-Site", site)
		if user != "" {
			req.Header.Set("Sec-Fetch-User", user)
		}
		res, err := c.hc.Do(req)
		require.NoError(t, err)
		res.Body.Close()
	}
	get("cross-site", "?1")
	get("same-origin", "") // the bounce's refresh
	assert.False(t, e.get("ops", q.ID).Read, "still unread")
	get("same-origin", "?1") // a click in the inbox
	assert.True(t, e.get("ops", q.ID).Read)
}

// limiterGuesses is the API's throttle as the inbox sees it.
type limiterGuesses struct{ l throttle.Limiter }

func (g *limiterGuesses) TooMany(addr string) error {
	if w := g.l.Wait("addr:" + addr); w > 0 {
		return &domain.Error{Code: domain.ERateLimited, RetryAfter: throttle.Seconds(w)}
	}
	return nil
}

func (g *limiterGuesses) Failed(addr, _ string) error {
	if w := g.l.Fail("addr:" + addr); w > 0 {
		return &domain.Error{Code: domain.ERateLimited, RetryAfter: throttle.Seconds(w)}
	}
	return nil
}

// TestGuessingSignInTokensIsSlow: past the budget of failed sign-ins the
// page answers 429 with Retry-After and says when to try again.
func TestGuessingSignInTokensIsSlow(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true, guesses: &limiterGuesses{}})
	c := e.client()
	tok := c.csrf("/login")
	var last page
	codes := map[int]int{}
	for i := range 15 {
		last = c.post("/login", url.Values{"csrf": {tok}, "token": {fmt.Sprintf("guess-%d", i)}})
		codes[last.status]++
	}
	assert.Equal(t, 9, codes[http.StatusUnauthorized])
	assert.Equal(t, 6, codes[http.StatusTooManyRequests])
	assert.NotEmpty(t, last.header.Get("Retry-After"))
	assert.Contains(t, last.body, "Try again in")
}
