package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

// TestBrowserAnsweredElsewhereStaysWithNotice: a card answered in Slack
// while someone is typing on it stays, says visibly who answered where,
// and keeps the typed text; it no longer counts as waiting.
func TestBrowserAnsweredElsewhereStaysWithNotice(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", domain.AskRequest{RunID: "r1", Question: "Which region?", Options: []domain.Option{{Label: "eu-west"}, {Label: "us-east"}}})
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)),
		chromedp.SendKeys(chromedp.CSS(card(q.ID)+` input[name="t0"]`), "ap-south, after the freeze"))
	if _, err := e.router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: ptr("eu-west")},
		domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, 5*time.Second, chromedp.WaitVisible(chromedp.CSS(card(q.ID)+` .settled-note`)))
	time.Sleep(400 * time.Millisecond) // longer than the old fade-out
	note := value(t, ctx, chromedp.Text(chromedp.CSS(card(q.ID)+` .settled-note`)))
	if !strings.Contains(note, "Answered by maria (Slack)") {
		t.Errorf("notice %q", note)
	}
	typed := value(t, ctx, chromedp.Evaluate[string](`document.querySelector("`+card(q.ID)+` input[name=t0]").value`))
	if typed != "ap-south, after the freeze" {
		t.Errorf("typed text lost: %q", typed)
	}
	if count := value(t, ctx, chromedp.Text(chromedp.CSS(`#count`))); count != "All caught up" {
		t.Errorf("count %q", count)
	}
	if !value(t, ctx, chromedp.Evaluate[bool](`document.querySelector("`+card(q.ID)+` button[value=other]").disabled`)) {
		t.Error("the settled card's Send still works")
	}
}

// TestBrowserStaleFormAndErrors: sending a form for a question answered
// meanwhile names the person and platform, keeps what was entered, and
// focuses the message; a reload of the error URL is a page, not a 405;
// the outcome flash shows once; the first open of a question is not "new".
func TestBrowserStaleFormAndErrors(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	two := e.ask("ops", domain.AskRequest{RunID: "r2", Questions: []domain.Item{
		{Question: "Which region?", Options: []domain.Option{{Label: "eu"}, {Label: "us"}}}, {Question: "Why?"}}})
	fresh := e.ask("ops", domain.AskRequest{RunID: "r3", Question: "Tag the release?", Options: []domain.Option{{Label: "Tag"}, {Label: "Wait"}}})

	// First open of a question page: the notification is read, not "new".
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/questions/"+fresh.ID), chromedp.WaitVisible(chromedp.CSS(card(fresh.ID))))
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll(".badge.new").length`)); n != 0 {
		t.Errorf("the first open of the question page still says NEW")
	}

	// Validation error: focus moves to the message.
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/questions/"+two.ID),
		chromedp.Click(chromedp.CSS(card(two.ID)+` input[name="a0"][value="o1"]`)),
		chromedp.Click(chromedp.CSS(card(two.ID)+` button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`.alert`)))
	active := value(t, ctx, chromedp.Evaluate[string](`document.activeElement.className + " " + document.activeElement.tagName`))
	if !strings.Contains(active, "alert") {
		t.Errorf("focus is on %q, not on the error", active)
	}
	// Reloading the error URL (GET .../answer) is a page, not a bare 405.
	res, err := http.Get(e.srv.URL + "/questions/" + two.ID + "/answer")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasSuffix(res.Request.URL.Path, "/questions/"+two.ID) {
		t.Errorf("GET of the form URL: %d at %s", res.StatusCode, res.Request.URL)
	}

	// Someone answers in Slack, then this form is sent: a stale form.
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/questions/"+two.ID),
		chromedp.Click(chromedp.CSS(card(two.ID)+` input[name="a0"][value="o0"]`)),
		chromedp.SendKeys(chromedp.CSS(card(two.ID)+` textarea[name="t1"]`), "closest to the users"))
	if _, err := e.router.Answer(context.Background(), "ops", two.ID, domain.RespondRequest{Answers: map[string]domain.StringList{
		"Which region?": {"us"}, "Why?": {"cheaper"}}}, domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	// The page shows the notice, which disables the card's controls (and a
	// disabled choice is not sent); send the form as it was before the
	// notice, as a person who pressed send at that very moment.
	run(t, ctx, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(card(two.ID)+`.settled`)))
	value(t, ctx, chromedp.Evaluate[bool](`(function (f) {
		f.querySelectorAll("input, textarea, button").forEach(function (x) { x.disabled = false; });
		f.submit();
		return true;
	})(document.getElementById("f-`+two.ID+`"))`))
	run(t, ctx, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`.alert`)))
	alert := value(t, ctx, chromedp.Text(chromedp.CSS(`.alert`)))
	if !strings.Contains(alert, "already answered by maria (Slack)") || strings.Contains(alert, two.ID) {
		t.Errorf("stale message %q", alert)
	}
	if !strings.Contains(alert, "Which region? — eu") || !strings.Contains(alert, "closest to the users") {
		t.Errorf("what was entered is not kept: %q", alert)
	}

	// The outcome flash shows once.
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"),
		chromedp.Click(chromedp.CSS(card(fresh.ID)+` button[name="a0"][value="o0"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
		chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#count`)))
	if n := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll(".flash").length`)); n != 0 {
		t.Error("the flash came back on reload")
	}
}

// TestStaleFormNamesPersonNotUUID: through the API without a token the
// answer is recorded as api:local; the stale message says "local (API)"
// and never the question's id.
func TestStaleFormNamesPersonNotUUID(t *testing.T) {
	e := newEnv(t, envOptions{})
	q := e.ask("ops", domain.AskRequest{RunID: "r4", Question: "Proceed?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	c := e.client()
	tok := c.csrf("/")
	res, err := http.Post(e.srv.URL+"/api/projects/ops/agent-questions/"+q.ID+"/respond", "application/json", strings.NewReader(`{"response":"No"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	p := c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {tok}, "a0": {"o0"}})
	if p.status != http.StatusConflict || strings.Contains(p.body, "question "+q.ID) || strings.Contains(p.body, "api:local") {
		t.Errorf("stale message shows internals (status %d)", p.status)
	}
}

// TestBrowserFreshContinuationRunPage: a continuation that has not asked
// yet says so, instead of "0 questions — no question still kept".
func TestBrowserFreshContinuationRunPage(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", domain.AskRequest{RunID: "run-c", AgentID: "deploy-bot", Question: "Deploy?",
		Options: []domain.Option{{Label: "Deploy"}, {Label: "Wait"}}, Resume: &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
	if _, err := e.store.PauseRun(context.Background(), "ops", "run-c", "deploy-bot", time.Now()); err != nil {
		t.Fatal(err)
	}
	done, err := e.router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: ptr("Deploy")}, domain.Person{Platform: "slack", ID: "U1", Name: "maria"})
	if err != nil {
		t.Fatal(err)
	}
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/projects/ops/runs/"+done.ResumedRunID), chromedp.WaitVisible(chromedp.CSS(`#resumed-from`)))
	main := value(t, ctx, chromedp.Text(chromedp.CSS(`main`)))
	if strings.Contains(main, "0 questions") || strings.Contains(main, "no question that is still kept") {
		t.Errorf("the fresh continuation reads as empty history: %q", main)
	}
	if !strings.Contains(main, "has not asked anything since") {
		t.Errorf("the page does not say the run has not asked yet: %q", main)
	}
}
