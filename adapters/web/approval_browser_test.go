package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/core"
)

// hookApproval is the approval the Claude Code hook asks.
func hookApproval(runID string) core.AskRequest {
	return core.AskRequest{RunID: runID, Kind: core.KindApproval, AgentName: "Claude Code", Header: "Approval",
		Question: "Allow Bash: rm -rf build?",
		Options: []core.Option{{Label: "Allow", Description: "Let the agent run it"},
			{Label: "Deny", Description: "Refuse; answer in your own words to tell the agent why"}}}
}

// TestBrowserApprovalAllowDenyUnmistakable: on an approval card Allow and
// Deny look different (primary vs danger), there is no "Other" box whose
// text would silently deny, and "Deny with note…" is an explicit action
// whose note reaches the agent as a denial.
func TestBrowserApprovalAllowDenyUnmistakable(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", hookApproval("sess-1"))
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(card(q.ID))))

	style := func(sel, prop string) string {
		return value(t, ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(`+jsString(sel)+`)).`+prop))
	}
	allow, deny := card(q.ID)+` button[value="o0"]`, card(q.ID)+` button[value="o1"]`
	if a, d := style(allow, "backgroundColor"), style(deny, "backgroundColor"); a == d {
		t.Errorf("Allow and Deny have the same background %s", a)
	}
	if d, bad := style(deny, "borderTopColor"), "rgb(163, 34, 42)"; d != bad {
		t.Errorf("Deny is not drawn in the danger colour: border %s", d)
	}
	if a, accent := style(allow, "backgroundColor"), "rgb(36, 86, 166)"; a != accent {
		t.Errorf("Allow is not drawn as the primary action: background %s", a)
	}
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("`+card(q.ID)+` input[type=text], `+card(q.ID)+` input[value=other]").length`)); n != 0 {
		t.Errorf("the approval card offers %d free-text \"Other\" controls", n)
	}
	if v := value(t, ctx, chromedp.Evaluate[bool](`!!document.querySelector("`+card(q.ID)+` details.deny-note textarea") &&
		!document.querySelector("`+card(q.ID)+` details.deny-note textarea").checkVisibility()`)); !v {
		t.Error("the note field should be hidden until \"Deny with note…\" is chosen")
	}

	got := e.waiter("ops", q.ID)
	run(t, ctx, 20*time.Second,
		chromedp.Click(chromedp.CSS(card(q.ID)+` details.deny-note summary`)),
		chromedp.SendKeys(chromedp.CSS(card(q.ID)+` details.deny-note textarea`), "use make clean instead"),
		chromedp.Click(chromedp.CSS(card(q.ID)+` details.deny-note button.danger`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	w := <-got
	if w.err != nil || w.q.Status != core.StatusAnswered || w.q.Response != "use make clean instead" {
		t.Fatalf("agent got %v %+v", w.err, w.q)
	}
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/questions/"+q.ID), chromedp.WaitVisible(chromedp.CSS(`p.outcome`)))
	if out := value(t, ctx, chromedp.Text(chromedp.CSS(`p.outcome`))); !strings.HasPrefix(out, "Denied by local web user with a note") {
		t.Errorf("outcome %q", out)
	}
}

// TestApprovalTypedTextNeverDecides: a form (or a client without
// JavaScript) that sends typed text on an approval without choosing
// anything is refused and changes nothing; a note that reads like "Allow"
// still denies.
func TestApprovalTypedTextNeverDecides(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", hookApproval("sess-2"))
	c := e.client()
	tok := c.csrf("/")
	for _, form := range []url.Values{
		{"a0": {"other"}, "t0": {"yes go ahead"}},
		{"t0": {"yes go ahead"}},
	} {
		form.Set("csrf", tok)
		form.Set("return", "inbox")
		p := c.post("/questions/"+q.ID+"/answer", form)
		if p.status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(p.body), "typed text alone decides nothing") {
			t.Errorf("%v: status %d", form, p.status)
		}
		if got := e.get("ops", q.ID); got.Status != core.StatusPending {
			t.Fatalf("%v turned typed text into a decision: %s %v", form, got.Status, got.Answers)
		}
	}
	p := c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {tok}, "return": {"inbox"}, "a0": {"note"}, "t0": {"Allow"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("deny with note: %d %s", p.status, p.body)
	}
	if got := e.get("ops", q.ID); got.Response != "Deny: Allow" {
		t.Errorf("a note reading \"Allow\" was recorded as %q", got.Response)
	}
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
