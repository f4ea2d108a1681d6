package email

import (
	"context"
	"crypto/tls"
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

	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/storetest"
)

const (
	ana   = "ana@example.com"
	bob   = "bob@example.com"
	carol = "carol@other.example"
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// env is a bridge with the email surface against a fake SMTP server, its
// link pages served on loopback.
type env struct {
	t      *testing.T
	st     *store.Store
	router *lifecycle.Router
	ad     *Adapter
	smtp   *fakesmtp.Server
	web    *httptest.Server
	// deliverer sends the queued mails.
	deliverer *resume.Deliverer
	clock     *testClock
	logs      *logBuf
}

const (
	smtpUser = "bridge"
	smtpPass = "s3cret-smtp-password-never-logged"
	linkKey  = "0123456789abcdef0123456789abcdef-link-secret"
)

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, fakesmtp.Options{Mode: fakesmtp.StartTLS, User: smtpUser, Password: smtpPass}, "")
}

// newEnvWith starts the fake in mode o; smtpURL overrides the URL built
// from it ("%s" is the fake's address).
func newEnvWith(t *testing.T, o fakesmtp.Options, smtpURL string) *env {
	t.Helper()
	fake := fakesmtp.Start(t, o)
	if smtpURL == "" {
		scheme := map[fakesmtp.Mode]string{fakesmtp.StartTLS: "smtp", fakesmtp.TLS: "smtps", fakesmtp.Plain: "smtp+insecure"}[o.Mode]
		user := ""
		if o.User != "" {
			user = o.User + "@"
		}
		smtpURL = scheme + "://" + user + "%s"
	}
	e := newEnvSMTP(t, strings.ReplaceAll(smtpURL, "%s", fake.Addr), o.Password, tlsFor(fake))
	e.smtp = fake
	return e
}

// envOptions are a test bridge's routes and inbox session check.
type envOptions struct {
	routes   []domain.Route
	signedIn func(r *http.Request, project string) (string, bool)
}

// newEnvSMTP builds the bridge against the SMTP server at smtpURL.
func newEnvSMTP(t *testing.T, smtpURL, password string, tlsConf *tls.Config) *env {
	t.Helper()
	return newEnvOpts(t, smtpURL, password, tlsConf, envOptions{})
}

func newEnvOpts(t *testing.T, smtpURL, password string, tlsConf *tls.Config, o envOptions) *env {
	t.Helper()
	e := &env{t: t, st: storetest.Open(t, ""), clock: &testClock{now: time.Now().UTC().Truncate(time.Second)}, logs: &logBuf{}}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.router = lifecycle.NewRouter(lifecycle.RouterConfig{Store: e.st, Clock: e.clock, Logger: log, Routes: o.routes,
		CopyRetryBackoff: 5 * time.Millisecond, CopyRetryFor: time.Second})
	t.Cleanup(func() { _ = e.router.Close(context.Background()) })
	mux := http.NewServeMux()
	e.web = httptest.NewServer(mux)
	t.Cleanup(e.web.Close)
	// Every mail goes through the durable queue and the deliverer, as in
	// the bridge (app wires the same).
	e.deliverer = resume.New(resume.Config{Store: e.st, Logger: log, Poll: 20 * time.Millisecond,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, AttemptTimeout: 10 * time.Second})
	ad, err := New(Config{SMTPURL: smtpURL, SMTPPassword: password, From: "askbridge <askbridge@bridge.example>",
		LinkSecret: linkKey, PublicURL: e.web.URL, TLS: tlsConf, SendTimeout: 5 * time.Second,
		Outbox: e.st, Kick: e.deliverer.Kick, SignedIn: o.signedIn}, e.router, log)
	if err != nil {
		t.Fatal(err)
	}
	e.ad = ad
	e.deliverer.AddSender(ad)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.deliverer.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	e.router.AddChannel(ad)
	e.router.AddChannel(otherChat{})
	ad.Register(mux)
	return e
}

func emailTarget(to ...string) domain.Target { return domain.Target{Platform: Platform, To: to} }

// ask asks req (mailed to ana and bob unless req names targets).
func (e *env) ask(req domain.AskRequest) *domain.Question {
	e.t.Helper()
	if req.AgentID == "" {
		req.AgentID, req.AgentName = "deploy-bot", "Deploy bot"
	}
	if req.RunID == "" {
		req.RunID = "run-1"
	}
	if req.Targets == nil {
		req.Targets = []domain.Target{emailTarget(ana, bob)}
	}
	res, err := e.router.Ask(context.Background(), "ops", &req, "")
	if err != nil {
		e.t.Fatalf("ask: %v", err)
	}
	e.settle()
	return res.Question
}

func (e *env) settle() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.router.Flush(ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) question(id string) *domain.Question {
	e.t.Helper()
	q, err := e.router.Question(context.Background(), "ops", id)
	if err != nil {
		e.t.Fatal(err)
	}
	return q
}

// mailsTo returns the mails the fake accepted for addr, oldest first,
// once there is one (the deliverer sends them in the background).
func (e *env) mailsTo(addr string) []fakesmtp.Message { return e.waitMails(addr, 1) }

// waitMails returns the mails for addr once there are at least n (or
// what there is after 10 s).
func (e *env) waitMails(addr string, n int) []fakesmtp.Message {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ms := e.sentTo(addr)
		if len(ms) >= n || time.Now().After(deadline) {
			return ms
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sentTo returns the mails the fake accepted for addr so far.
func (e *env) sentTo(addr string) []fakesmtp.Message {
	var out []fakesmtp.Message
	for _, m := range e.smtp.Messages() {
		for _, to := range m.To {
			if to == addr {
				out = append(out, m)
			}
		}
	}
	return out
}

var linkRe = regexp.MustCompile(`https?://[^\s"<>]+/email/c/[A-Za-z0-9_-]+`)

// links returns the answer links of a mail's text part, in order.
func links(m fakesmtp.Message) []string { return linkRe.FindAllString(m.Parts()["text/plain"], -1) }

// browser is a person's browser: it keeps cookies.
func (e *env) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type page struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, c *http.Client, req *http.Request) page {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{res.StatusCode, res.Header, string(b)}
}

func get(t *testing.T, c *http.Client, link string) page {
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	return do(t, c, req)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// confirm opens link in c and presses the page's button with form.
func confirm(t *testing.T, c *http.Client, link string, form url.Values) page {
	t.Helper()
	p := get(t, c, link)
	if p.status != http.StatusOK {
		t.Fatalf("opening the link: %d %s", p.status, p.body)
	}
	m := csrfRe.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the page has no form:\n%s", p.body)
	}
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", htmlUnescape(m[1]))
	return post(t, c, link, form)
}

func post(t *testing.T, c *http.Client, link string, form url.Values) page {
	req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, c, req)
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#43;", "+", "&#61;", "=", "&amp;", "&", "&#34;", `"`, "&#39;", "'").Replace(s)
}

func pick(s string) domain.RespondRequest { return domain.RespondRequest{Response: &s} }

func authItem() domain.Item {
	return domain.Item{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{
		{Label: "OAuth 2.0", Description: "Standard"}, {Label: "API key", Description: "Simple"}}}
}

func deployApproval() domain.AskRequest {
	return domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy api v2.14 to production?",
		Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}
}

// otherChat is a chat surface that posts nowhere: questions may go to
// Slack and email at once.
type otherChat struct{}

func (otherChat) Platform() string { return "slack" }
func (otherChat) Post(_ context.Context, q *domain.Question, t domain.Target) (domain.Target, error) {
	t.MessageTS = "1700000000.0001"
	return t, nil
}
func (otherChat) Update(context.Context, *domain.Question, domain.Target) error { return nil }
func (otherChat) Remind(context.Context, *domain.Question, domain.Target) error { return nil }
func (otherChat) Finish(context.Context, *domain.Question, domain.Target) error { return nil }

// tlsFor trusts the fake's certificate.
func tlsFor(fake *fakesmtp.Server) *tls.Config { return &tls.Config{RootCAs: fake.CA} }
