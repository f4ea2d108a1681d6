package web

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserRevealsConditionalItemsLive: the item that depends on the
// first is shown once its condition is met, the other hidden and disabled
// (so nothing in it is sent), and the answer records the hidden one as
// skipped.
func TestBrowserRevealsConditionalItemsLive(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", adaptiveAsk(t, webAdaptive))
	sel := func(i string) string { return card(q.ID) + ` fieldset[data-index="` + i + `"]` }
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/questions/"+q.ID), chromedp.WaitVisible(chromedp.CSS(sel("1"))))
	if !value(t, ctx, chromedp.Evaluate[bool](`document.querySelector('`+sel("2")+`').hidden`)) {
		t.Fatal("Scopes? shows while the default API key hides it")
	}
	run(t, ctx, 10*time.Second, chromedp.Click(chromedp.CSS(card(q.ID)+` input[name="a0"][value="o1"]`)),
		chromedp.WaitVisible(chromedp.CSS(sel("2"))), chromedp.WaitNotVisible(chromedp.CSS(sel("1"))))
	run(t, ctx, 10*time.Second, chromedp.Click(chromedp.CSS(card(q.ID)+` button.primary`)),
		chromedp.WaitNotPresent(chromedp.CSS(card(q.ID)+` form.answer`)))
	got := e.get("ops", q.ID)
	if got.Answers["Scopes?"] != "read" || len(got.Skipped) != 1 || got.Skipped[0].Question != "Ticket?" {
		t.Fatalf("answers %v skipped %v", got.Answers, got.Skipped)
	}
}
