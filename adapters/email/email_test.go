package email

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/email/fakesmtp"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
)

func TestQuestionMailShowsEverythingOncePerRecipient(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}, Context: "We are adding **login** to the admin app.",
		Targets: []domain.Target{emailTarget(ana, bob), {Platform: "slack", Channel: "C0123"}}})
	_ = q
	e.mailsTo(ana)
	e.mailsTo(bob)
	time.Sleep(200 * time.Millisecond) // a duplicate would have arrived by now
	for _, who := range []string{ana, bob} {
		ms := e.sentTo(who)
		if len(ms) != 1 {
			t.Fatalf("%s got %d mails, want 1", who, len(ms))
		}
		m := ms[0]
		if len(m.To) != 1 {
			t.Errorf("one mail per recipient: envelope to %v", m.To)
		}
		h := m.Header()
		if got := h.Get("Subject"); got != "Deploy bot asks: Which auth method?" {
			t.Errorf("subject %q", got)
		}
		if h.Get("Auto-Submitted") != "auto-generated" {
			t.Errorf("Auto-Submitted %q", h.Get("Auto-Submitted"))
		}
		if got, want := h.Get("Message-Id"), "<"+e.ad.rootID(q.ID, who)+">"; got != want {
			t.Errorf("Message-ID %q, want %q", got, want)
		}
		parts := m.Parts()
		text, html := parts["text/plain"], parts["text/html"]
		if text == "" || html == "" {
			t.Fatalf("want a text and an HTML part, got %v", parts)
		}
		for _, want := range []string{"Deploy bot asks you", "We are adding **login**", "Which auth method?", "OAuth 2.0", "Standard", "API key",
			"Answer within 5 min", "Also asked:", "C0123", "nothing is decided until you press the button"} {
			if !strings.Contains(text, want) {
				t.Errorf("the text part lacks %q:\n%s", want, text)
			}
			if !strings.Contains(html, strings.ReplaceAll(want, "**", "**")) {
				t.Errorf("the HTML part lacks %q", want)
			}
		}
		other := map[string]string{ana: bob, bob: ana}[who]
		if !strings.Contains(text, other) {
			t.Errorf("%s's mail does not say %s was asked too", who, other)
		}
		if ls := links(m); len(ls) != 2 {
			t.Errorf("want one link per option, got %v", ls)
		}
		for _, bad := range []string{"<img", "<script", "src=", "<link", "url(", "<iframe", "<form"} {
			if strings.Contains(strings.ToLower(html), bad) {
				t.Errorf("the HTML part holds %q: no remote content, scripts or forms in a mail", bad)
			}
		}
	}
}

func TestAgentTextIsEscapedAndCannotInjectHeaders(t *testing.T) {
	e := newEnv(t)
	q := &domain.Question{ID: "q-inject", ProjectID: "ops", AgentID: "bot", Kind: domain.KindQuestion, Status: domain.StatusPending,
		AgentName: "Evil\r\nBcc: victim@example.net", Context: `<script>alert(1)</script><img src="https://track.example/p.gif">`,
		Questions: []domain.Item{{Question: "Pick\r\nBcc: victim@example.net\r\n\r\n<b>bold</b>", Options: []domain.Option{
			{Label: `"><script>x()</script>`}, {Label: "fine"}}}},
		Targets: []domain.Target{emailTarget(ana)}, ExpiresAt: e.clock.Now().Add(time.Hour)}
	m, err := e.ad.message(q, job{Kind: kindPost, To: ana, Project: "ops", Question: q.ID})
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if _, err := m.WriteTo(&raw); err != nil {
		t.Fatal(err)
	}
	msg := fakesmtp.Message{Data: raw.Bytes()}
	h := msg.Header()
	head, _, _ := strings.Cut(raw.String(), "\r\n\r\n")
	if h.Get("Bcc") != "" || strings.Contains(strings.ToLower(head), "\nbcc:") {
		t.Fatalf("agent text injected a header:\n%s", raw.String())
	}
	if got := h.Get("Subject"); strings.ContainsAny(got, "\r\n") || !strings.Contains(got, "Pick Bcc: victim@example.net") {
		t.Errorf("subject %q: line breaks must become spaces", got)
	}
	html := msg.Parts()["text/html"]
	for _, bad := range []string{"<script", "<img", "<b>bold"} {
		if strings.Contains(html, bad) {
			t.Errorf("agent text reached the HTML unescaped (%q)", bad)
		}
	}
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the context is not shown escaped:\n%s", html)
	}
	// And over SMTP: the envelope has the one recipient.
	if err := e.ad.sendNow(context.Background(), job{Kind: kindPost, To: ana, Project: "ops", Question: q.ID}, q); err != nil {
		// The question is not in the store: nothing to send.
		t.Logf("send: %v", err)
	}
	for _, sent := range e.smtp.Messages() {
		if len(sent.To) != 1 || sent.To[0] != ana {
			t.Errorf("envelope recipients %v", sent.To)
		}
	}
}

func TestApprovalMailShowsTheActionAndADiffWithoutColourAlone(t *testing.T) {
	e := newEnv(t)
	req := deployApproval()
	req.Action = &domain.Action{Tool: "Edit", Input: []byte(`{"file_path":"/srv/app.conf","old_string":"replicas: 2\n","new_string":"replicas: 5\n"}`)}
	e.ask(req)
	ms := e.mailsTo(ana)
	if len(ms) != 1 {
		t.Fatalf("%d mails", len(ms))
	}
	text, html := ms[0].Parts()["text/plain"], ms[0].Parts()["text/html"]
	if got := ms[0].Header().Get("Subject"); got != "Approval needed: Deploy api v2.14 to production?" {
		t.Errorf("subject %q", got)
	}
	for _, want := range []string{"asks for your approval", "Action: Edit", "+ replicas: 5", "− replicas: 2", "Allow: http", "Deny: http"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(html, "<strong>+</strong> replicas: 5") || !strings.Contains(html, "<strong>−</strong> <del>replicas: 2</del>") {
		t.Errorf("the HTML diff marks lines only by colour:\n%s", html)
	}
}

func TestBashCommandIsACodeBlockAndLongTextIsCut(t *testing.T) {
	e := newEnv(t)
	req := deployApproval()
	req.Context = strings.Repeat("very long context ", 400)
	req.Action = &domain.Action{Tool: "Bash", Input: []byte(`{"command":"kubectl rollout restart deploy/api -n prod"}`)}
	q := e.ask(req)
	text := e.mailsTo(ana)[0].Parts()["text/plain"]
	if !strings.Contains(text, "    $ kubectl rollout restart deploy/api -n prod") {
		t.Errorf("the command is not a code block:\n%s", text)
	}
	if !strings.Contains(text, "…") || !strings.Contains(text, "/questions/"+q.ID) {
		t.Errorf("long context is not cut with … and a link to the question page")
	}
}

func TestConfirmPageAnswersOnlyOnItsPOST(t *testing.T) {
	e := newEnv(t)
	q := e.ask(deployApproval())
	ls := links(e.mailsTo(ana)[0])
	c := e.browser()
	p := get(t, c, ls[0])
	if p.status != http.StatusOK || !strings.Contains(p.body, "Deploy api v2.14 to production?") || !strings.Contains(p.body, "<button") {
		t.Fatalf("the confirmation page: %d\n%s", p.status, p.body)
	}
	if e.question(q.ID).Status != domain.StatusPending {
		t.Fatal("opening the link decided the question")
	}
	p = confirm(t, c, ls[0], nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Allowed by ana@example.com by email") {
		t.Fatalf("after the POST: %d\n%s", p.status, p.body)
	}
	got := e.question(q.ID)
	if got.Status != domain.StatusAnswered || got.Response != "Allow" || got.RespondedBy.Key() != "email:"+ana {
		t.Fatalf("recorded %s %q by %+v", got.Status, got.Response, got.RespondedBy)
	}
	e.settle()
	// Every recipient gets the outcome as a reply in their thread.
	for _, who := range []string{ana, bob} {
		ms := e.waitMails(who, 2)
		if len(ms) != 2 {
			t.Fatalf("%s got %d mails, want the question and the outcome", who, len(ms))
		}
		h := ms[1].Header()
		root := "<" + e.ad.rootID(q.ID, who) + ">"
		if h.Get("In-Reply-To") != root || h.Get("References") != root || !strings.HasPrefix(h.Get("Subject"), "Re: ") {
			t.Errorf("the outcome is not threaded: %v", h)
		}
		if text := ms[1].Parts()["text/plain"]; !strings.Contains(text, "Allowed by ana@example.com by email — nothing more to do") || len(links(ms[1])) != 0 {
			t.Errorf("the outcome mail:\n%s", text)
		}
	}
	// The link again, in the same browser or another: used, nothing changes.
	for _, b := range []*http.Client{c, e.browser()} {
		p = get(t, b, ls[0])
		if p.status != http.StatusGone || !strings.Contains(p.body, "already used") || !strings.Contains(p.body, "You answered at") {
			t.Errorf("a used link: %d\n%s", p.status, p.body)
		}
	}
	p = post(t, c, ls[1], url.Values{"csrf": {"x"}})
	if p.status != http.StatusGone {
		t.Errorf("the Deny link after the answer: %d", p.status)
	}
	// Bob's link after Ana answered shows the outcome.
	p = get(t, e.browser(), links(e.mailsTo(bob)[0])[1])
	if p.status != http.StatusGone || !strings.Contains(p.body, "Allowed by ana@example.com") {
		t.Errorf("a late link: %d\n%s", p.status, p.body)
	}
}

func TestDenyWithANote(t *testing.T) {
	e := newEnv(t)
	q := e.ask(deployApproval())
	deny := links(e.mailsTo(ana)[0])[1]
	c := e.browser()
	if p := get(t, c, deny); !strings.Contains(p.body, `name="note"`) {
		t.Fatalf("the deny page offers no note:\n%s", p.body)
	}
	p := confirm(t, c, deny, url.Values{"note": {"not during the freeze"}})
	if p.status != http.StatusOK {
		t.Fatalf("%d %s", p.status, p.body)
	}
	got := e.question(q.ID)
	if got.Response != "Deny" || got.Reason != "not during the freeze" {
		t.Errorf("recorded %q with reason %q, want Deny with the note as its reason", got.Response, got.Reason)
	}
	if p := get(t, e.browser(), links(e.mailsTo(bob)[0])[0]); !strings.Contains(p.body, "Denied with a note by ana@example.com by email: “not during the freeze”") {
		t.Errorf("the outcome a late link shows:\n%s", p.body)
	}
}

func TestFormLinkAnswersSeveralItems(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{
		{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{{Label: "eu-west"}, {Label: "us-east"}, {Label: "ap-south"}}},
		{Question: "What should the release be called?"}}})
	ls := links(e.mailsTo(ana)[0])
	if len(ls) != 1 {
		t.Fatalf("want one Answer link, got %v", ls)
	}
	p := confirm(t, e.browser(), ls[0], url.Values{"i0": {"0", "2"}, "t1": {"Aurora"}})
	if p.status != http.StatusOK {
		t.Fatalf("%d %s", p.status, p.body)
	}
	got := e.question(q.ID)
	if got.Answers["Which regions?"] != "eu-west, ap-south" || got.Answers["What should the release be called?"] != "Aurora" {
		t.Errorf("answers %v", got.Answers)
	}
}

func TestRespondersDecideWhoseLinkCounts(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}, Targets: []domain.Target{emailTarget(ana, carol)},
		Responders: &domain.Responders{Users: []string{"email:someone@else.example"}, Groups: map[string][]string{GroupKind: {"example.com"}}}})
	p := confirm(t, e.browser(), links(e.mailsTo(carol)[0])[0], nil)
	if p.status != http.StatusForbidden || !strings.Contains(p.body, domain.TitleNotAllowed) || !strings.Contains(p.body, "mail domain example.com") {
		t.Errorf("carol (another domain): %d\n%s", p.status, p.body)
	}
	if e.question(q.ID).Status != domain.StatusPending {
		t.Fatal("a refused answer was recorded")
	}
	if p := confirm(t, e.browser(), links(e.mailsTo(ana)[0])[1], nil); p.status != http.StatusOK {
		t.Errorf("ana (email_domains: example.com): %d\n%s", p.status, p.body)
	}
	if got := e.question(q.ID); got.Response != "API key" {
		t.Errorf("recorded %q", got.Response)
	}
}

func TestExpiredForgedAndOtherAddressLinks(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	link := links(e.mailsTo(ana)[0])[0]
	base, tok, _ := strings.Cut(link, linkPath)

	// A genuine link for an address the question was not sent to.
	other, err := e.ad.keys.sign(token{Question: q.ID, Choice: 0, Recipient: carol, Expires: q.ExpiresAt})
	if err != nil {
		t.Fatal(err)
	}
	if p := get(t, e.browser(), base+linkPath+other); p.status != http.StatusForbidden || !strings.Contains(p.body, "another address") {
		t.Errorf("another address's link: %d\n%s", p.status, p.body)
	}
	// Signed with another secret.
	forged, _ := deriveKeys([]byte("another secret entirely, 32+ chars")).sign(token{Question: q.ID, Choice: 0, Recipient: ana, Expires: q.ExpiresAt})
	if p := get(t, e.browser(), base+linkPath+forged); p.status != http.StatusForbidden || !strings.Contains(p.body, "not valid") {
		t.Errorf("a forged link: %d", p.status)
	}
	// Past its expiry (before the sweeper ends the question).
	e.clock.Add(6 * time.Minute)
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(m, base+linkPath+tok, nil)
		if p := do(t, e.browser(), req); p.status != http.StatusGone || !strings.Contains(p.body, "expired") {
			t.Errorf("%s of an expired link: %d\n%s", m, p.status, p.body)
		}
	}
	if e.question(q.ID).Status != domain.StatusPending {
		t.Error("an expired link changed the question")
	}
}

func TestRemindersThreadUnderTheQuestion(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	q = e.question(q.ID)
	if err := e.ad.Remind(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatal(err)
	}
	// Queued twice (two replicas, a retry): one reminder.
	if err := e.ad.Remind(context.Background(), q, q.Targets[0]); err != nil {
		t.Fatal(err)
	}
	e.waitMails(ana, 2)
	time.Sleep(200 * time.Millisecond)
	ms := e.sentTo(ana)
	if len(ms) != 2 {
		t.Fatalf("%d mails, want the question and one reminder", len(ms))
	}
	h := ms[1].Header()
	if h.Get("In-Reply-To") != "<"+e.ad.rootID(q.ID, ana)+">" || !strings.Contains(ms[1].Parts()["text/plain"], "Reminder: Deploy bot is still waiting") {
		t.Errorf("reminder: %v\n%s", h, ms[1].Parts()["text/plain"])
	}
	if len(links(ms[1])) != 2 {
		t.Errorf("a reminder carries the answer links")
	}
}

func TestSMTPModesAndAuth(t *testing.T) {
	cases := []struct {
		name string
		o    fakesmtp.Options
		url  string
		mech string
	}{
		{"STARTTLS with AUTH PLAIN", fakesmtp.Options{Mode: fakesmtp.StartTLS, User: smtpUser, Password: smtpPass}, "smtp://bridge@%s?auth=plain", "PLAIN"},
		{"implicit TLS with AUTH LOGIN", fakesmtp.Options{Mode: fakesmtp.TLS, User: smtpUser, Password: smtpPass}, "smtps://bridge@%s?auth=login", "LOGIN"},
		{"STARTTLS, LOGIN only offered", fakesmtp.Options{Mode: fakesmtp.StartTLS, User: smtpUser, Password: smtpPass, Mechanisms: []string{"LOGIN"}}, "smtp://bridge@%s", "LOGIN"},
		{"loopback without TLS", fakesmtp.Options{Mode: fakesmtp.Plain}, "smtp+insecure://%s", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnvWith(t, c.o, c.url)
			e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
			if n := len(e.mailsTo(ana)); n != 1 {
				t.Fatalf("%d mails", n)
			}
			if c.mech != "" && (len(e.smtp.Auths()) == 0 || e.smtp.Auths()[0] != c.mech) {
				t.Errorf("authenticated with %v, want %s", e.smtp.Auths(), c.mech)
			}
		})
	}
}

func TestSMTPURLRules(t *testing.T) {
	for raw, want := range map[string]string{
		"smtp+insecure://mail.example.com:25": "only to a loopback address",
		"smtp://u:pw@mail.example.com":        "put no password in the URL",
		"http://mail.example.com":             "is not smtp://",
		"smtp://mail.example.com:99999":       "not a port",
		"smtp://u@mail.example.com?auth=md5":  "not plain or login",
	} {
		_, err := parseSMTPURL(raw, "")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "email.smtp_url") {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	if _, err := parseSMTPURL("smtp+insecure://[::1]:1025", ""); err != nil {
		t.Errorf("loopback: %v", err)
	}
}

func TestSMTPFailuresAreClassifiedAndKeepNoSecret(t *testing.T) {
	e := newEnv(t)
	q := e.ask(domain.AskRequest{Questions: []domain.Item{authItem()}, Targets: []domain.Target{emailTarget(carol)}})
	e.mailsTo(carol) // the queued mail is out: the failures below are ours
	j := job{Kind: kindPost, To: ana, Project: "ops", Question: q.ID}
	// A temporary failure is retried (not a refusal).
	e.smtp.Fail(451, 1)
	err := e.ad.deliver(context.Background(), j, nil)
	var r *refusal
	if err == nil || errors.As(err, &r) {
		t.Errorf("451: %v, want a transient error", err)
	}
	// A 5xx refusal and an unknown mailbox are permanent.
	e.smtp.Fail(554, 1)
	if err := e.ad.deliver(context.Background(), j, nil); !errors.As(err, &r) || r.code != 554 {
		t.Errorf("554: %v", err)
	}
	e.smtp.Unknown(ana)
	err = e.ad.deliver(context.Background(), j, nil)
	if !errors.As(err, &r) || r.code != 550 {
		t.Errorf("unknown mailbox: %v", err)
	}
	// A wrong password: refused, and the password is nowhere.
	bad := newEnvWith(t, fakesmtp.Options{Mode: fakesmtp.StartTLS, User: smtpUser, Password: "the-right-one"}, "")
	bad.ad.smtp.password = smtpPass
	q2 := bad.ask(domain.AskRequest{Questions: []domain.Item{authItem()}})
	err = bad.ad.deliver(context.Background(), job{Kind: kindPost, To: ana, Project: "ops", Question: q2.ID}, nil)
	if err == nil || strings.Contains(err.Error(), smtpPass) || strings.Contains(bad.logs.String(), smtpPass) {
		t.Errorf("wrong password: %v (the password must appear in no error or log)", err)
	}
	// Nothing is sent for a question that ended before its mail left.
	if _, err := e.router.Cancel(context.Background(), "ops", q.ID, domain.CancelAgent, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.ad.deliver(context.Background(), job{Kind: kindPost, To: bob, Project: "ops", Question: q.ID}, nil); !errors.Is(err, errDrop) {
		t.Errorf("a post after the end: %v, want errDrop", err)
	}
	_ = lifecycle.IsPermanent
}

func TestVotesFromLinksCountLikeClicks(t *testing.T) {
	e := newEnv(t)
	two := 2
	req := deployApproval()
	req.ApprovalsRequired = &two
	q := e.ask(req)
	anaAllow := links(e.mailsTo(ana)[0])[0]
	p := confirm(t, e.browser(), anaAllow, nil)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Your vote was recorded") || !strings.Contains(p.body, "1 of 2 approvals") {
		t.Fatalf("ana's vote: %d\n%s", p.status, p.body)
	}
	if p := get(t, e.browser(), anaAllow); p.status != http.StatusGone || !strings.Contains(p.body, "already used") {
		t.Errorf("ana's used link: %d\n%s", p.status, p.body)
	}
	if s := e.question(q.ID).Status; s != domain.StatusPending {
		t.Fatalf("one vote of two decided it: %s", s)
	}
	if p := confirm(t, e.browser(), links(e.mailsTo(bob)[0])[0], nil); p.status != http.StatusOK {
		t.Fatalf("bob's vote: %d\n%s", p.status, p.body)
	}
	if got := e.question(q.ID); got.Status != domain.StatusAnswered || len(got.Votes) != 2 {
		t.Errorf("after two votes: %s, %d votes", got.Status, len(got.Votes))
	}
}
