package email

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store/storetest"
)

// TestBatchConformance runs the batch suite by mail: the recipients open
// the links of the batch's mail and press the buttons of the pages they
// open.
func TestBatchConformance(t *testing.T) {
	channeltest.RunBatch(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.BatchEnv {
		st := storetest.Open(t, "")
		fake := fakesmtp.Start(t, fakesmtp.Options{Mode: fakesmtp.StartTLS, User: smtpUser, Password: smtpPass})
		rc.Store = st
		router := lifecycle.NewRouter(rc)
		t.Cleanup(func() { _ = router.Close(context.Background()) })
		mux := http.NewServeMux()
		web := httptest.NewServer(mux)
		t.Cleanup(web.Close)
		log, _ := channeltest.NewLog()
		d := resume.New(resume.Config{Store: st, Logger: log, Poll: 20 * time.Millisecond, MinBackoff: 50 * time.Millisecond,
			MaxBackoff: 200 * time.Millisecond})
		ad, err := New(Config{SMTPURL: "smtp://" + smtpUser + "@" + fake.Addr, SMTPPassword: smtpPass, From: "askbridge@bridge.example",
			LinkSecret: linkKey, PublicURL: web.URL, TLS: tlsFor(fake), Outbox: st, Kick: d.Kick}, router, log)
		if err != nil {
			t.Fatal(err)
		}
		d.AddSender(ad)
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		t.Cleanup(func() { stop(); <-done })
		router.AddChannel(ad)
		ad.Register(mux)
		return &channeltest.BatchEnv{Router: router, Targets: []domain.Target{emailTarget(ana, bob)},
			Driver: &mailDriver{t: t, fake: fake, told: map[string][]string{}}, PublicURL: web.URL, Mails: true}
	})
}

// mailDriver acts as the suite's people by mail: alice is ana, bob is bob.
type mailDriver struct {
	t    *testing.T
	fake *fakesmtp.Server
	mu   sync.Mutex
	told map[string][]string
}

var mailPeople = map[string]string{channeltest.Alice: ana, channeltest.Bob: bob, channeltest.Mallory: "mallory@evil.example"}

func (d *mailDriver) Person(name string) domain.Person {
	return domain.Person{Platform: Platform, ID: mailPeople[name]}
}

// mails waits until the mails to addr stop arriving and returns them,
// oldest first.
func (d *mailDriver) mails(addr string) []fakesmtp.Message {
	var last []fakesmtp.Message
	stable := time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ms []fakesmtp.Message
		for _, m := range d.fake.Messages() {
			if len(m.To) == 1 && m.To[0] == addr {
				ms = append(ms, m)
			}
		}
		if len(ms) != len(last) {
			last, stable = ms, time.Now()
			continue
		}
		if len(ms) > 0 && time.Since(stable) > 400*time.Millisecond {
			break
		}
	}
	return last
}

// Messages counts the batch's mails to ana (not the replies in its thread).
func (d *mailDriver) Messages() int {
	n := 0
	for _, m := range d.mails(ana) {
		if !strings.HasPrefix(m.Header().Get("Subject"), "Re: ") {
			n++
		}
	}
	return n
}

func (d *mailDriver) Copy(*domain.Question) string {
	var b strings.Builder
	for _, m := range d.mails(ana) {
		b.WriteString(m.Parts()["text/plain"] + "\n")
	}
	return b.String()
}

func (d *mailDriver) Live(*domain.Question) bool {
	ms := d.mails(ana)
	return len(ms) > 0 && len(links(ms[len(ms)-1])) > 0
}

func (d *mailDriver) Told(name string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.told[name]...)
}

// link finds, in the newest mail to name that has it, the link of the
// line matching re (its first group the link).
func (d *mailDriver) link(name string, re *regexp.Regexp) string {
	ms := d.mails(mailPeople[name])
	for i := len(ms) - 1; i >= 0; i-- {
		if m := re.FindStringSubmatch(ms[i].Parts()["text/plain"]); m != nil {
			return m[1]
		}
	}
	d.t.Fatalf("no link %s in the mails to %s", re, name)
	return ""
}

var tagRe = regexp.MustCompile(`<[^>]+>`)

// press opens link in name's browser and presses the page's button with
// form; the page it ends on is what name was told.
func (d *mailDriver) press(name, link string, form url.Values) {
	p := confirm(d.t, (&env{}).browser(), link, form)
	d.mu.Lock()
	d.told[name] = append(d.told[name], html.UnescapeString(tagRe.ReplaceAllString(p.body, " ")))
	d.mu.Unlock()
}

// listing is the newest mail to name that lists the call of q, and the
// call's number in it (its question's line). Mails are sent concurrently:
// an earlier mail listing fewer calls may arrive last, or the mail that
// lists q a moment after the others.
func (d *mailDriver) listing(name string, q *domain.Question) (text, n string) {
	d.t.Helper()
	line := regexp.MustCompile(`(?m)^(\d+)\. ` + regexp.QuoteMeta(q.Questions[0].Question) + `\r?$`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ms := d.mails(mailPeople[name])
		for i := len(ms) - 1; i >= 0; i-- {
			text := ms[i].Parts()["text/plain"]
			if m := line.FindStringSubmatch(text); m != nil {
				return text, m[1]
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("call %q is in no mail to %s", q.Questions[0].Question, name)
		}
	}
}

// linkIn is the link of the line matching re (its first group) in text.
func (d *mailDriver) linkIn(text string, re *regexp.Regexp) string {
	d.t.Helper()
	m := re.FindStringSubmatch(text)
	if m == nil {
		d.t.Fatalf("no link %s in the mail:\n%s", re, text)
	}
	return m[1]
}

func (d *mailDriver) ClickCall(name string, q *domain.Question, label string) {
	text, n := d.listing(name, q)
	d.press(name, d.linkIn(text, regexp.MustCompile(regexp.QuoteMeta(label)+` call `+n+`: (\S+)`)), nil)
}

func (d *mailDriver) All(name string, _ *domain.Question, decision, note string) {
	what := "Allow all"
	var form url.Values
	if decision == domain.DecideDeny {
		what = "Deny all"
		form = url.Values{"note": {note}}
	}
	d.press(name, d.link(name, regexp.MustCompile(what+` \d+: (\S+)`)), form)
}

// DenyCallWithNote opens the call's Deny link, types the note in the
// page's box and presses its button.
func (d *mailDriver) DenyCallWithNote(name string, q *domain.Question, note string) {
	text, n := d.listing(name, q)
	d.press(name, d.linkIn(text, regexp.MustCompile(`Deny call `+n+`: (\S+)`)), url.Values{"note": {note}})
}

// TestReminderOfABatchCallFollows: a call mailed in its batch's mail gets
// its reminder at once, as a single call does (before: it waited for a
// mail of its own that never leaves, and was dropped after 15 minutes).
func TestReminderOfABatchCallFollows(t *testing.T) {
	e := newEnv(t)
	req := &domain.BatchRequest{RunID: "run-9", AgentID: "deploy-bot", AgentName: "Deploy bot", Targets: []domain.Target{emailTarget(ana)}}
	for _, cmd := range []string{"make a", "make b"} {
		req.Approvals = append(req.Approvals, domain.BatchCall{Action: &domain.Action{Tool: "Bash", Input: []byte(`{"command":"` + cmd + `"}`)}})
	}
	res, err := e.router.AskBatch(context.Background(), "ops", req, "")
	if err != nil {
		t.Fatal(err)
	}
	e.settle()
	e.waitMails(ana, 1)
	q := e.question(res.Questions[1].ID)
	if err := e.ad.Remind(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatal(err)
	}
	ms := e.waitMails(ana, 2)
	if len(ms) != 2 || !strings.Contains(ms[1].Parts()["text/plain"], "Reminder: Deploy bot is still waiting") {
		t.Fatalf("%d mails; want the batch's mail and the reminder", len(ms))
	}
}
