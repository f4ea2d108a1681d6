package teams

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// The golden set: every shape of card the adapter renders, pending and
// final, and the largest shapes the domain admits. The validators
// (card_schema_test.go) check every one of them.

func opt(label, desc string) domain.Option { return domain.Option{Label: label, Description: desc} }

// long is a text of n characters that starts with what a person would
// recognise.
func long(start string, n int) string {
	s := start + " " + strings.Repeat("lorem ipsum ", n/12+1)
	return string([]rune(s)[:n])
}

// build turns an ask into the pending question the bridge would store.
func build(t testing.TB, req domain.AskRequest) *domain.Question {
	t.Helper()
	q, _, err := domain.BuildQuestion(&req, domain.AskDefaults{
		Targets: []domain.Target{{Platform: "teams", Channel: "19:abc@thread.tacv2"}},
		Timeout: 30 * time.Minute,
	}, false)
	if err != nil {
		t.Fatalf("building a question: %v", err)
	}
	q.ID = "q_" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_")
	q.ProjectID = "ops"
	q.RunID = "run-7"
	q.AgentID = "deploy-bot"
	q.Status = domain.StatusPending
	q.CreatedAt = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	q.ExpiresAt = q.CreatedAt.Add(30 * time.Minute)
	return q
}

var alice = &domain.Person{Platform: "teams", ID: "00000000-0000-0000-0000-0000000000a1", Name: "Alice Martin"}

func answered(q *domain.Question, answers map[string]string) *domain.Question {
	c := *q
	c.Status = domain.StatusAnswered
	c.Answers = answers
	c.RespondedBy = alice
	at := q.CreatedAt.Add(time.Minute)
	c.RespondedAt = &at
	return &c
}

func authItem() domain.Item {
	return domain.Item{Question: "Which auth method?", Header: "Auth", Options: []domain.Option{
		opt("OAuth 2.0", "Standard"), opt("API key", "Simple")}}
}

const bigDiffLines = 3000

// editAction is a Claude Code Edit of n changed lines.
func editAction(n int) *domain.Action {
	var old, nw strings.Builder
	for i := range n {
		fmt.Fprintf(&old, "\tlimit := %d // old line %d\n", i, i)
		fmt.Fprintf(&nw, "\tlimit := %d // new line %d\n", i*2, i)
	}
	in, _ := json.Marshal(map[string]any{"file_path": "/srv/api/limits.go", "old_string": old.String(), "new_string": nw.String()})
	return &domain.Action{Tool: "Edit", Input: in}
}

func bashAction(cmd string, suggestions ...string) *domain.Action {
	in, _ := json.Marshal(map[string]string{"command": cmd, "description": "Deploy"})
	a := &domain.Action{Tool: "Bash", Input: in}
	for _, s := range suggestions {
		a.Suggestions = append(a.Suggestions, json.RawMessage(s))
	}
	return a
}

type shape struct {
	name string
	q    *domain.Question
	view CardView
}

// goldenShapes is every card shape, named.
func goldenShapes(t testing.TB) []shape {
	var out []shape
	add := func(name string, q *domain.Question, v CardView) {
		out = append(out, shape{name, q, v})
	}
	view := CardView{PublicURL: "https://bridge.example.com"}
	approve := []domain.Option{opt("Allow", ""), opt("Deny", "")}
	img := func(alt string) *domain.Image {
		return &domain.Image{URL: "https://img.example.com/" + alt + ".png", Alt: alt}
	}

	single := build(t, domain.AskRequest{Questions: []domain.Item{authItem()}})
	add("single-select", single, view)
	add("single-select-viewer", single, CardView{PublicURL: view.PublicURL, Viewer: "29:1abc"})
	add("single-select-refused", single, CardView{Viewer: "29:1xyz", Refused: "Only Alice Martin may answer or dismiss this question. This changed nothing."})
	add("single-select-answered", answered(single, map[string]string{"Which auth method?": "API key"}), view)

	rules := build(t, domain.AskRequest{Questions: []domain.Item{{Question: "Which ticket?", Header: "Ticket",
		Options: []domain.Option{opt("OPS-1", ""), {Label: "OPS-2", Recommended: true, Default: true}},
		Other:   &domain.FreeTextRules{Pattern: `OPS-[0-9]+`, MaxLength: 12, Hint: "a ticket id like OPS-123"}}}})
	add("single-select-rules-defaults", rules, view)

	multi := build(t, domain.AskRequest{Questions: []domain.Item{{Question: "Which regions?", Header: "Regions", MultiSelect: true,
		Options: []domain.Option{opt("eu-west", ""), {Label: "us-east", Default: true}, opt("ap-south", "")}}}})
	add("multi-select", multi, view)
	add("multi-select-answered", answered(multi, map[string]string{"Which regions?": "eu-west, us-east"}), view)

	open := build(t, domain.AskRequest{Questions: []domain.Item{{Question: "What should the release be called?",
		Other: &domain.FreeTextRules{MinLength: 3, MaxLength: 40, Pattern: `[a-z-]+`, Hint: "lower case and dashes"}}}})
	add("open-ended", open, view)
	add("open-ended-answered", answered(open, map[string]string{"What should the release be called?": "quiet-otter"}), view)

	adaptive := build(t, domain.AskRequest{
		Context:      "Rolling out the **new** auth stack.",
		ContextImage: img("architecture"),
		Questions: []domain.Item{
			{Question: "Which auth method?", Header: "Auth", Image: img("auth-flow"), Options: []domain.Option{
				{Label: "OAuth 2.0", Description: "Standard", Image: img("oauth")}, {Label: "API key", Default: true, Image: img("key")}}},
			{Question: "Which scopes?", Header: "Scopes", MultiSelect: true, ShowIf: &domain.ShowIf{Item: 0, AnyOf: []string{"OAuth 2.0"}},
				Options: []domain.Option{opt("read", ""), opt("write", ""), opt("admin", "")}},
			{Question: "How many replicas?", Header: "Replicas", Other: &domain.FreeTextRules{Number: &domain.NumberRule{Integer: true, Min: ptr(1.0), Max: ptr(9.0)}}},
			{Question: "Anything else?", Header: "Notes", ShowIf: &domain.ShowIf{Item: 0, NoneOf: []string{"API key"}}},
		}})
	adaptive.History = []domain.PastAnswer{{QuestionID: "q_old", Answer: "API key", RespondedBy: alice, RespondedAt: time.Now().Add(-48 * time.Hour)}}
	adaptive.Remarks = []domain.Remark{{Text: "Page acknowledged by Bob on PagerDuty"}}
	adaptive.Responders = domain.Responders{Users: []string{"teams:" + alice.ID}}
	add("adaptive-form", adaptive, view)
	add("adaptive-form-answered", answered(adaptive, map[string]string{"Which auth method?": "OAuth 2.0", "Which scopes?": "read", "How many replicas?": "3", "Anything else?": "no"}), view)

	four := make([]domain.Item, domain.MaxItems)
	for i := range four {
		four[i] = domain.Item{Question: fmt.Sprintf("Question %d of four?", i+1), Header: fmt.Sprintf("Q%d", i+1), MultiSelect: i == 1}
		for j := range domain.MaxOptions {
			four[i].Options = append(four[i].Options, opt(fmt.Sprintf("Choice %d.%d", i+1, j+1), "about it"))
		}
	}
	add("four-by-four", build(t, domain.AskRequest{Questions: four}), view)

	gate := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Deploy api v2.14 to production?", Options: []domain.Option{opt("Approve", ""), opt("Deny", "")}})
	add("approval", gate, view)
	denied := answered(gate, map[string]string{"Deploy api v2.14 to production?": "Deny"})
	denied.Reason = "Not during the freeze."
	add("approval-denied-with-note", denied, view)

	votes := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Rotate the root keys?", Options: []domain.Option{opt("Approve", ""), {Label: "Veto", Veto: true}},
		ApprovalsRequired: ptr(2)})
	votes.Votes = []domain.Vote{{By: *alice, Label: "Approve", At: votes.CreatedAt}}
	add("approval-votes", votes, view)

	bash := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Run this command?", Options: approve,
		Action: bashAction("kubectl rollout restart deploy/api -n prod",
			`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"kubectl rollout:*"}],"behavior":"allow","destination":"localSettings"}`,
			`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)})
	add("approval-bash", bash, view)
	add("approval-bash-no-edit", bash, CardView{PublicURL: view.PublicURL, NoEdit: true})
	edited := answered(bash, map[string]string{"Run this command?": "Allow"})
	newIn, _ := json.Marshal(map[string]string{"command": "kubectl rollout restart deploy/api -n staging", "description": "Deploy"})
	edited.Decision = &domain.Decision{Behavior: domain.BehaviorAllow, Input: newIn, Edited: true}
	add("approval-bash-allowed-edited", edited, view)

	diff := build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Apply this edit?", Options: approve, Action: editAction(12)})
	add("approval-diff", diff, view)

	cancelled := *single
	cancelled.Status, cancelled.CancelReason, cancelled.CancelNote, cancelled.RespondedBy = domain.StatusCancelled, domain.CancelUser, "not needed", alice
	add("dismissed", &cancelled, view)
	expired := *single
	expired.Status = domain.StatusExpired
	add("expired", &expired, view)
	superseded := *single
	superseded.Status, superseded.CancelReason = domain.StatusCancelled, domain.CancelSuperseded
	add("superseded", &superseded, view)
	defaulted := answered(rules, map[string]string{"Which ticket?": "OPS-2"})
	defaulted.Defaulted, defaulted.RespondedBy = true, nil
	add("defaulted", defaulted, view)

	// The largest shapes.
	longest := make([]domain.Item, domain.MaxItems)
	for i := range longest {
		longest[i] = domain.Item{Question: long(fmt.Sprintf("Long question %d", i+1), domain.MaxQuestionLen),
			Header: long("H", domain.MaxHeaderLen), MultiSelect: i%2 == 1}
		for j := range domain.MaxOptions {
			longest[i].Options = append(longest[i].Options, domain.Option{
				Label:       long(fmt.Sprintf("Label %d.%d", i+1, j+1), domain.MaxLabelLen),
				Description: long("Description", domain.MaxDescriptionLen),
				Value:       long(fmt.Sprintf("v%d%d", i, j), domain.MaxValueLen)})
		}
	}
	largest := build(t, domain.AskRequest{Questions: longest, Context: long("Context", domain.MaxContextLen), AgentName: long("Agent", domain.MaxIDLen)})
	add("largest-form", largest, view)
	add("largest-form-no-public-url", largest, CardView{})
	wide := make([]domain.Item, len(longest))
	for i, it := range longest {
		it.Question = fmt.Sprint(i) + strings.Repeat("問", domain.MaxQuestionLen-1)
		wide[i] = it
	}
	add("largest-form-cjk", build(t, domain.AskRequest{Questions: wide, Context: strings.Repeat("文", domain.MaxContextLen)}), view)
	add("largest-diff", build(t, domain.AskRequest{Kind: domain.KindApproval, Question: long("Apply this edit?", domain.MaxQuestionLen),
		Context: long("Context", domain.MaxContextLen), Options: approve, Action: editAction(bigDiffLines)}), view)
	var sugg []string
	for i := range domain.MaxSuggestions {
		sugg = append(sugg, fmt.Sprintf(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"%s:*"}],"behavior":"allow","destination":"localSettings"}`, long(fmt.Sprintf("tool%d", i), 300)))
	}
	add("largest-command", build(t, domain.AskRequest{Kind: domain.KindApproval, Question: "Run this command?", Options: approve,
		Action: bashAction(long("psql -c", 200000), sugg...)}), view)
	var picItems []domain.Item
	bigImg := func(c string) *domain.Image {
		return &domain.Image{URL: "https://img.example.com/" + strings.Repeat(c, domain.MaxImageURLLen-40), Alt: long("alt", domain.MaxImageAltLen)}
	}
	for i := range domain.MaxItems {
		it := domain.Item{Question: fmt.Sprintf("Picture question %d?", i+1), Header: fmt.Sprintf("P%d", i+1), Image: bigImg("i")}
		for j := range domain.MaxOptions {
			it.Options = append(it.Options, domain.Option{Label: fmt.Sprintf("Pic %d", j+1), Image: bigImg("o")})
		}
		picItems = append(picItems, it)
	}
	pics := build(t, domain.AskRequest{Context: "Pick one", ContextImage: bigImg("c"), Questions: picItems})
	add("largest-pictures", pics, view)
	return out
}

func ptr[T any](v T) *T { return &v }
