package discord

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// Approvals of a tool call (issue 18) on Discord: the exact action in
// full or explicitly linked, edit before approve, "always allow", deny
// with a reason, and the outcome on the copy.

const publicURL = "https://bridge.example.com"

func withPublicURL(_ *lifecycle.RouterConfig, c *Config) { c.PublicURL = publicURL }

// bashFixture is Claude Code's captured Bash PermissionRequest.
func bashFixture(t *testing.T) *domain.Action {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "agent", "hook", "testdata", "claude-code", "permissionrequest-bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		ToolName    string            `json:"tool_name"`
		ToolInput   json.RawMessage   `json:"tool_input"`
		Suggestions []json.RawMessage `json:"permission_suggestions"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return &domain.Action{Tool: ev.ToolName, Input: ev.ToolInput, Suggestions: ev.Suggestions}
}

func askAction(e *env, a *domain.Action, route string) *domain.Question {
	e.t.Helper()
	req := &domain.AskRequest{RunID: "sess-1", Kind: domain.KindApproval, Route: route, Action: a, Questions: []domain.Item{{
		Question: "Allow " + a.Tool + "?", Header: "Approval",
		Options: []domain.Option{{Label: "Allow"}, {Label: "Deny"}}}}}
	return e.ask(req)
}

func embedText(m *fakediscord.Message) string {
	var b strings.Builder
	for _, e := range m.Embeds {
		b.WriteString(e.Title + "\n" + e.Description + "\n")
		for _, f := range e.Fields {
			b.WriteString(f.Name + "\n" + f.Value + "\n")
		}
	}
	return b.String()
}

func hasButton(m *fakediscord.Message, label string) bool {
	for _, row := range m.Components {
		for _, c := range row.Components {
			if c.Type == 2 && c.Label == label {
				return true
			}
		}
	}
	return false
}

// TestBashApprovalShowsCommandAndAlwaysAllow: the captured Bash
// PermissionRequest shows its command in a code block and every argument;
// each suggestion is a button that says in words what stops being asked;
// pressing one allows with that rule, and the copy says so.
func TestBashApprovalShowsCommandAndAlwaysAllow(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t), withPublicURL)
	q := askAction(e, bashFixture(t), "")
	msg := e.copyOf(q)
	m := f.Message(msg)
	text := embedText(m)
	for _, want := range []string{"Bash", "```sh\nrm -rf build\n```", "Remove the build directory"} {
		if !strings.Contains(text, want) {
			t.Errorf("the copy does not show %q:\n%s", want, text)
		}
	}
	dirs := "Allow, and don't ask again this session for files in /home/dev/proj/build"
	mode := "Allow, and don't ask again this session for file edits (acceptEdits mode)"
	for _, l := range []string{dirs, mode} {
		if !hasButton(m, l) {
			t.Errorf("no always-allow button %q", l)
		}
	}
	f.Click(alice, msg, mode)
	final := e.wait(q)
	if final.Decision == nil || final.Decision.Behavior != domain.BehaviorAllow || len(final.Decision.Rules) != 1 ||
		!strings.Contains(string(final.Decision.Rules[0]), "acceptEdits") || final.AppliedRule == nil || *final.AppliedRule != 1 {
		t.Fatalf("decision %+v, applied rule %v; want allow with the setMode rule (index 1)", final.Decision, final.AppliedRule)
	}
	e.settle()
	e.assertFinished(msg, "✅ Allowed by alice, and not asked again this session for file edits (acceptEdits mode)")
}

// bigEdit is an Edit of 300 changed lines.
func bigEdit() *domain.Action {
	var o, n strings.Builder
	for i := range 300 {
		fmt.Fprintf(&o, "\tvalue%03d := compute(%d) // old\n", i, i)
		fmt.Fprintf(&n, "\tvalue%03d := computeFast(%d) // new\n", i, i)
	}
	in, _ := json.Marshal(map[string]any{"file_path": "/home/dev/proj/main.go", "old_string": o.String(), "new_string": n.String()})
	return &domain.Action{Tool: "Edit", Input: in}
}

// TestEditApprovalWithLongDiffSaysWhatIsShownAndLinks: a 300-changed-line
// diff cannot fit a Discord message; the copy shows the head of it in a
// diff block, says how many lines there are and how many are shown, and
// links to the question page. Without a public URL it names the command
// that shows it all. Editing such arguments in a modal is not possible
// and the person is told where to do it.
func TestEditApprovalWithLongDiffSaysWhatIsShownAndLinks(t *testing.T) {
	for _, linked := range []bool{true, false} {
		t.Run(fmt.Sprint("linked=", linked), func(t *testing.T) {
			f := fakediscord.New(t)
			var opts []envOption
			if linked {
				opts = append(opts, withPublicURL)
			}
			e := newEnv(t, f, newTestStore(t), opts...)
			q := askAction(e, bigEdit(), "")
			total := strings.Count(q.Action.Diff, "\n")
			msg := e.copyOf(q)
			text := embedText(f.Message(msg))
			if !strings.Contains(text, "```diff\n--- a/home/dev/proj/main.go\n+++ b/home/dev/proj/main.go\n") {
				t.Errorf("no diff block:\n%s", text)
			}
			if !strings.Contains(text, "@@ -1,300 +1,300 @@\n-\tvalue000 := compute(0) // old\n-\tvalue001") {
				t.Errorf("the diff's first change is not shown:\n%s", text)
			}
			if !strings.Contains(text, "\n+\tvalue000 := computeFast(0) // new\n") || !strings.Contains(text, "more removed lines\n") {
				t.Errorf("the new side of the change is not shown, or the cut is not marked:\n%s", text)
			}
			block := text[strings.Index(text, "```diff\n")+8:]
			block = block[:strings.Index(block, "```")]
			shown := strings.Count(block, "\n") - strings.Count(block, "⋯ ")
			if shown < 20 || shown >= total {
				t.Fatalf("%d of %d diff lines shown", shown, total)
			}
			where := "`askbridge questions show " + q.ID + "`"
			if linked {
				where = publicURL + "/questions/" + q.ID
			}
			if want := fmt.Sprintf("diff: %d lines, %d shown — full action: %s", total, shown, where); !strings.Contains(text, want) {
				t.Errorf("the copy does not say %q:\n%s", want, text[len(text)-min(400, len(text)):])
			}
			r := f.Click(alice, msg, "Edit…")
			if r.Type != 4 || r.Data == nil || !strings.Contains(Deref(r.Data.Content), "too long to edit in Discord") ||
				(linked && !strings.Contains(Deref(r.Data.Content), where)) {
				t.Errorf("Edit… of long arguments answered %d %q", r.Type, Deref(r.Data.Content))
			}
		})
	}
}

func Deref(s *string) string { return fakediscord.Deref(s) }

func apiAction() *domain.Action {
	return &domain.Action{Tool: "deploy", Input: json.RawMessage(`{"service":"api","replicas":3,"env":{"REGION":"eu-west-1"}}`)}
}

// TestAPIApprovalShowsJSONAndEditReachesDecision: an API approval shows
// its arguments as pretty JSON; "Edit…" opens a modal with them; bad JSON
// is refused in plain words with nothing recorded; edited JSON allows
// the action with the edited arguments, and the copy says what changed.
func TestAPIApprovalShowsJSONAndEditReachesDecision(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := askAction(e, apiAction(), "")
	msg := e.copyOf(q)
	text := embedText(f.Message(msg))
	if !strings.Contains(text, "Tool: `deploy`") || !strings.Contains(text, "```json\n{\n  \"env\": {\n    \"REGION\": \"eu-west-1\"\n  },\n  \"replicas\": 3,\n  \"service\": \"api\"\n}\n```") {
		t.Errorf("the copy does not show the arguments in full:\n%s", text)
	}
	modal := f.Click(alice, msg, "Edit…")
	if modal.Type != 9 {
		t.Fatalf("Edit… answered type %d, want a modal", modal.Type)
	}
	if v := (*modal.Data.Components)[0].Components[0].Value; !strings.Contains(v, `"replicas": 3`) {
		t.Errorf("the modal is not pre-filled with the arguments: %q", v)
	}
	r := f.SubmitModal(alice, msg, modal, `{"service": "api", "replicas": `)
	if r.Type != 4 || r.Data.Flags&64 == 0 || !strings.Contains(Deref(r.Data.Content), "not valid JSON") || !strings.Contains(Deref(r.Data.Content), "nothing was recorded") {
		t.Errorf("bad JSON answered %d %q", r.Type, Deref(r.Data.Content))
	}
	if cur, _ := e.router.Question(t.Context(), "ops", q.ID); cur.Status != domain.StatusPending {
		t.Fatalf("bad JSON changed the question to %s", cur.Status)
	}
	f.SubmitModal(alice, msg, modal, `{"service": "api", "replicas": 5, "env": {"REGION": "eu-west-1"}}`)
	final := e.wait(q)
	d := final.Decision
	if d == nil || d.Behavior != domain.BehaviorAllow || !d.Edited || string(d.Input) != `{"env":{"REGION":"eu-west-1"},"replicas":5,"service":"api"}` {
		t.Fatalf("decision %+v", d)
	}
	if final.EditedAction == nil || final.EditedAction.By == nil || final.EditedAction.By.ID != alice.ID {
		t.Errorf("edited action %+v", final.EditedAction)
	}
	e.settle()
	e.assertFinished(msg, "✅ Allowed with edits by alice: replicas: 3 → 5")
}

// TestBashEditModalEditsTheCommand: the modal of a Bash approval holds the
// command; the edited command reaches the decision with the other
// arguments kept.
func TestBashEditModalEditsTheCommand(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := askAction(e, bashFixture(t), "")
	msg := e.copyOf(q)
	modal := f.Click(alice, msg, "Edit…")
	if modal.Type != 9 || (*modal.Data.Components)[0].Components[0].Value != "rm -rf build" {
		t.Fatalf("Edit… answered %d %+v", modal.Type, modal.Data)
	}
	f.SubmitModal(alice, msg, modal, "rm -rf build/cache")
	final := e.wait(q)
	if d := final.Decision; d == nil || !d.Edited || string(d.Input) != `{"command":"rm -rf build/cache","description":"Remove the build directory"}` {
		t.Fatalf("decision %+v", final.Decision)
	}
	e.settle()
	e.assertFinished(msg, "✅ Allowed with edits by alice: command: `rm -rf build` → `rm -rf build/cache`")
}

// TestNoEditButtonWhenRouteForbids: a route with allow_edit: false offers
// no "Edit…".
func TestNoEditButtonWhenRouteForbids(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t), func(rc *lifecycle.RouterConfig, _ *Config) {
		rc.Routes = append(rc.Routes, domain.Route{Name: "strict", NoEdit: true, Targets: []domain.Target{{Platform: "discord", Channel: "1000"}}})
	})
	q := askAction(e, bashFixture(t), "strict")
	m := f.Message(e.copyOf(q))
	if hasButton(m, "Edit…") {
		t.Errorf("route strict (allow_edit: false) shows Edit…")
	}
	if !hasButton(m, "Allow") || !hasButton(m, "Deny with note…") {
		t.Errorf("the approval lost its buttons")
	}
}

// TestActionDenyWithReason: "Deny with note…" denies the action in one
// step and the note is the agent's feedback.
func TestActionDenyWithReason(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := askAction(e, bashFixture(t), "")
	msg := e.copyOf(q)
	modal := f.Click(alice, msg, "Deny with note…")
	f.SubmitModal(alice, msg, modal, "use make clean instead")
	final := e.wait(q)
	if d := final.Decision; d == nil || d.Behavior != domain.BehaviorDeny || d.Message != "use make clean instead" {
		t.Fatalf("decision %+v", final.Decision)
	}
	e.settle()
	e.assertFinished(msg, "⛔ Denied with a note by alice: use make clean instead")
}

// TestActionAllowedAsAsked: the plain Allow button allows the action as
// asked, and the copy says so.
func TestActionAllowedAsAsked(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := askAction(e, bashFixture(t), "")
	msg := e.copyOf(q)
	f.Click(alice, msg, "Allow")
	final := e.wait(q)
	if d := final.Decision; d == nil || d.Behavior != domain.BehaviorAllow || d.Edited || string(d.Input) != string(q.Action.Input) {
		t.Fatalf("decision %+v", final.Decision)
	}
	e.settle()
	e.assertFinished(msg, "✅ Allowed by alice as asked")
}

// TestManyLongSuggestionsStayWithinLimits: twenty always-allow
// suggestions with long rules still make a message Discord accepts (five
// rows, labels of at most 80 characters); every rule whose button was
// shortened or found no room is listed in full in the embed.
func TestManyLongSuggestionsStayWithinLimits(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t), withPublicURL)
	a := bashFixture(t)
	a.Suggestions = nil
	for i := range 20 {
		a.Suggestions = append(a.Suggestions, json.RawMessage(fmt.Sprintf(
			`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"./scripts/very/long/path/to/a/tool-number-%02d --with-flags:*"}],"behavior":"allow","destination":"session"}`, i)))
	}
	q := askAction(e, a, "")
	msg := e.copyOf(q)
	m := f.Message(msg)
	if len(m.Components) > 5 {
		t.Fatalf("%d rows", len(m.Components))
	}
	text := embedText(m)
	for i := range 20 {
		if !strings.Contains(text, fmt.Sprintf("Bash(./scripts/very/long/path/to/a/tool-number-%02d --with-flags:*)", i)) {
			t.Errorf("rule %d is not shown in full", i)
		}
	}
	if !strings.Contains(text, "no room for its button: choose it at "+publicURL+"/questions/"+q.ID) {
		t.Errorf("the rules without a button do not say where to choose them:\n%s", text)
	}
	if len(f.Violations()) > 0 {
		t.Fatalf("violations: %v", f.Violations())
	}
}

// TestEditOfAnotherActionIsRefused: an edit modal opened on another
// action (its custom_id carries the digest the person saw) records
// nothing and says why.
func TestEditOfAnotherActionIsRefused(t *testing.T) {
	f := fakediscord.New(t)
	e := newEnv(t, f, newTestStore(t))
	q := askAction(e, apiAction(), "")
	msg := e.copyOf(q)
	modal := f.Click(alice, msg, "Edit…")
	id := modal.Data.CustomID
	if !strings.HasSuffix(id, ":"+strings.TrimPrefix(q.Action.Digest, "sha256:")[:16]) {
		t.Fatalf("the edit modal's custom_id %q does not carry the digest shown", id)
	}
	modal.Data.CustomID = id[:len(id)-16] + "0123456789abcdef"
	r := f.SubmitModal(alice, msg, modal, `{"service": "api", "replicas": 5}`)
	if r.Type != 4 || !strings.Contains(Deref(r.Data.Content), "action changed") || !strings.Contains(Deref(r.Data.Content), "nothing was recorded") {
		t.Errorf("an edit of another action answered %d %q", r.Type, Deref(r.Data.Content))
	}
	if cur, _ := e.router.Question(t.Context(), "ops", q.ID); cur.Status != domain.StatusPending {
		t.Fatalf("the question is %s", cur.Status)
	}
}
