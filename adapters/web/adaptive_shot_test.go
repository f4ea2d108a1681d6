package web

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/internal/screenshottest"
)

// TestBrowserScreenshotAdaptive renders docs/img/adaptive-web.png: one
// question that shows the five enhancements of docs/adaptive-questions.md
// — a picture with the context and with each option (its host listed in
// web.image_hosts), the default layout checked and the cards it asks
// (show_if) revealed with their defaults, the last answers, and a ticket
// id refused next to its field. Run with ASKBRIDGE_SCREENSHOTS=1.
func TestBrowserScreenshotAdaptive(t *testing.T) {
	if !screenshottest.Wanted() {
		t.Skip("set ASKBRIDGE_SCREENSHOTS=1 to regenerate docs/img/*.png")
	}
	clock := &testClock{now: time.Now().UTC().Add(-6 * 24 * time.Hour)}
	e := newEnv(t, envOptions{clock: clock, imageHosts: []string{screenshottest.Host}})
	screenshottest.Past(t, e.router, "ops", nil, clock.add)
	q := e.ask("ops", screenshottest.Ask("design-c"))
	ctx := screenshottest.Browser(t)
	c := card(q.ID)
	run(t, ctx, 30*time.Second,
		chromedp.EmulateViewport(760, 600),
		chromedp.Navigate(e.srv.URL+"/questions/"+q.ID),
		chromedp.WaitVisible(chromedp.CSS(c+` fieldset[data-index="1"]`)),
		chromedp.SendKeys(chromedp.CSS(c+` [name="t2"]`), "ops 12"))
	// The page's own pattern check would stop this in the browser; the
	// bridge's refusal is what any other client gets, shown the same way.
	value(t, ctx, chromedp.Evaluate[bool](`document.querySelector('`+c+` form.answer').noValidate = true`))
	run(t, ctx, 30*time.Second,
		chromedp.Click(chromedp.CSS(c+` button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`.problem`)))
	screenshottest.Save(t, ctx, c, screenshottest.RepoFile(t, "docs", "img", "adaptive-web.png"))
}
