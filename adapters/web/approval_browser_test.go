package web

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

// hookApproval is the approval the Claude Code hook asks.
func hookApproval(runID string) domain.AskRequest {
	return domain.AskRequest{RunID: runID, Kind: domain.KindApproval, AgentName: "Claude Code", Header: "Approval",
		Question: "Allow Bash: rm -rf build?",
		Options: []domain.Option{{Label: "Allow", Description: "Let the agent run it"},
			{Label: "Deny", Description: "Refuse; Deny with note… tells the agent why"}}}
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
	if w.err != nil || w.q.Status != domain.StatusAnswered || w.q.Response != "Deny" || w.q.Reason != "use make clean instead" {
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
		if got := e.get("ops", q.ID); got.Status != domain.StatusPending {
			t.Fatalf("%v turned typed text into a decision: %s %v", form, got.Status, got.Answers)
		}
	}
	p := c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {tok}, "return": {"inbox"}, "a0": {"note"}, "t0": {"Allow"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("deny with note: %d %s", p.status, p.body)
	}
	if got := e.get("ops", q.ID); got.Response != "Deny" || got.Reason != "Allow" {
		t.Errorf("a note reading \"Allow\" was recorded as %q with reason %q", got.Response, got.Reason)
	}
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// TestBrowserOwnVoteShownOnGate: after voting on an approval that needs
// two people, the card says what you voted (and the button shows it), and
// the confirmation names your vote.
func TestBrowserOwnVoteShownOnGate(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	two := 2
	q := e.ask("ops", domain.AskRequest{RunID: "gate-1", Kind: domain.KindApproval, Question: "Deploy api v2 to production?",
		Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}, ApprovalsRequired: &two})
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"),
		chromedp.Click(chromedp.CSS(card(q.ID)+` button[value="o0"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
		chromedp.WaitVisible(chromedp.CSS(card(q.ID))))
	flash := value(t, ctx, chromedp.Text(chromedp.CSS(`.flash`)))
	if !strings.Contains(flash, "Your vote for “Approve”") || !strings.Contains(flash, "1 of 2") {
		t.Errorf("confirmation %q", flash)
	}
	mine := value(t, ctx, chromedp.Text(chromedp.CSS(card(q.ID)+` .my-vote`)))
	if !strings.Contains(mine, "Your vote: Approve") {
		t.Errorf("own vote line %q", mine)
	}
	if p := value(t, ctx, chromedp.Evaluate[string](`document.querySelector("`+card(q.ID)+` button[value=o0]").getAttribute("aria-pressed") || ""`)); p != "true" {
		t.Errorf("the voted button is not marked as pressed: %q", p)
	}
}

// TestBrowserDismissNeedsConfirmationAwayFromSubmit: one click on
// Dismiss changes nothing; it sits on its own row, not beside Submit; the
// confirmation says what it does.
func TestBrowserDismissNeedsConfirmationAwayFromSubmit(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", domain.AskRequest{RunID: "d-1", Question: "Which regions?", MultiSelect: true,
		Options: []domain.Option{{Label: "eu-west"}, {Label: "us-east"}}})
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(card(q.ID))))
	rect := func(sel string) [4]float64 {
		return value(t, ctx, chromedp.Evaluate[[4]float64](`(function(){ var r = document.querySelector(`+jsString(sel)+`).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom] })()`))
	}
	submit := rect(card(q.ID) + ` button.primary`)
	dismiss := rect(card(q.ID) + ` .dismiss`)
	if dismiss[1] < submit[3] {
		t.Errorf("Dismiss %v sits on Submit's row %v", dismiss, submit)
	}
	run(t, ctx, 10*time.Second, chromedp.Click(chromedp.CSS(card(q.ID)+` .dismiss summary, `+card(q.ID)+` button.dismiss`)), chromedp.Sleep(300*time.Millisecond))
	if got := e.get("ops", q.ID); got.Status != domain.StatusPending {
		t.Fatalf("one click on Dismiss dismissed the question (%s)", got.Status)
	}
	run(t, ctx, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(card(q.ID)+` .dismiss-confirm button.danger`)))
	text := value(t, ctx, chromedp.Text(chromedp.CSS(card(q.ID)+` .dismiss-confirm`)))
	if !strings.Contains(text, "carries on without an answer") {
		t.Errorf("confirmation text %q", text)
	}
	run(t, ctx, 10*time.Second, chromedp.Click(chromedp.CSS(card(q.ID)+` .dismiss-confirm button.danger`)), chromedp.WaitVisible(chromedp.CSS(`.flash`)))
	if got := e.get("ops", q.ID); got.Status != domain.StatusCancelled {
		t.Fatalf("confirmed dismissal: %s", got.Status)
	}
}
