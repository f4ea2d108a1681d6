package email

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// mailpitVersion is the version scripts/mailpit.sh installs.
const mailpitVersion = "v1.27.11"

// mailpitBinary finds Mailpit: $MAILPIT, else where scripts/mailpit.sh
// (run by make test) installs it. Without it the test skips, except in CI.
func mailpitBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MAILPIT"); p != "" {
		return p
	}
	dir := os.Getenv("ASKBRIDGE_TOOLS_DIR")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "askbridge", "tools")
	}
	p := filepath.Join(dir, "mailpit-"+mailpitVersion, "mailpit")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if p, err := exec.LookPath("mailpit"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("mailpit not found at %s: run scripts/mailpit.sh (make test does)", p)
	}
	t.Skipf("mailpit not found (run scripts/mailpit.sh, or set MAILPIT): %s", p)
	return ""
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// mailpit is a running Mailpit on loopback.
type mailpit struct {
	t    *testing.T
	smtp string
	api  string
}

func startMailpit(t *testing.T) *mailpit {
	t.Helper()
	bin := mailpitBinary(t)
	m := &mailpit{t: t, smtp: freePort(t), api: "http://" + freePort(t)}
	cmd := exec.Command(bin, "--smtp", m.smtp, "--listen", strings.TrimPrefix(m.api, "http://"),
		"--smtp-auth-accept-any", "--smtp-auth-allow-insecure", "--disable-version-check",
		"--database", filepath.Join(t.TempDir(), "mailpit.db"))
	var out logBuf
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(m.api + "/api/v1/info")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit did not start: %v\n%s", err, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (m *mailpit) json(path string, v any) {
	m.t.Helper()
	res, err := http.Get(m.api + path)
	if err != nil {
		m.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		m.t.Fatalf("%s: %s", path, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		m.t.Fatal(err)
	}
}

type mpSummary struct {
	ID        string
	MessageID string
	Subject   string
	To        []struct{ Address string }
}

type mpMessage struct {
	ID        string
	MessageID string
	Subject   string
	Text      string
	HTML      string
}

// wait returns the messages once Mailpit holds n, newest first.
func (m *mailpit) wait(n int) []mpSummary {
	m.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var list struct {
			Messages []mpSummary
		}
		m.json("/api/v1/messages", &list)
		if len(list.Messages) >= n {
			return list.Messages
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("mailpit holds %d messages, want %d", len(list.Messages), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (m *mailpit) message(id string) mpMessage {
	var msg mpMessage
	m.json("/api/v1/message/"+id, &msg)
	return msg
}

func (m *mailpit) headers(id string) map[string][]string {
	var h map[string][]string
	m.json("/api/v1/message/"+id+"/headers", &h)
	return h
}

// TestMailpitEndToEnd: a real mail server between the bridge and the
// person. Ask → the mail arrives → every link is fetched as scanners do
// (Mailpit's own link check sends HEAD; then GET and HEAD) and nothing is
// decided → the person opens the page and submits → the waiter wakes →
// every recipient gets the outcome threaded.
func TestMailpitEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Mailpit")
	}
	mp := startMailpit(t)
	e := newEnvSMTP(t, "smtp+insecure://bridge@"+mp.smtp, "any-password", nil)
	req := deployApproval()
	req.Action = &domain.Action{Tool: "Bash", Input: []byte(`{"command":"./deploy.sh api v2.14 --env production"}`)}
	q := e.ask(req)
	msgs := mp.wait(2)
	byTo := map[string]mpSummary{}
	for _, s := range msgs {
		byTo[s.To[0].Address] = s
	}
	anaMail := mp.message(byTo[ana].ID)
	if anaMail.Subject != "Approval needed: Deploy api v2.14 to production?" || !strings.Contains(anaMail.Text, "$ ./deploy.sh api v2.14 --env production") {
		t.Fatalf("the mail in Mailpit: %q\n%s", anaMail.Subject, anaMail.Text)
	}
	if h := mp.headers(byTo[ana].ID); strings.Join(h["Auto-Submitted"], "") != "auto-generated" {
		t.Errorf("Auto-Submitted: %v", h["Auto-Submitted"])
	}
	// Mailpit's HTML check: no HTML problem, and the CSS used is widely supported.
	var check struct {
		Warnings []struct {
			Slug, Title, Category string
			Score                 struct{ Unsupported float32 }
		}
		Total struct {
			Nodes       int
			Supported   float32
			Unsupported float32
		}
	}
	mp.json("/api/v1/message/"+byTo[ana].ID+"/html-check", &check)
	if check.Total.Nodes == 0 {
		t.Error("the HTML check saw no HTML")
	}
	for _, w := range check.Warnings {
		t.Logf("html-check: %s %s (%s) unsupported %.0f%%", w.Category, w.Slug, w.Title, w.Score.Unsupported)
		if w.Category == "html" || w.Score.Unsupported > 25 {
			t.Errorf("html-check: %s (%s) is unsupported by %.0f%% of mail programs", w.Slug, w.Title, w.Score.Unsupported)
		}
	}
	t.Logf("html-check total: supported %.1f%%, unsupported %.1f%%", check.Total.Supported, check.Total.Unsupported)

	// Scanners: Mailpit's link check (HEAD on every link), then GET and HEAD.
	var lc struct {
		Errors int
		Links  []struct {
			URL        string
			StatusCode int
		}
	}
	for _, who := range []string{ana, bob} {
		mp.json("/api/v1/message/"+byTo[who].ID+"/link-check", &lc)
		if len(lc.Links) < 2 {
			t.Fatalf("link check saw %d links", len(lc.Links))
		}
		for _, l := range lc.Links {
			if strings.Contains(l.URL, linkPath) && l.StatusCode != 200 {
				t.Errorf("link check: %s → %d", l.URL, l.StatusCode)
			}
		}
		for _, l := range linkRe.FindAllString(mp.message(byTo[who].ID).Text, -1) {
			for _, method := range []string{"GET", "HEAD", "GET"} {
				r, _ := http.NewRequest(method, l, nil)
				if p := do(t, e.browser(), r); p.status != 200 {
					t.Errorf("%s %s: %d", method, l, p.status)
				}
			}
		}
	}
	if s := e.question(q.ID).Status; s != domain.StatusPending {
		t.Fatalf("fetching the links decided the question: %s", s)
	}

	// The agent waits; the person answers from the page.
	woke := make(chan *domain.Question, 1)
	go func() {
		got, err := e.router.Wait(context.Background(), "ops", q.ID, 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		woke <- got
	}()
	time.Sleep(100 * time.Millisecond)
	allow := linkRe.FindAllString(anaMail.Text, -1)[0]
	if p := confirm(t, e.browser(), allow, nil); p.status != 200 {
		t.Fatalf("answer: %d\n%s", p.status, p.body)
	}
	select {
	case got := <-woke:
		if got.Status != domain.StatusAnswered || got.RespondedBy.Key() != "email:"+ana {
			t.Fatalf("the waiter woke with %s by %v", got.Status, got.RespondedBy)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter did not wake")
	}
	e.settle()
	// The outcome, threaded, to both.
	all := mp.wait(4)
	outcomes := 0
	for _, s := range all {
		if !strings.HasPrefix(s.Subject, "Re: ") {
			continue
		}
		outcomes++
		h := mp.headers(s.ID)
		root := "<" + e.ad.rootID(q.ID, s.To[0].Address) + ">"
		if strings.Join(h["In-Reply-To"], "") != root || strings.Join(h["References"], "") != root {
			t.Errorf("outcome to %s not threaded: In-Reply-To %v, want %s", s.To[0].Address, h["In-Reply-To"], root)
		}
		if text := mp.message(s.ID).Text; !strings.Contains(text, "Allowed by ana@example.com by email") {
			t.Errorf("outcome text:\n%s", text)
		}
	}
	if outcomes != 2 {
		t.Errorf("%d outcome mails, want 2", outcomes)
	}
	// Replay and a late click.
	if p := get(t, e.browser(), allow); p.status != http.StatusGone || !strings.Contains(p.body, "already used") {
		t.Errorf("replay: %d", p.status)
	}
	bobLinks := linkRe.FindAllString(mp.message(byTo[bob].ID).Text, -1)
	if p := confirm2(t, e, bobLinks[1]); p.status != http.StatusGone || !strings.Contains(p.body, "Allowed by ana@example.com") {
		t.Errorf("bob's late Deny: %d\n%s", p.status, p.body)
	}
}

// confirm2 opens link and posts without the page's token (a late click:
// the page already says the question is closed).
func confirm2(t *testing.T, e *env, link string) page { return get(t, e.browser(), link) }
