package web

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/domain"
)

// Approvals that carry the exact action (issue 18): what the web inbox
// shows of it and the forms that decide it.

var bashSuggestions = []json.RawMessage{
	json.RawMessage(`{"type": "addDirectories", "directories": ["/home/dev/proj/build"], "destination": "session"}`),
	json.RawMessage(`{"type": "setMode", "mode": "acceptEdits", "destination": "session"}`),
	json.RawMessage(`{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "make release:*"}], "behavior": "allow", "destination": "session"}`),
}

// bashAction is the Claude Code hook's PermissionRequest for a Bash call
// (agent/hook/testdata/claude-code/permissionrequest-bash.json, with one
// more suggestion).
func bashAction(runID, command string) domain.AskRequest {
	in, _ := json.Marshal(map[string]string{"command": command, "description": "Remove the build directory"})
	req := hookApproval(runID)
	req.Question = "Allow Bash?"
	req.Action = &domain.Action{Tool: "Bash", Input: in, Suggestions: bashSuggestions}
	return req
}

// editAction is a Claude Code Edit of n changed lines.
func editAction(runID string, n int) domain.AskRequest {
	var oldS, newS strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&oldS, "old line %d\n", i)
		fmt.Fprintf(&newS, "new line %d\n", i)
	}
	in, _ := json.Marshal(map[string]any{"file_path": "/home/dev/proj/main.go", "old_string": oldS.String(), "new_string": newS.String()})
	req := hookApproval(runID)
	req.Question = "Allow Edit of main.go?"
	req.Action = &domain.Action{Tool: "Edit", Input: in}
	return req
}

// apiAction is an approval an agent asks through the API with a JSON
// argument object.
func apiAction(runID string) domain.AskRequest {
	return domain.AskRequest{RunID: runID, Kind: domain.KindApproval, AgentName: "Deploy bot", Question: "Scale the api service?",
		Options: []domain.Option{{Label: "Approve"}, {Label: "Reject"}},
		Action:  &domain.Action{Tool: "scale", Input: json.RawMessage(`{"service": "api", "replicas": 12, "regions": ["eu-west", "us-east"], "note": "<b>peak</b>"}`)}}
}

var digestRe = regexp.MustCompile(`name="digest" value="([^"]+)"`)

func TestActionShownInFull(t *testing.T) {
	e := newEnv(t, envOptions{})
	long := "rm -rf build && " + strings.Repeat("echo step && ", 400) + "make release"
	bash := e.ask("ops", bashAction("s-1", long))
	edit := e.ask("ops", editAction("s-2", 300))
	api := e.ask("ops", apiAction("s-3"))
	c := e.client()

	p := c.getPage("/questions/" + bash.ID)
	if !strings.Contains(p.body, `<pre class="action-command"><code>`+html.EscapeString(long)+`</code></pre>`) {
		t.Error("the question page does not show the whole Bash command as a code block")
	}
	if !strings.Contains(p.body, "Bash") || !strings.Contains(p.body, "Remove the build directory") {
		t.Error("the tool name or the other arguments are missing")
	}

	p = c.getPage("/questions/" + api.ID)
	pretty := "{\n  &#34;note&#34;: &#34;\\u003cb\\u003epeak\\u003c/b\\u003e&#34;,\n  &#34;regions&#34;: [\n    &#34;eu-west&#34;,\n    &#34;us-east&#34;\n  ],\n  &#34;replicas&#34;: 12,\n  &#34;service&#34;: &#34;api&#34;\n}"
	pretty2 := strings.ReplaceAll(pretty, "\\u003cb\\u003epeak\\u003c/b\\u003e", "&lt;b&gt;peak&lt;/b&gt;")
	if !strings.Contains(p.body, pretty) && !strings.Contains(p.body, pretty2) {
		t.Errorf("the API approval's arguments are not shown as pretty-printed JSON:\n%s", p.body)
	}
	if strings.Contains(p.body, "<b>peak</b>") {
		t.Error("an argument's markup reached the page unescaped")
	}

	// The Edit: every one of the 600 changed lines on the question page,
	// marked + and - beside their colour.
	p = c.getPage("/questions/" + edit.ID)
	p.body = html.UnescapeString(p.body)
	if n := strings.Count(p.body, `<span class="dl add">+new line `); n != 300 {
		t.Errorf("the question page shows %d added lines, want 300", n)
	}
	if n := strings.Count(p.body, `<span class="dl del">-old line `); n != 300 {
		t.Errorf("the question page shows %d removed lines, want 300", n)
	}
	if strings.Contains(p.body, "more lines of the diff") {
		t.Error("the question page collapses the diff")
	}
	if !strings.Contains(p.body, "+300 −300") && !strings.Contains(p.body, "300 added, 300 removed") {
		t.Error("the diff does not say how many lines change")
	}
	// The inbox card collapses most of it, says how much, and links to the page.
	p = c.getPage("/")
	p.body = html.UnescapeString(p.body)
	i := strings.Index(p.body, `id="q-`+edit.ID)
	j := strings.Index(p.body[i:], "</article>")
	cardHTML := p.body[i : i+j]
	if !regexp.MustCompile(`<details class="diff-more"><summary>Show (\d+) more lines of the diff</summary>`).MatchString(cardHTML) {
		t.Errorf("the inbox card does not collapse a long diff behind a details saying how many lines are hidden")
	}
	m := regexp.MustCompile(`Show (\d+) more lines of the diff`).FindStringSubmatch(cardHTML)
	shown := strings.Count(cardHTML[:strings.Index(cardHTML, `<details class="diff-more">`)], `<span class="dl `)
	if m != nil && fmt.Sprint(602-shown) != m[1] && fmt.Sprint(603-shown) != m[1] {
		t.Errorf("the card shows %d lines and says %s more are hidden", shown, m[1])
	}
	if !strings.Contains(cardHTML, `href="/questions/`+edit.ID+`"`) {
		t.Error("the card does not link to the question page")
	}
}

// post sends a form of the card on the question page.
func actionPost(t *testing.T, c *client, q *domain.Question, form url.Values) page {
	t.Helper()
	p := c.getPage("/questions/" + q.ID)
	m := csrfRe.FindStringSubmatch(p.body)
	d := digestRe.FindStringSubmatch(p.body)
	if m == nil || d == nil {
		t.Fatalf("the question page has no csrf or digest field")
	}
	if d[1] != q.Action.Digest {
		t.Fatalf("the page's digest %s is not the action's %s", d[1], q.Action.Digest)
	}
	form.Set("csrf", m[1])
	form.Set("digest", d[1])
	form.Set("return", "question")
	return c.post("/questions/"+q.ID+"/answer", form)
}

func TestActionEditBeforeApprove(t *testing.T) {
	e := newEnv(t, envOptions{routes: []domain.Route{{Name: "locked", NoEdit: true}}})
	c := e.client()

	// Bash: the form is the command, pre-filled.
	bash := e.ask("ops", bashAction("s-1", "rm -rf build"))
	p := c.getPage("/questions/" + bash.ID)
	if !strings.Contains(p.body, `name="edited_command"`) || !strings.Contains(p.body, ">\nrm -rf build</textarea>") {
		t.Fatal("no edit form pre-filled with the command")
	}
	// Without the CSRF token nothing happens.
	if r := c.post("/questions/"+bash.ID+"/answer", url.Values{"do": {"edit"}, "edited_command": {"rm -rf build/tmp"}}); r.status != http.StatusForbidden {
		t.Errorf("an edit without CSRF token: status %d", r.status)
	}
	if got := e.get("ops", bash.ID); got.Status != domain.StatusPending {
		t.Fatal("an edit without CSRF token was recorded")
	}
	r := actionPost(t, c, bash, url.Values{"do": {"edit"}, "edited_command": {"rm -rf build/tmp\r\n"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("edit: status %d: %s", r.status, r.body)
	}
	got := e.get("ops", bash.ID)
	if got.Decision == nil || got.Decision.Behavior != domain.BehaviorAllow || !got.Decision.Edited {
		t.Fatalf("decision %+v", got.Decision)
	}
	var in map[string]string
	_ = json.Unmarshal(got.Decision.Input, &in)
	if in["command"] != "rm -rf build/tmp\n" || in["description"] != "Remove the build directory" {
		t.Errorf("the edited input is %s", got.Decision.Input)
	}
	if got.EditedAction == nil || got.EditedAction.By == nil || got.EditedAction.By.ID != "local" {
		t.Errorf("edited action %+v", got.EditedAction)
	}
	// Every page shows the outcome with the edit.
	p = c.getPage("/questions/" + bash.ID)
	p.body = html.UnescapeString(p.body)
	if !strings.Contains(p.body, "Allowed with edits") || !strings.Contains(p.body, `<span class="dl add">+rm -rf build/tmp</span>`) ||
		!strings.Contains(p.body, `<span class="dl del">-rm -rf build</span>`) {
		t.Errorf("the answered page does not show the edit:\n%s", p.body)
	}

	// JSON arguments: a textarea; invalid JSON is refused next to the
	// field and nothing typed is lost.
	api := e.ask("ops", apiAction("s-2"))
	p = c.getPage("/questions/" + api.ID)
	if !strings.Contains(p.body, `name="edited_input"`) || !strings.Contains(p.body, "&#34;replicas&#34;: 12") {
		t.Fatal("no JSON edit form pre-filled with the arguments")
	}
	typed := "{\"service\": \"api\", \"replicas\": 4,, }"
	r = actionPost(t, c, api, url.Values{"do": {"edit"}, "edited_input": {typed}})
	if r.status != http.StatusBadRequest {
		t.Fatalf("invalid JSON: status %d", r.status)
	}
	body := html.UnescapeString(r.body)
	if !regexp.MustCompile(`<p class="problem" id="edit-problem-[^"]+">[^<]*not valid JSON[^<]*line 1, column \d+`).MatchString(body) {
		t.Errorf("no plain-word error next to the field:\n%s", body)
	}
	if !strings.Contains(body, ">\n"+typed+"</textarea>") {
		t.Error("what was typed was lost")
	}
	if got := e.get("ops", api.ID); got.Status != domain.StatusPending {
		t.Fatal("invalid JSON was recorded")
	}
	r = actionPost(t, c, api, url.Values{"do": {"edit"}, "edited_input": {`{"service": "api", "replicas": 4, "regions": ["eu-west"]}`}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("edit: status %d", r.status)
	}
	if got := e.get("ops", api.ID); got.Decision == nil || string(got.Decision.Input) != `{"regions":["eu-west"],"replicas":4,"service":"api"}` {
		t.Errorf("decision %+v", got.Decision)
	}

	// A route with allow_edit: false offers no edit form.
	locked := bashAction("s-3", "ls")
	locked.Route = "locked"
	lq := e.ask("ops", locked)
	if p := c.getPage("/questions/" + lq.ID); strings.Contains(p.body, `name="edited_command"`) || !strings.Contains(p.body, "Editing is turned off") {
		t.Error("a route with allow_edit: false offers the edit form, or does not say why not")
	}
}

func TestActionDigestConflict(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	q := e.ask("ops", bashAction("s-1", "rm -rf build"))
	tok := c.csrf("/questions/" + q.ID)
	r := c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {tok}, "return": {"question"}, "a0": {"o0"}, "digest": {"sha256:0123"}})
	if r.status != http.StatusConflict {
		t.Fatalf("a stale digest: status %d", r.status)
	}
	if body := html.UnescapeString(r.body); !strings.Contains(body, "The action changed") || !strings.Contains(body, "decide again") {
		t.Errorf("no clear conflict message:\n%s", body)
	}
	if got := e.get("ops", q.ID); got.Status != domain.StatusPending {
		t.Fatal("a decision on another action was recorded")
	}
	// Allow as asked carries the digest and is recorded as such.
	if r := actionPost(t, c, q, url.Values{"a0": {"o0"}}); r.status != http.StatusSeeOther {
		t.Fatalf("allow: %d", r.status)
	}
	got := e.get("ops", q.ID)
	if got.Decision == nil || got.Decision.Behavior != domain.BehaviorAllow || got.Decision.Edited || got.Decision.Digest != q.Action.Digest {
		t.Fatalf("decision %+v", got.Decision)
	}
	if p := c.getPage("/questions/" + q.ID); !strings.Contains(p.body, "Allowed as asked") {
		t.Error("the page does not say the action was allowed as asked")
	}
}

func TestActionAlwaysAllow(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	q := e.ask("ops", bashAction("s-1", "make release"))
	p := c.getPage("/questions/" + q.ID)
	body := html.UnescapeString(p.body)
	for _, want := range []string{
		`name="rule" value="0"`, "Allow, and don't ask again this session for files in /home/dev/proj/build",
		`name="rule" value="1"`, "Allow, and don't ask again this session for file edits (acceptEdits mode)",
		`name="rule" value="2"`, "Allow, and don't ask again this session for Bash(make release:*)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if r := c.post("/questions/"+q.ID+"/answer", url.Values{"rule": {"2"}}); r.status != http.StatusForbidden {
		t.Errorf("a rule without CSRF token: status %d", r.status)
	}
	if r := actionPost(t, c, q, url.Values{"rule": {"2"}}); r.status != http.StatusSeeOther {
		t.Fatalf("always allow: status %d: %s", r.status, r.body)
	}
	got := e.get("ops", q.ID)
	if got.Decision == nil || got.Decision.Behavior != domain.BehaviorAllow || len(got.Decision.Rules) != 1 ||
		!strings.Contains(string(got.Decision.Rules[0]), `"ruleContent":"make release:*"`) || got.AppliedRule == nil || *got.AppliedRule != 2 {
		t.Fatalf("decision %+v", got.Decision)
	}
	if p := c.getPage("/questions/" + q.ID); !strings.Contains(html.UnescapeString(p.body), "Allowed by local web user, and not asked again this session for Bash(make release:*)") {
		t.Error("the page does not show the rule the action was allowed with")
	}
}

func TestActionDenyWithReasonOneStep(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	q := e.ask("ops", bashAction("s-1", "rm -rf /"))
	p := c.getPage("/questions/" + q.ID)
	// One step: the reason field and its submit button are in one form.
	form := regexp.MustCompile(`(?s)<details class="deny-note"[^>]*>.*?<form (.*?)</form>`).FindStringSubmatch(p.body)
	if form == nil || !strings.Contains(form[1], `<textarea`) || !strings.Contains(form[1], `type="submit"`) || !strings.Contains(form[1], `name="digest"`) {
		t.Fatal("no one-step Deny with note form on an approval with an action")
	}
	if r := c.post("/questions/"+q.ID+"/answer", url.Values{"a0": {"note"}, "t0": {"never"}}); r.status != http.StatusForbidden {
		t.Errorf("a reason without CSRF token: status %d", r.status)
	}
	if r := actionPost(t, c, q, url.Values{"a0": {"note"}, "t0": {"Allow"}}); r.status != http.StatusSeeOther {
		t.Fatalf("deny with reason: %d %s", r.status, r.body)
	}
	got := e.get("ops", q.ID)
	if got.Decision == nil || got.Decision.Behavior != domain.BehaviorDeny || got.Decision.Message != "Allow" || got.Reason != "Allow" {
		t.Fatalf("decision %+v: a reason reading \"Allow\" must still deny, as the agent's feedback", got.Decision)
	}
	if p := c.getPage("/questions/" + q.ID); !strings.Contains(html.UnescapeString(p.body), "Denied with reason: Allow") {
		t.Error("the page does not show the reason")
	}
}

// TestActionEditUnchangedAllowsAsAsked: "Allow with these changes" with
// the arguments as shown (even re-spaced, and with < and & that the
// record stores escaped) allows the action as asked, not as an edit.
func TestActionEditUnchangedAllowsAsAsked(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	q := e.ask("ops", apiAction("s-1"))
	p := c.getPage("/questions/" + q.ID)
	m := regexp.MustCompile(`(?s)name="edited_input"[^>]*>\n(.*?)</textarea>`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatal("no JSON edit form")
	}
	shown := html.UnescapeString(m[1])
	if !strings.Contains(shown, `"note": "<b>peak</b>"`) {
		t.Errorf("the edit form shows escapes instead of the argument: %s", shown)
	}
	if r := actionPost(t, c, q, url.Values{"do": {"edit"}, "edited_input": {shown}}); r.status != http.StatusSeeOther {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := e.get("ops", q.ID)
	if got.Decision == nil || got.Decision.Behavior != domain.BehaviorAllow || got.Decision.Edited || got.EditedAction != nil {
		t.Fatalf("an unchanged edit was recorded as %+v", got.Decision)
	}
	if p := c.getPage("/questions/" + q.ID); !strings.Contains(p.body, "Allowed as asked by local web user") {
		t.Error("the page does not say the action was allowed as asked")
	}
}

// TestActionAutoAllowedAndFlash: an approval a route's auto_allow rule
// approved says so on its page; the confirmation after a decision made on
// the web says how it was decided.
func TestActionAutoAllowedAndFlash(t *testing.T) {
	e := newEnv(t, envOptions{routes: []domain.Route{{Name: "dev", AutoAllow: []string{"Bash(git status*)"}}}})
	c := e.client()
	req := bashAction("s-1", "git status --short")
	req.Route = "dev"
	q := e.ask("ops", req)
	if got := e.get("ops", q.ID); got.Status != domain.StatusAnswered {
		t.Fatalf("auto_allow did not answer: %s", got.Status)
	}
	if p := c.getPage("/questions/" + q.ID); !strings.Contains(html.UnescapeString(p.body), "Allowed automatically by the rule Bash(git status*)") {
		t.Error("the page does not name the rule that allowed the action")
	}

	b := e.ask("ops", bashAction("s-2", "rm -rf build"))
	r := actionPost(t, c, b, url.Values{"do": {"edit"}, "edited_command": {"rm -rf build/tmp"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("edit: %d", r.status)
	}
	p := c.getPage(r.location)
	if flash := html.UnescapeString(p.body); !strings.Contains(flash, `Decided “Allow Bash?”: Allowed with edits by you.`) {
		t.Errorf("the confirmation does not say the action was allowed with edits")
	}
}

// TestActionStaleEditKept: an edit sent after the approval was decided
// elsewhere is not recorded, and the page shows what was typed.
func TestActionStaleEditKept(t *testing.T) {
	e := newEnv(t, envOptions{})
	c := e.client()
	q := e.ask("ops", bashAction("s-1", "rm -rf build"))
	tok := c.csrf("/questions/" + q.ID)
	if _, err := e.router.Answer(context.Background(), "ops", q.ID, domain.RespondRequest{Response: ptr("Deny")},
		domain.Person{Platform: "slack", ID: "U1", Name: "maria"}); err != nil {
		t.Fatal(err)
	}
	r := c.post("/questions/"+q.ID+"/answer", url.Values{"csrf": {tok}, "return": {"question"}, "digest": {q.Action.Digest},
		"do": {"edit"}, "edited_command": {"rm -rf build/cache-only"}})
	if r.status != http.StatusConflict {
		t.Fatalf("status %d", r.status)
	}
	body := html.UnescapeString(r.body)
	if !strings.Contains(body, "already answered by maria (Slack)") || !strings.Contains(body, "Your edit (not sent):") || !strings.Contains(body, "rm -rf build/cache-only") {
		t.Errorf("the stale edit is not kept on the page:\n%s", body)
	}
	if got := e.get("ops", q.ID); got.Decision == nil || got.Decision.Behavior != domain.BehaviorDeny {
		t.Errorf("decision %+v", got.Decision)
	}
}
