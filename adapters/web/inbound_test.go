package web

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

// TestInboundConformance runs the inbound suite every surface passes
// against the web inbox: people are operators signed in with their own
// token, answer and dismiss with the pages' forms (no JavaScript), and
// read the page each form leads to.
func TestInboundConformance(t *testing.T) {
	channeltest.RunInbound(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.InboundEnv {
		rc.Store = newTestStore(t)
		router := lifecycle.NewRouter(rc)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = router.Close(ctx)
		})
		auth := &fakeAuth{ops: map[string]fakeOp{}}
		for _, name := range []string{channeltest.Alice, channeltest.Bob, channeltest.Mallory} {
			auth.ops[webToken(name)] = fakeOp{id: name, projects: []string{"ops"}}
		}
		in, err := New(Config{Router: router, Auth: auth, RequireLogin: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		in.Register(mux)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		e := &env{t: t, store: rc.Store, router: router, inbox: in, srv: srv, auth: auth}
		// The inbox shows every question of the projects an operator may
		// see: nothing is posted, the question's page is its copy.
		return &channeltest.InboundEnv{Router: router, Driver: &webDriver{e: e, clients: map[string]*client{}, told: map[string][]string{}},
			ConfirmsDismissal: true}
	})
}

func webToken(name string) string { return "tok-" + name + "-0123456789" }

// webDriver acts as the suite's people in the web inbox: one signed-in
// browser each.
type webDriver struct {
	e       *env
	mu      sync.Mutex
	clients map[string]*client
	told    map[string][]string
}

// browser is name's browser, signed in as their operator.
func (d *webDriver) browser(name string) *client {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.clients[name]
	if !ok {
		c = d.e.client()
		c.login(webToken(name))
		d.clients[name] = c
	}
	return c
}

func (d *webDriver) Person(name string) domain.Person {
	return domain.Person{Platform: "web", ID: name, Name: name}
}

func (d *webDriver) Words() domain.Words { return words }

var (
	alertRe   = regexp.MustCompile(`(?s)<div class="alert[^"]*" role="alert"[^>]*>\s*(?:<p class="alert-title">|<h1>)(.*?)(?:</p>|</h1>)\s*<p>(.*?)</p>`)
	flashRe   = regexp.MustCompile(`(?s)<p class="flash" role="status">(.*?)</p>`)
	cardRe    = regexp.MustCompile(`(?s)<article class="card.*?</article>`)
	tagRe     = regexp.MustCompile(`<[^>]*>`)
	spaceRe   = regexp.MustCompile(`\s+`)
	dismissRe = regexp.MustCompile(`(?s)<form method="post" action="/questions/[^"]+/dismiss" class="dismiss-confirm">.*?<p>(.*?)</p>`)
)

// text is what a person reads of a piece of a page.
func text(s string) string {
	return strings.TrimSpace(spaceRe.ReplaceAllString(html.UnescapeString(tagRe.ReplaceAllString(s, " ")), " "))
}

// send posts a card's form as name, as the page does, and keeps what the
// page it leads to tells them: the alert, or the notice after a redirect.
func (d *webDriver) send(name string, q *domain.Question, action string, form url.Values) {
	c := d.browser(name)
	form.Set("csrf", c.csrf("/"))
	form.Set("return", "question")
	p := c.post("/questions/"+q.ID+"/"+action, form)
	if p.status == http.StatusSeeOther {
		p = c.getPage(p.location)
	}
	var said []string
	if m := alertRe.FindStringSubmatch(p.body); m != nil {
		said = append(said, text(m[1])+"\n"+text(m[2]))
	}
	if m := flashRe.FindStringSubmatch(p.body); m != nil {
		said = append(said, text(m[1]))
	}
	d.mu.Lock()
	d.told[name] = append(d.told[name], said...)
	d.mu.Unlock()
}

func option(it domain.Item, label string) string {
	if j := slices.IndexFunc(it.Options, func(o domain.Option) bool { return o.Label == label }); j >= 0 {
		return "o" + strconv.Itoa(j)
	}
	return ""
}

// Click presses the option's button: the card's form with a0=o<n>.
func (d *webDriver) Click(name string, q *domain.Question, label string) {
	form := url.Values{"a0": {option(q.Questions[0], label)}}
	if q.Action != nil {
		form.Set("digest", q.Action.Digest)
	}
	d.send(name, q, "answer", form)
}

// Other types in the card's "Other answer" box and presses Send (an
// open-ended item: its text box and Submit).
func (d *webDriver) Other(name string, q *domain.Question, s string) {
	form := url.Values{"t0": {s}}
	if !q.Questions[0].OpenEnded() {
		form.Set("a0", "other")
	}
	d.send(name, q, "answer", form)
}

// DenyWithNote writes the note in the card's "Deny with note…" field and
// presses its button (a0=note), as the page sends it.
func (d *webDriver) DenyWithNote(name string, q *domain.Question, note string) {
	form := url.Values{"a0": {"note"}, "t0": {note}}
	if q.Action != nil {
		form.Set("digest", q.Action.Digest)
	}
	d.send(name, q, "answer", form)
}

// NoteLimit: the note field takes the bridge's 4,000 characters.
func (d *webDriver) NoteLimit() int { return domain.MaxAnswerLen }

// Submit fills every item of the card's form and presses Submit.
func (d *webDriver) Submit(name string, q *domain.Question, answers map[string][]string) {
	form := url.Values{}
	for n, it := range q.Questions {
		f := strconv.Itoa(n)
		for _, choice := range answers[it.Question] {
			if o := option(it, choice); o != "" {
				form.Add("a"+f, o)
				continue
			}
			form.Set("t"+f, choice)
			if !it.OpenEnded() && !it.MultiSelect {
				form.Set("a"+f, "other")
			}
		}
	}
	d.send(name, q, "answer", form)
}

// Dismiss opens Dismiss… on the question's page, reads its confirmation,
// and sends it.
func (d *webDriver) Dismiss(name string, q *domain.Question) string {
	asked := ""
	if m := dismissRe.FindStringSubmatch(d.browser(name).getPage("/questions/" + q.ID).body); m != nil {
		asked = text(m[1])
	}
	d.send(name, q, "dismiss", url.Values{})
	return asked
}

func (d *webDriver) Told(name string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.told[name])
}

// page is the question's page as someone who may see it reads it.
func (d *webDriver) page(q *domain.Question) string {
	p := d.browser(channeltest.Alice).getPage("/questions/" + q.ID)
	if p.status != http.StatusOK {
		d.e.t.Fatalf("the question's page: status %d", p.status)
	}
	return p.body
}

func (d *webDriver) Copy(q *domain.Question) string {
	return text(cardRe.FindString(d.page(q)))
}

func (d *webDriver) Live(q *domain.Question) bool {
	return strings.Contains(d.page(q), `action="/questions/`+q.ID+`/answer"`)
}
