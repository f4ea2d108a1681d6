package web

import (
	"context"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/server/api"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/store"
)

// fakeAuth is the operators[] of a configuration file.
type fakeAuth struct {
	mu  sync.Mutex
	ops map[string]fakeOp // token → operator
}

type fakeOp struct {
	id       string
	projects []string
}

func (a *fakeAuth) Operator(token string) (string, []string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for t, op := range a.ops {
		if subtle.ConstantTimeCompare([]byte(t), []byte(token)) == 1 {
			return op.id, op.projects, true
		}
	}
	return "", nil, false
}

func (a *fakeAuth) revoke(token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.ops, token)
}

type env struct {
	t      *testing.T
	store  lifecycle.Store
	router *lifecycle.Router
	inbox  *Inbox
	srv    *httptest.Server
	auth   *fakeAuth
}

type envOptions struct {
	requireLogin bool
	sessionKey   []byte
	store        lifecycle.Store
	clock        lifecycle.Clock
	routes       []domain.Route
	publicURL    string
	guesses      Guesses
	imageHosts   []string
}

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	st := o.store
	if st == nil {
		st = newTestStore(t)
	}
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: st, Clock: o.clock, Routes: o.routes, HasWebhookSecret: func(string) bool { return true },
		PauseWait: 300 * time.Millisecond})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = router.Close(ctx)
	})
	auth := &fakeAuth{ops: map[string]fakeOp{
		"tok-alice-0123456789": {id: "alice", projects: []string{"ops"}},
		"tok-bob-0123456789":   {id: "bob", projects: []string{"ops", "web"}},
		"tok-root-0123456789":  {id: "root", projects: []string{"*"}},
	}}
	cfg := Config{Router: router, RequireLogin: o.requireLogin, SessionKey: o.sessionKey, PublicURL: o.publicURL, Guesses: o.guesses,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ImageHosts: o.imageHosts}
	if o.requireLogin {
		cfg.Auth = auth
	}
	in, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	in.Register(mux)
	// The JSON API on the same server, as `askbridge serve` wires it, so tests
	// can answer "through the API" for real.
	api.New(api.Config{Router: router}).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{t: t, store: st, router: router, inbox: in, srv: srv, auth: auth}
}

// newTestStore is the store the tests run on: the embedded default, the
// same code as on Redis.
func newTestStore(t *testing.T) lifecycle.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func (e *env) ask(project string, req domain.AskRequest) *domain.Question {
	e.t.Helper()
	res, err := e.router.Ask(context.Background(), project, &req, "")
	if err != nil {
		e.t.Fatalf("ask: %v", err)
	}
	return res.Question
}

func (e *env) get(project, id string) *domain.Question {
	e.t.Helper()
	q, err := e.store.Get(context.Background(), project, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// client is a browser without JavaScript: a cookie jar, no redirects
// followed unless asked.
type client struct {
	t    *testing.T
	base string
	hc   *http.Client
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: e.t, base: e.srv.URL, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (c *client) do(method, path string, form url.Values) page {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, c.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, body: string(b), location: res.Header.Get("Location"), header: res.Header}
}

func (c *client) getPage(path string) page { return c.do("GET", path, nil) }

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf loads path and returns the form token on it.
func (c *client) csrf(path string) string {
	c.t.Helper()
	p := c.getPage(path)
	m := csrfRe.FindStringSubmatch(p.body)
	if m == nil {
		c.t.Fatalf("no csrf token on %s (status %d): %s", path, p.status, p.body)
	}
	return m[1]
}

func (c *client) post(path string, form url.Values) page { return c.do("POST", path, form) }

func (c *client) login(token string) {
	c.t.Helper()
	tok := c.csrf("/login")
	p := c.post("/login", url.Values{"csrf": {tok}, "token": {token}, "next": {"/"}})
	if p.status != http.StatusSeeOther {
		c.t.Fatalf("login: status %d: %s", p.status, p.body)
	}
}
