package slack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/internal/screenshottest"
	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
)

// TestScreenshotAdaptiveSlack renders docs/img/adaptive-slack.png and
// adaptive-slack-modal.png from the fake's preview: the question of
// docs/adaptive-questions.md as the adapter posts it (pictures, the
// defaults pre-selected, the cards the default layout asks, the last
// answers), and the modal refusing a ticket id on its field. Run with
// ASKBRIDGE_SCREENSHOTS=1.
func TestScreenshotAdaptiveSlack(t *testing.T) {
	if !screenshottest.Wanted() {
		t.Skip("set ASKBRIDGE_SCREENSHOTS=1 to regenerate docs/img/*.png")
	}
	e := newEnv(t)
	e.clock.Add(-6 * 24 * time.Hour)
	targets := []domain.Target{{Platform: "slack", Channel: "C1"}}
	screenshottest.Past(t, e.router, "ops", targets, e.clock.Add)
	req := screenshottest.Ask("design-c")
	req.Targets = targets
	q := e.ask(req)
	ts := e.copyOn(q, "C1").MessageTS

	ctx := screenshottest.Browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(720, 600), chromedp.Navigate(e.fake.URL+"/preview?channel=C1&ts="+ts),
		chromedp.WaitVisible(chromedp.CSS(".choices"))); err != nil {
		t.Fatal(err)
	}
	screenshottest.Save(t, ctx, "", screenshottest.RepoFile(t, "docs", "img", "adaptive-slack.png"))

	// The ticket's modal, and what Slack shows after the bridge refused
	// the text with response_action "errors".
	e.click(alice, "C1", ts, "Write answer…", nil)
	e.wait("modal", func() bool { return len(e.fake.Views()) == 1 })
	rec := e.submitView(alice, "ops 12")
	var resp struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Action != "errors" {
		t.Fatalf("the modal was not refused: %s", rec.Body)
	}
	page := fakeslack.PreviewViewHTML(e.fake.Views()[0].View, map[string]string{modalBlock: "ops 12"}, resp.Errors)
	file := filepath.Join(t.TempDir(), "modal.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(600, 400), chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS(".err"))); err != nil {
		t.Fatal(err)
	}
	screenshottest.Save(t, ctx, ".modal", screenshottest.RepoFile(t, "docs", "img", "adaptive-slack-modal.png"))
}
