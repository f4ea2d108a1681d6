package email

// A person in a real browser (headless Chromium): the mail's HTML part
// opened, the Allow link followed — the confirmation page decides nothing —
// then the button pressed, which answers. With ASKBRIDGE_SCREENSHOTS=1 it
// also writes the screenshots of docs/email.md (docs/img/email-mail.png,
// docs/img/email-confirm.png).

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

func chromiumPath(t *testing.T) string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium found: install Debian's chromium (make deps) or set CHROMIUM")
	}
	t.Skip("no chromium found (make deps installs it)")
	return ""
}

func TestBrowserConfirmsThenAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	chromium := chromiumPath(t)
	e := newEnv(t)
	req := deployApproval()
	req.Context = "Release train 14 — the canary has been healthy for 2 hours."
	req.Action = &domain.Action{Tool: "Bash", Input: []byte(`{"command":"./deploy.sh api v2.14 --env production"}`)}
	q := e.ask(req)
	html := e.mailsTo(ana)[0].Parts()["text/html"]
	// The mail as a mail program shows it: its HTML part as a page.
	mailView := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><head><meta charset=utf-8></head><body style=\"margin:0\">" + html + "</body></html>"))
	}))
	defer mailView.Close()

	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(760, 900))
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	shots := os.Getenv("ASKBRIDGE_SCREENSHOTS") == "1"
	shot := func(name string) {
		if !shots {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", "img", name)
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(760, 600), chromedp.Navigate(mailView.URL),
		chromedp.WaitVisible(chromedp.CSS(`a[href*="/email/c/"]`))); err != nil {
		t.Fatal(err)
	}
	shot("email-mail.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href*="/email/c/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a page that submitted itself would have by now
	if s := e.question(q.ID).Status; s != domain.StatusPending {
		t.Fatalf("opening the link in a browser decided the question: %s", s)
	}
	shot("email-confirm.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`main:not(:has(form)) h1`))); err != nil {
		t.Fatal(err)
	}
	heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`h1`)))
	if err != nil {
		t.Fatal(err)
	}
	got := e.question(q.ID)
	if heading != "Thank you" || got.Status != domain.StatusAnswered || got.RespondedBy.Key() != "email:"+ana {
		t.Fatalf("after pressing the button: %q, %s by %v", heading, got.Status, got.RespondedBy)
	}
}
