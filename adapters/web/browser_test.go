package web

// Browser tests: the inbox in headless Chromium (Debian's "chromium",
// installed by `make test` through scripts/deps.sh), driven from Go with
// chromedp over the DevTools protocol. Outside CI they skip when no
// Chromium is found; with CI=true they fail instead.

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/domain"
)

func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("browser tests need Chromium and CI=true: install the Debian package chromium (make deps) or set CHROMIUM")
	}
	t.Skip("browser test skipped: no chromium binary found (install Debian's chromium with `make deps`, or set CHROMIUM=/path/to/chrome)")
	return ""
}

// repoRoot finds the module root, where artifacts/ and docs/ live.
func repoRoot(t *testing.T) string {
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

// shared is the one headless Chromium the package's browser tests share:
// starting Chromium costs seconds (many under the race detector on a busy
// machine), a new tab in a new browser context costs milliseconds. Each
// test still gets its own cookies and storage (its own browser context).
var shared struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	dir    string
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// browser opens a tab for the test in its own browser context of the
// shared Chromium. When the test fails, the page as it was is saved to
// artifacts/<test>.png.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "askbridge-chromium-")
		if shared.err != nil {
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.Flag("headless", true),
			chromedp.Flag("no-sandbox", true),
			chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("no-first-run", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("no-default-browser-check", true),
			chromedp.UserDataDir(shared.dir),
			chromedp.WindowSize(1000, 900),
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		shared.ctx, shared.cancel = bctx, func() { cancelBrowser(); cancelAlloc() }
		shared.err = chromedp.Do(bctx)
	})
	if shared.err != nil {
		t.Fatalf("starting %s: %v", path, shared.err)
	}
	ctx, cancel := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("opening a tab: %v", err)
	}
	t.Cleanup(cancel)
	t.Cleanup(func() { // runs first: the tab is still open
		if !t.Failed() {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		png, err := chromedp.Run(sctx, chromedp.FullScreenshot(90))
		if err != nil {
			t.Logf("failure screenshot not taken: %v", err)
			return
		}
		dir := filepath.Join(repoRoot(t), "artifacts")
		_ = os.MkdirAll(dir, 0o755)
		file := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".png")
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Logf("failure screenshot not saved: %v", err)
			return
		}
		t.Logf("failure screenshot: %s", file)
	})
	return ctx
}

// run runs browser actions with a deadline, failing the test on error.
func run(t *testing.T, ctx context.Context, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(rctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// value runs one browser action that reads a value.
func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(rctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

type waited struct {
	q   *domain.Question
	err error
}

// waiter is the agent's side: it blocks in Router.Wait like the API's
// /wait long-poll and returns the final record.
func (e *env) waiter(project, id string) <-chan waited {
	ch := make(chan waited, 1)
	go func() {
		q, err := e.router.Wait(context.Background(), project, id, 30*time.Second)
		ch <- waited{q, err}
	}()
	return ch
}

func card(id string) string { return "#q-" + id }

func TestBrowserAnswerEachShape(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	auth := []domain.Option{{Label: "OAuth 2.0", Value: "oauth", Description: "Standard"}, {Label: "API key", Description: "Simple", Recommended: true}}
	feats := []domain.Option{{Label: "Login"}, {Label: "Dashboard"}, {Label: "Billing"}}
	type shape struct {
		name    string
		req     domain.AskRequest
		do      func(id string) []chromedp.Action[chromedp.Void]
		answers map[string]string
		sel     map[string][]string
		resp    string
	}
	shapes := []shape{
		{"single select: one click", domain.AskRequest{Question: "Which auth method?", Header: "Auth", Options: auth},
			func(id string) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{chromedp.Click(chromedp.CSS(card(id) + ` button[name="a0"][value="o1"]`))}
			},
			map[string]string{"Which auth method?": "API key"}, map[string][]string{"Which auth method?": {"API key"}}, "API key"},
		{"single select: Other", domain.AskRequest{Question: "Which auth method?", Options: auth},
			func(id string) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					chromedp.SendKeys(chromedp.CSS(card(id)+` input[name="t0"]`), "SAML via Okta"),
					chromedp.Click(chromedp.CSS(card(id) + ` button[name="a0"][value="other"]`))}
			},
			map[string]string{"Which auth method?": "SAML via Okta"}, map[string][]string{"Which auth method?": {"SAML via Okta"}}, "SAML via Okta"},
		{"multi select: checkboxes, Other and Enter", domain.AskRequest{Question: "Which features?", MultiSelect: true, Options: feats},
			func(id string) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					chromedp.Click(chromedp.CSS(card(id) + ` input[name="a0"][value="o0"]`)),
					chromedp.Click(chromedp.CSS(card(id) + ` input[name="a0"][value="o2"]`)),
					// Enter in the text box submits (keyboard use), and
					// submits the answer, not Dismiss.
					chromedp.SendKeys(chromedp.CSS(card(id)+` input[name="t0"]`), "Audit log\r")}
			},
			map[string]string{"Which features?": "Login, Billing, Audit log"},
			map[string][]string{"Which features?": {"Login", "Billing", "Audit log"}}, "Login, Billing, Audit log"},
		{"open ended: text and Submit", domain.AskRequest{Question: "Anything else before the release?"},
			func(id string) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					chromedp.SendKeys(chromedp.CSS(card(id)+` textarea[name="t0"]`), "Tag it v2.1"),
					chromedp.Click(chromedp.CSS(card(id) + ` button.primary`))}
			},
			map[string]string{"Anything else before the release?": "Tag it v2.1"},
			map[string][]string{"Anything else before the release?": {"Tag it v2.1"}}, "Tag it v2.1"},
		{"two items: radio, Other typed, Submit", domain.AskRequest{Questions: []domain.Item{
			{Question: "Which region?", Header: "Region", Options: []domain.Option{{Label: "eu-west"}, {Label: "us-east"}}},
			{Question: "Which features?", Header: "Features", MultiSelect: true, Options: feats}}},
			func(id string) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					// Typing into "Other" selects it (JS), no radio click.
					chromedp.SendKeys(chromedp.CSS(card(id)+` input[name="t0"]`), "ap-south"),
					chromedp.Click(chromedp.CSS(card(id) + ` input[name="a1"][value="o1"]`)),
					chromedp.Click(chromedp.CSS(card(id) + ` button.primary`))}
			},
			map[string]string{"Which region?": "ap-south", "Which features?": "Dashboard"},
			map[string][]string{"Which region?": {"ap-south"}, "Which features?": {"Dashboard"}}, "ap-south; Dashboard"},
	}
	for n, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			s.req.RunID = "run-" + string(rune('a'+n))
			q := e.ask("ops", s.req)
			got := e.waiter("ops", q.ID)
			actions := append([]chromedp.Action[chromedp.Void]{
				chromedp.Navigate(e.srv.URL + "/"),
				chromedp.WaitVisible(chromedp.CSS(card(q.ID))),
			}, s.do(q.ID)...)
			actions = append(actions, chromedp.WaitVisible(chromedp.CSS(`.flash`)))
			run(t, ctx, 20*time.Second, actions...)
			flash := value(t, ctx, chromedp.Text(chromedp.CSS(`.flash`)))
			if !strings.HasPrefix(flash, "Answered") {
				t.Errorf("confirmation %q", flash)
			}
			var w waited
			select {
			case w = <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("the agent's waiter was not woken")
			}
			if w.err != nil || w.q.Status != domain.StatusAnswered {
				t.Fatalf("waiter: %v %v", w.err, w.q)
			}
			if !reflect.DeepEqual(w.q.Answers, s.answers) || !reflect.DeepEqual(w.q.Selections, s.sel) || w.q.Response != s.resp {
				t.Fatalf("agent got answers=%v selections=%v response=%q", w.q.Answers, w.q.Selections, w.q.Response)
			}
		})
	}
	// Dismiss: the waiter learns it was cancelled by a person.
	t.Run("dismiss", func(t *testing.T) {
		q := e.ask("ops", domain.AskRequest{RunID: "run-z", Question: "Proceed?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
		got := e.waiter("ops", q.ID)
		run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"),
			chromedp.Click(chromedp.CSS(card(q.ID)+` details.dismiss summary`)),
			chromedp.Click(chromedp.CSS(card(q.ID)+` details.dismiss button.danger`)),
			chromedp.WaitVisible(chromedp.CSS(`.flash`)))
		w := <-got
		if w.q.Status != domain.StatusCancelled || w.q.CancelReason != domain.CancelUser {
			t.Fatalf("waiter got %s %s", w.q.Status, w.q.CancelReason)
		}
	})
}

func TestBrowserCardSettlesWhenAnsweredThroughAPI(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", domain.AskRequest{RunID: "r1", Question: "Roll back the release?", Options: []domain.Option{{Label: "Roll back"}, {Label: "Keep"}}})
	keep := e.ask("ops", domain.AskRequest{RunID: "r2", Question: "Rotate the keys?"})
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(card(q.ID))),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	value(t, ctx, chromedp.Evaluate[int](`window.__loaded = 1`))

	// Answered through the JSON API.
	body := `{"response": "Keep", "responded_by": {"platform": "api", "id": "ci-token", "name": "release-ci"}}`
	res, err := http.Post(e.srv.URL+"/api/projects/ops/agent-questions/"+q.ID+"/respond", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("respond through the API: %d", res.StatusCode)
	}
	// The card stays, saying who answered where; it no longer counts.
	run(t, ctx, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(card(q.ID)+` .settled-note`)))
	if note := value(t, ctx, chromedp.Text(chromedp.CSS(card(q.ID)+` .settled-note`))); !strings.Contains(note, "Answered by release-ci (API)") {
		t.Errorf("notice %q", note)
	}

	// A new question appears, in deadline order, without a reload.
	fresh := e.ask("web", domain.AskRequest{RunID: "r3", Question: "Merge the hotfix?", Timeout: dur(time.Minute),
		Options: []domain.Option{{Label: "Merge"}, {Label: "Hold"}}})
	run(t, ctx, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(card(fresh.ID))))
	first := value(t, ctx, chromedp.AttributeValue(chromedp.CSS(`#cards article.card`), "data-id")).Value
	announced := value(t, ctx, chromedp.Poll[string](`document.getElementById("live").textContent`))
	count := value(t, ctx, chromedp.Text(chromedp.CSS(`#count`)))
	still := value(t, ctx, chromedp.Evaluate[bool](`window.__loaded === 1`))
	if first != fresh.ID {
		t.Errorf("the new question (1 minute left) should come first, got %s", first)
	}
	if !still {
		t.Error("the page reloaded")
	}
	if !strings.Contains(count, "2 questions") {
		t.Errorf("count %q", count)
	}
	if !strings.Contains(announced, "New question") && !strings.Contains(announced, "Answered by release-ci (API)") {
		t.Errorf("nothing announced to screen readers: %q", announced)
	}
	_ = keep
}

func TestBrowserRunPageAfterPauseAnswerContinuation(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	q := e.ask("ops", domain.AskRequest{RunID: "run-a", AgentID: "deploy-bot", AgentName: "Deploy bot",
		Question: "Deploy v2 to production?", Header: "Deploy",
		Options: []domain.Option{{Label: "Deploy", Recommended: true}, {Label: "Wait"}},
		Resume:  &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
	// The runtime reports that the run stopped (POST .../pause).
	if _, err := e.store.PauseRun(context.Background(), "ops", "run-a", "deploy-bot", time.Now()); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, 20*time.Second,
		chromedp.Navigate(e.srv.URL+"/projects/ops/runs/run-a"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	status := value(t, ctx, chromedp.TextContent(chromedp.CSS(`#run-status`)))
	if status != "paused" {
		t.Fatalf("run status %q", status)
	}
	// Answer from the notification's page.
	run(t, ctx, 20*time.Second,
		chromedp.Navigate(e.srv.URL+"/questions/"+q.ID),
		chromedp.Click(chromedp.CSS(`button[name="a0"][value="o0"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.outcome`)))
	final := e.get("ops", q.ID)
	if final.ResumedRunID == "" {
		t.Fatal("no continuation run")
	}
	outcome := value(t, ctx, chromedp.Text(chromedp.CSS(`p.outcome`)))
	run(t, ctx, 20*time.Second,
		chromedp.Click(chromedp.CSS(`a.run`)),
		chromedp.WaitVisible(chromedp.CSS(`#resumed-by`)))
	status = value(t, ctx, chromedp.TextContent(chromedp.CSS(`#run-status`)))
	resumedBy := value(t, ctx, chromedp.Text(chromedp.CSS(`#resumed-by`)))
	if !strings.Contains(outcome, "Answered by local web user") || status != "resumed" || !strings.Contains(resumedBy, final.ResumedRunID) {
		t.Fatalf("outcome %q, status %q, link %q", outcome, status, resumedBy)
	}
	run(t, ctx, 20*time.Second,
		chromedp.Click(chromedp.CSS(`#resumed-by a`)),
		chromedp.WaitVisible(chromedp.CSS(`#resumed-from`)))
	from := value(t, ctx, chromedp.Text(chromedp.CSS(`#resumed-from`)))
	status = value(t, ctx, chromedp.TextContent(chromedp.CSS(`#run-status`)))
	if !strings.Contains(from, "run-a") || status != "running" {
		t.Fatalf("continuation page: %q, status %q", from, status)
	}
}

func TestBrowserLoginRequiredAndCSRF(t *testing.T) {
	e := newEnv(t, envOptions{requireLogin: true})
	ctx := browser(t)
	q := e.ask("ops", domain.AskRequest{RunID: "r1", Question: "Restart the database?", Options: []domain.Option{{Label: "Restart"}, {Label: "Not now"}}})
	run(t, ctx, 20*time.Second,
		chromedp.Navigate(e.srv.URL+"/questions/"+q.ID),
		chromedp.WaitVisible(chromedp.CSS(`#token`)))
	loc := value(t, ctx, chromedp.Location())
	if !strings.Contains(loc, "/login?next=") {
		t.Fatalf("not sent to sign in: %s", loc)
	}
	run(t, ctx, 20*time.Second,
		chromedp.SendKeys(chromedp.CSS(`#token`), "tok-wrong"),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`.alert`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), "tok-alice-0123456789"),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(card(q.ID))))
	loc = value(t, ctx, chromedp.Location())
	if !strings.HasSuffix(loc, "/questions/"+q.ID) {
		t.Fatalf("not back on the question after sign-in: %s", loc)
	}
	// A form without its CSRF token is refused and changes nothing.
	value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('input[name=csrf]').forEach(function (e) { e.remove() }); 1`))
	run(t, ctx, 20*time.Second,
		chromedp.Click(chromedp.CSS(`button[name="a0"][value="o0"]`)),
		chromedp.WaitVisible(chromedp.CSS(`.alert.big`)))
	msg := value(t, ctx, chromedp.Text(chromedp.CSS(`.alert.big`)))
	if !strings.Contains(msg, "This form was refused") {
		t.Fatalf("message %q", msg)
	}
	if got := e.get("ops", q.ID); got.Status != domain.StatusPending {
		t.Fatalf("the refused form changed the question: %s", got.Status)
	}
	// With the token it goes through, recorded under the operator.
	run(t, ctx, 20*time.Second,
		chromedp.Navigate(e.srv.URL+"/questions/"+q.ID),
		chromedp.Click(chromedp.CSS(`button[name="a0"][value="o0"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.outcome`)))
	if got := e.get("ops", q.ID); got.RespondedBy == nil || got.RespondedBy.ID != "alice" {
		t.Fatalf("responded_by %+v", got.RespondedBy)
	}
}

// TestBrowserScreenshots renders the docs' screenshots (docs/img/
// inbox.png, approval.png, history.png, run.png). Run with
// ASKBRIDGE_SCREENSHOTS=1.
func TestBrowserScreenshots(t *testing.T) {
	if os.Getenv("ASKBRIDGE_SCREENSHOTS") != "1" {
		t.Skip("set ASKBRIDGE_SCREENSHOTS=1 to regenerate docs/img/*.png")
	}
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	bg := context.Background()
	dep := e.ask("ops", domain.AskRequest{RunID: "deploy-7f3c", AgentID: "deploy-bot", AgentName: "Deploy bot", Header: "Deploy",
		Question: "Deploy api v2.14.0 to production?",
		Context:  "Canary at 5% for 30 min: error rate **0.02%** (baseline 0.03%), p99 latency 212 ms.\nRollback plan: `kubectl rollout undo deploy/api`.",
		Options: []domain.Option{{Label: "Deploy now", Description: "Roll out to 100% over 10 minutes", Recommended: true},
			{Label: "Hold", Description: "Keep the canary at 5% and ask again in an hour"}},
		Timeout: dur(12 * time.Minute), Resume: &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
	_ = dep
	e.ask("web", domain.AskRequest{RunID: "migr-2291", AgentID: "schema-agent", AgentName: "Schema agent", Timeout: dur(3 * time.Hour),
		Questions: []domain.Item{{Question: "Which tables should the migration backfill now?", Header: "Backfill", MultiSelect: true,
			Options: []domain.Option{{Label: "orders", Description: "41 M rows, ~20 min"}, {Label: "invoices", Description: "6 M rows"}, {Label: "audit_log", Description: "Can run tonight"}}}}})
	e.ask("ops", domain.AskRequest{RunID: "oncall-88", AgentID: "triage", AgentName: "Triage agent", Header: "Incident",
		Question: "What should the status page say about the checkout slowdown?", Timeout: dur(45 * time.Minute)})

	// A run that paused, was answered and continued.
	paused := e.ask("ops", domain.AskRequest{RunID: "release-1042", AgentID: "deploy-bot", AgentName: "Deploy bot", Header: "Notes",
		Question: "Which changes go into the release notes?", MultiSelect: true,
		Options: []domain.Option{{Label: "Faster search"}, {Label: "New billing page"}, {Label: "Bug fixes"}},
		Resume:  &domain.ResumeRequest{URL: "https://runtime.example/resume"}})
	_, _ = e.store.PauseRun(bg, "ops", "release-1042", "deploy-bot", time.Now())
	done, err := e.router.Answer(bg, "ops", paused.ID, domain.RespondRequest{Answers: map[string]domain.StringList{paused.Questions[0].Question: {"Faster search", "Bug fixes"}}},
		domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"})
	if err != nil {
		t.Fatal(err)
	}
	next := e.ask("ops", domain.AskRequest{RunID: done.ResumedRunID, AgentID: "deploy-bot", AgentName: "Deploy bot", Header: "Tag",
		Question: "Tag the release as v3.2.0?", Options: []domain.Option{{Label: "Tag v3.2.0", Recommended: true}, {Label: "Tag v3.1.1"}}})
	_ = next

	// An approval from the Claude Code hook, and some history.
	appr := hookApproval("sess-4e1d")
	appr.Context = "Claude Code in `~/src/shop`\n\n- command: ```rm -rf build/ && make release```"
	appr.Timeout = dur(9 * time.Minute)
	approvalQ := e.ask("ops", appr)
	old := e.ask("ops", hookApproval("sess-77aa"))
	if _, err := e.router.Answer(bg, "ops", old.ID, domain.RespondRequest{Response: ptr("keep build/, run make clean instead")},
		domain.Person{Platform: "slack", ID: "U024BE7LH", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	gone := e.ask("web", domain.AskRequest{RunID: "migr-2280", AgentID: "schema-agent", AgentName: "Schema agent", Header: "Backfill",
		Question: "Backfill audit_log tonight?", Options: []domain.Option{{Label: "Yes"}, {Label: "No"}}})
	if _, err := e.router.Cancel(bg, "web", gone.ID, domain.CancelUser, &domain.Person{Platform: "discord", ID: "4455", Name: "alice"}); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(repoRoot(t), "docs", "img")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(path, file string, width int64) {
		view := chromedp.EmulateViewport(width, 900)
		if width < 500 {
			view = chromedp.EmulateViewport(width, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)
		}
		run(t, ctx, 20*time.Second,
			view,
			chromedp.Navigate(e.srv.URL+path),
			chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)),
			chromedp.Sleep(300*time.Millisecond))
		png := value(t, ctx, chromedp.FullScreenshot(100))
		if err := os.WriteFile(file, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", file)
	}
	shot("/", filepath.Join(dir, "inbox.png"), 900)
	shot("/history", filepath.Join(dir, "history.png"), 900)
	shot("/questions/"+approvalQ.ID, filepath.Join(dir, "approval.png"), 900)
	shot("/projects/ops/runs/release-1042", filepath.Join(dir, "run.png"), 900)
	_ = os.MkdirAll(filepath.Join(repoRoot(t), "artifacts"), 0o755)
	shot("/", filepath.Join(repoRoot(t), "artifacts", "inbox-phone.png"), 390)
}

// TestBrowserTallyUpdatesLive: a vote elsewhere updates the approval's
// tally on the open inbox without a reload, and what the person typed on
// the card stays.
func TestBrowserTallyUpdatesLive(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := browser(t)
	two := 2
	// A question that needs two votes (not kind "approval", which has no
	// free-text box to type into).
	q := e.ask("ops", domain.AskRequest{RunID: "deploy-9", Question: "Deploy api v2?",
		Options: []domain.Option{{Label: "Approve"}, {Label: "Deny"}}, ApprovalsRequired: &two})
	run(t, ctx, 20*time.Second, chromedp.Navigate(e.srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(card(q.ID)+` p.approvals`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)),
		chromedp.SendKeys(chromedp.CSS(card(q.ID)+` input[type=text]`), "after the freeze"))
	value(t, ctx, chromedp.Evaluate[int](`window.__loaded = 1`))

	if _, err := e.router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: ptr("Approve")},
		domain.Person{Platform: "slack", ID: "U1", Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	tally := value(t, ctx, chromedp.Poll[string](`(function(){ var t = document.querySelector("`+card(q.ID)+` p.approvals .tally");
		return t && t.textContent.indexOf("1 of 2") >= 0 ? t.textContent : null })()`))
	typed := value(t, ctx, chromedp.Evaluate[string](`document.querySelector("`+card(q.ID)+` input[type=text]").value`))
	if tally != "Approve: 1 of 2 approvals — alice" {
		t.Errorf("tally %q", tally)
	}
	if typed != "after the freeze" {
		t.Errorf("the typed text was lost: %q", typed)
	}
	if !value(t, ctx, chromedp.Evaluate[bool](`window.__loaded === 1`)) {
		t.Error("the page reloaded")
	}
}
