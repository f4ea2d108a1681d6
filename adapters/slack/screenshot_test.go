package slack

// The Slack screenshot in docs/approvals.md (docs/img/approval-slack.png): an approval
// with a diff as the adapter posts it, rendered by the fake's HTML preview
// in headless Chromium (chromedp). Run with ASKBRIDGE_SCREENSHOTS=1, like
// the web inbox's screenshots (adapters/web/browser_test.go).

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/internal/screenshottest"
	"github.com/askbridge/askbridge/domain"
)

func TestScreenshotApprovalSlack(t *testing.T) {
	if !screenshottest.Wanted() {
		t.Skip("set ASKBRIDGE_SCREENSHOTS=1 to regenerate docs/img/approval-slack.png")
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

	ctx := screenshottest.Browser(t)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(800, 600),
		chromedp.Navigate(e.fake.URL+"/preview?channel=C1&ts="+ts),
		chromedp.WaitVisible(chromedp.CSS("button.primary"))); err != nil {
		t.Fatal(err)
	}
	screenshottest.Save(t, ctx, "", screenshottest.RepoFile(t, "docs", "img", "approval-slack.png"))
}
