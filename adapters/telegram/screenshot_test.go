package telegram

// The Telegram screenshots in docs/telegram.md (docs/img/telegram-*.png):
// copies as the adapter posts them, rendered by the fake's HTML preview in
// headless Chromium (chromedp). Run with ASKBRIDGE_SCREENSHOTS=1, like the
// Slack and web inbox screenshots.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

func TestScreenshotsTelegram(t *testing.T) {
	if os.Getenv("ASKBRIDGE_SCREENSHOTS") != "1" {
		t.Skip("set ASKBRIDGE_SCREENSHOTS=1 to regenerate docs/img/telegram-*.png")
	}
	chromium := os.Getenv("CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if chromium == "" {
			chromium, _ = exec.LookPath(name)
		}
	}
	if chromium == "" {
		t.Fatal("no chromium found: install Debian's chromium (make deps) or set CHROMIUM")
	}
	e := newEnv(t)
	in, _ := json.Marshal(map[string]string{"command": "kubectl rollout restart deploy/api -n prod"})
	shots := map[string]domain.AskRequest{
		"telegram-question": {RunID: "run-42", Context: "Rolling out api v2.14; the login service needs a decision.",
			Questions: []domain.Item{{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{
				{Label: "OAuth 2.0", Description: "Standard", Recommended: true}, {Label: "API key", Description: "Simple"}}}}},
		"telegram-approval": {RunID: "run-43", Kind: domain.KindApproval, Question: "Claude Code wants to run a command",
			Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}, Action: &domain.Action{Tool: "Bash", Input: in}},
		"telegram-items": {RunID: "run-44", Questions: []domain.Item{
			{Question: "Which regions?", Header: "Regions", MultiSelect: true, Options: []domain.Option{{Label: "eu-west"}, {Label: "us-east"}, {Label: "ap-south"}}},
			{Question: "Release name?", Header: "Name"}}},
	}
	dir := t.TempDir()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.UserDataDir(dir), chromedp.WindowSize(600, 800))
	defer cancelA()
	for name, req := range shots {
		q := e.ask(req)
		m := e.msg(q)
		ctx, cancel := chromedp.NewContext(actx)
		ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
		err := chromedp.Do(ctx, chromedp.EmulateViewport(600, 400),
			chromedp.Navigate(fmt.Sprintf("%s/preview?chat=%d&id=%d", e.fake.URL(), m.Chat, m.ID)),
			chromedp.WaitVisible(chromedp.CSS(".bubble")))
		var png []byte
		if err == nil {
			png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
		}
		cancelT()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "..", "docs", "img", name+".png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(png))
	}
}
