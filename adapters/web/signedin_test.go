package web

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SignedIn, which the email surface's require_login asks: only a live
// session of an operator who may see the project counts; an anonymous
// cookie, another project, a revoked operator or a signed-out session
// does not.
func TestSignedInNamesTheOperatorOfALiveSession(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true})
	u, _ := url.Parse(e.srv.URL)
	with := func(cookies []*http.Cookie) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/email/c/x", nil)
		for _, c := range cookies {
			r.AddCookie(c)
		}
		return r
	}
	_, ok := e.inbox.SignedIn(with(nil), "ops")
	assert.False(t, ok, "no cookie")

	anon := e.client()
	anon.csrf("/login") // an anonymous session cookie
	_, ok = e.inbox.SignedIn(with(anon.hc.Jar.Cookies(u)), "ops")
	assert.False(t, ok, "a session that never signed in")

	c := e.client()
	c.login("tok-alice-0123456789")
	cookies := c.hc.Jar.Cookies(u)
	op, ok := e.inbox.SignedIn(with(cookies), "ops")
	assert.True(t, ok)
	assert.Equal(t, "alice", op)
	_, ok = e.inbox.SignedIn(with(cookies), "web")
	assert.False(t, ok, "alice may not see project web")

	csrf := c.csrf("/")
	p := c.post("/logout", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, p.status)
	_, ok = e.inbox.SignedIn(with(cookies), "ops")
	assert.False(t, ok, "a signed-out session, replayed")

	b := e.client()
	b.login("tok-bob-0123456789")
	bc := b.hc.Jar.Cookies(u)
	_, ok = e.inbox.SignedIn(with(bc), "web")
	assert.True(t, ok)
	e.auth.revoke("tok-bob-0123456789")
	_, ok = e.inbox.SignedIn(with(bc), "web")
	assert.False(t, ok, "an operator removed from the configuration")
}

// On a loopback bridge without operators nobody is signed in.
func TestSignedInIsNobodyWithoutOperators(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	require.Equal(t, http.StatusOK, c.getPage("/").status, "the open inbox")
	u, _ := url.Parse(e.srv.URL)
	r, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/", nil)
	require.NotEmpty(t, c.hc.Jar.Cookies(u), "the open inbox sets a session cookie")
	for _, ck := range c.hc.Jar.Cookies(u) {
		r.AddCookie(ck)
	}
	_, ok := e.inbox.SignedIn(r, "ops")
	assert.False(t, ok)
}
