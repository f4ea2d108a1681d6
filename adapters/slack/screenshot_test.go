package slack

// The Slack screenshot in docs/approvals.md (docs/img/approval-slack.png): an approval
// with a diff as the adapter posts it, rendered by the fake's HTML preview
// in headless Chromium (chromedp). Run with ASKBRIDGE_SCREENSHOTS=1, like
// the web inbox's screenshots (adapters/web/browser_test.go).

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

func TestScreenshotApprovalSlack(t *testing.T) {
	if os.Getenv("ASKBRIDGE_SCREENSHOTS") != "1" {
		t.Skip("set ASKBRIDGE_SCREENSHOTS=1 to regenerate docs/img/approval-slack.png")
	}
	chromium := os.Getenv("CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if chromium != "" {
			break
		}
		chromium, _ = exec.LookPath(name)
	}
	if chromium == "" {
		t.Fatal("no chromium found: install Debian's chromium (make deps) or set CHROMIUM")
	}
	e := newEnv(t, withPublicURL("https://bridge.example.com"))
	req := approvalRequest("sess-4e1d")
	req.Questions[0].Question = "Claude Code wants to use Edit on config.go"
	req.Context = "Claude Code in `~/src/shop`"
	in, _ := json.Marshal(map[string]any{"file_path": "/home/dev/shop/config.go",
		"old_string": "\ttimeout := 5 * time.Second\n\tretries := 1\n\tlog.Printf(\"starting\")\n",
		"new_string": "\ttimeout := 30 * time.Second\n\tretries := 3\n\tlog.Printf(\"starting with %d retries\", retries)\n"})
	req.Action = &domain.Action{Tool: "Edit", Input: in, Suggestions: []json.RawMessage{
		json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)}}
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS

	dir := t.TempDir()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.UserDataDir(dir), chromedp.WindowSize(800, 900))
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(800, 600),
		chromedp.Navigate(e.fake.URL+"/preview?channel=C1&ts="+ts),
		chromedp.WaitVisible(chromedp.CSS("button.primary"))); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(repoRootDir(t), "docs", "img", "approval-slack.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

func repoRootDir(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}
