package email

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/channeltest"
	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store/storetest"
)

// TestDenyWithNoteConformance runs the "Deny with note" case every surface
// passes: the recipient opens the mail's Deny link, types the note and
// presses the page's button.
func TestDenyWithNoteConformance(t *testing.T) {
	channeltest.RunDenyWithNote(t, func(t *testing.T, rc lifecycle.RouterConfig) *channeltest.NoteEnv {
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
		return &channeltest.NoteEnv{Router: router, Targets: []domain.Target{emailTarget(ana)},
			Driver: &noteDriver{t: t, ad: ad, fake: fake}}
	})
}

// noteDriver denies with a note as the mail's recipient.
type noteDriver struct {
	t    *testing.T
	ad   *Adapter
	fake *fakesmtp.Server
}

func (d *noteDriver) Person(string) domain.Person {
	return domain.Person{Platform: Platform, ID: ana}
}

// NoteLimit: the Deny page's note box takes the bridge's 4,000 characters.
func (d *noteDriver) NoteLimit() int { return domain.MaxAnswerLen }

var noteMaxRe = regexp.MustCompile(`<textarea id="note" name="note"[^>]*maxlength="(\d+)"`)

// DenyWithNote opens the Deny link of q's mail to ana, types the note in
// the page's box and presses its button.
func (d *noteDriver) DenyWithNote(_ string, q *domain.Question, note string) {
	id := "<" + d.ad.rootID(q.ID, ana) + ">"
	var mail *fakesmtp.Message
	for deadline := time.Now().Add(10 * time.Second); mail == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, m := range d.fake.Messages() {
			if m.Header().Get("Message-Id") == id {
				mail = &m
				break
			}
		}
	}
	if mail == nil {
		d.t.Fatalf("no mail for question %s", q.ID)
	}
	ls := links(*mail)
	if len(ls) < 2 {
		d.t.Fatalf("the mail has no Deny link: %q", ls)
	}
	c := (&env{}).browser()
	p := get(d.t, c, ls[1])
	m := noteMaxRe.FindStringSubmatch(p.body)
	if m == nil {
		d.t.Fatalf("the Deny page has no note box:\n%s", p.body)
	}
	if n, _ := strconv.Atoi(m[1]); n < len([]rune(note)) {
		d.t.Errorf("the note box takes %d characters, not a note of %d", n, len([]rune(note)))
	}
	if p := confirm(d.t, c, ls[1], url.Values{"note": {note}}); p.status != http.StatusOK {
		d.t.Errorf("pressing Deny with the note: %d %s", p.status, domain.Shorten(strings.TrimSpace(p.body), 300))
	}
}
