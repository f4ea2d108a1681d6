package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/domain/textdiff"
)

// An approval that carries the exact action (domain.Action: the tool and its
// arguments) is shown whole on the web: the command or the pretty-printed
// arguments, never truncated, and a coloured unified diff for file edits.
// Its card offers, beside Allow / Deny, "Edit, then allow…" (a form
// pre-filled with the command or the JSON arguments; the route may turn it
// off with allow_edit: false), one "Allow, and don't ask again …" choice
// per suggestion the agent offered, and "Deny with note…", whose note is
// the reason the agent gets. Every form carries the digest of the action
// the person saw, so a decision binds to that action only.

// inboxDiffLines is how many diff lines an inbox card shows before the
// rest goes behind a <details>; the question page shows them all.
const inboxDiffLines = 24

// inboxEditBytes bounds the arguments an inbox card offers to edit in
// place; longer ones are edited on the question page.
const inboxEditBytes = 16 << 10

// actionView is an approval's action as the templates show it.
type actionView struct {
	ID, CSRF, Return string
	Tool, Digest     string
	// Command is a Bash call's command; Rest the other arguments as
	// pretty JSON ("" when there are none).
	Command, Rest string
	// Pretty is the whole arguments as indented JSON.
	Pretty string
	// Diff is a file edit's unified diff, split for the page: Shown
	// always, Hidden behind a <details> on inbox cards.
	Shown, Hidden   []diffLine
	Added, Removed  int
	HasDiff, Inbox  bool
	Pending         bool
	CanEdit, NoEdit bool
	// EditHere: the form is on this card (else a link to the page).
	EditHere bool
	// EditField is the form field: "edited_command" or "edited_input";
	// EditValue pre-fills it (what the person typed, after a refusal).
	EditField, EditValue string
	EditOpen             bool
	Problem              string // what is wrong with the edit, after a refusal
	// Unsent is an edit whose form came after the approval was decided
	// elsewhere: kept on the page so nothing typed is lost.
	Unsent string
	Rules  []ruleView
	// Outcome, once answered: what was decided, in words, and for an
	// edit the arguments that ran and how they differ from the asked ones.
	Outcome  string
	Reason   string
	Edited   string // the edited command or pretty arguments
	EditDiff []diffLine
	// EditedFile is the file edit the edited arguments make, for file
	// edits: shown as the diff that runs, the JSON behind a <details>.
	EditedFile []diffLine
}

// diffLine is one line of a unified diff: Kind is "add", "del", "hunk",
// "file" or "ctx" (CSS classes); Text keeps its +, - or space prefix, so
// lines differ without colour too.
type diffLine struct{ Kind, Text string }

// ruleView is one "always allow" suggestion offered as a choice.
type ruleView struct {
	Index int
	Label string
}

// actionView builds the view of q's action; nil when q carries none.
func (i *Inbox) actionView(q *domain.Question, prev url.Values, v *viewer, ret string) *actionView {
	a := q.Action
	if a == nil || !approval.Is(q) {
		return nil
	}
	av := &actionView{ID: q.ID, CSRF: v.CSRF, Return: ret, Tool: a.Tool, Digest: a.Digest, Inbox: ret == "inbox",
		Pending: q.Status == domain.StatusPending, Pretty: actiontext.Pretty(a.Input)}
	if cmd, rest, ok := bashCommand(a); ok {
		av.Command, av.Rest = cmd, rest
		av.EditField, av.EditValue = "edited_command", cmd
	} else {
		av.EditField, av.EditValue = "edited_input", av.Pretty
	}
	if a.Diff != "" {
		lines := splitDiff(a.Diff)
		av.HasDiff = true
		for _, l := range lines {
			switch l.Kind {
			case "add":
				av.Added++
			case "del":
				av.Removed++
			}
		}
		av.Shown = lines
		if av.Inbox && len(lines) > inboxDiffLines+5 {
			av.Shown, av.Hidden = lines[:inboxDiffLines], lines[inboxDiffLines:]
		}
	}
	if av.Pending && q.ApprovalsRequired < 2 {
		rt, ok := i.router.Route(q.Route)
		av.NoEdit = !domain.EditAllowed(q, ok && rt.NoEdit)
		av.CanEdit = !av.NoEdit
		av.EditHere = !av.Inbox || len(a.Input) <= inboxEditBytes
		if prev != nil && prev.Get("do") == "edit" {
			av.EditValue, av.EditOpen = prev.Get(av.EditField), true
		}
		for n, s := range a.Suggestions {
			where, what := ruleWords(s)
			av.Rules = append(av.Rules, ruleView{Index: n, Label: "Allow, and don't ask again " + where + what})
		}
	}
	if prev != nil && !av.Pending && prev.Get("do") == "edit" {
		av.Unsent = prev.Get(av.EditField)
	}
	if q.Status == domain.StatusAnswered && q.Decision != nil {
		av.outcome(q)
	}
	return av
}

// deniedReason is the reason a person gave with a denial: the record's
// reason (Deny with note), or text sent as the answer; "" for neither.
func deniedReason(q *domain.Question) string {
	if q.Reason != "" {
		return q.Reason
	}
	if _, isOption := domain.MatchOption(q.Questions[0], q.Answers[q.Questions[0].Question]); q.Decision != nil && !isOption {
		return q.Decision.Message
	}
	return ""
}

// outcome describes an answered action's decision.
func (av *actionView) outcome(q *domain.Question) {
	d := q.Decision
	switch {
	case d.Behavior != domain.BehaviorAllow:
		av.Outcome = "Denied"
		if r := deniedReason(q); r != "" {
			av.Outcome, av.Reason = "Denied with reason: "+r, r
		}
	case d.AutoRule != "":
		av.Outcome = "Allowed automatically by the rule " + d.AutoRule
	case d.Edited && q.EditedAction != nil:
		av.Outcome = "Allowed with edits"
		e := &domain.Action{Tool: q.Action.Tool, Input: q.EditedAction.Input}
		if cmd, _, ok := bashCommand(e); ok {
			old, _, _ := bashCommand(q.Action)
			av.Edited = cmd
			av.EditDiff = splitDiff(textdiff.Hunks(old, cmd, 1, 1))
		} else {
			av.Edited = actiontext.Pretty(e.Input)
			av.EditDiff = splitDiff(textdiff.Hunks(av.Pretty, av.Edited, 1, 1))
			if q.Action.Diff != "" {
				av.EditedFile = splitDiff(domain.ActionDiff(e.Tool, e.Input))
			}
		}
	default:
		av.Outcome = "Allowed as asked"
	}
	if d.Behavior == domain.BehaviorAllow && len(d.Rules) > 0 {
		where, what := ruleWords(d.Rules[0])
		if av.Outcome == "Allowed as asked" {
			av.Outcome = "Allowed"
		}
		av.Outcome += ", and not asked again " + where + what
	}
}

// decisionLine is the outcome line of an answered approval with an
// action ("Allowed with edits by maria (Slack)"), or "" for any other
// question.
func decisionLine(q *domain.Question, by string) string {
	if q.Action == nil || q.Decision == nil || q.Status != domain.StatusAnswered || q.ApprovalsRequired > 1 || q.Defaulted {
		return ""
	}
	d := q.Decision
	switch {
	case d.Behavior != domain.BehaviorAllow:
		if deniedReason(q) != "" {
			return "Denied by " + by + " with a reason"
		}
		return "Denied by " + by
	case d.AutoRule != "":
		return "Allowed automatically by the rule " + d.AutoRule
	case d.Edited:
		return "Allowed with edits by " + by
	case len(d.Rules) > 0:
		where, what := ruleWords(d.Rules[0])
		return "Allowed by " + by + ", and not asked again " + where + what
	}
	return "Allowed as asked by " + by
}

// bashCommand returns a Bash call's command and its other arguments as
// pretty JSON.
func bashCommand(a *domain.Action) (cmd, rest string, ok bool) {
	cmd, others, ok := actiontext.SplitCommand(a.Tool, a.Input)
	if ok && len(others) > 0 {
		b, _ := json.Marshal(others)
		rest = actiontext.Pretty(b)
	}
	return cmd, rest, ok
}

// splitDiff splits a unified diff into classified lines.
func splitDiff(diff string) []diffLine {
	var out []diffLine
	inHunk := false
	for _, l := range textdiff.Lines(diff) {
		k := "ctx"
		switch {
		case strings.HasPrefix(l, "@@"):
			k, inHunk = "hunk", true
		case !inHunk && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")):
			k = "file"
		case strings.HasPrefix(l, "+"):
			k = "add"
		case strings.HasPrefix(l, "-"):
			k = "del"
		}
		out = append(out, diffLine{Kind: k, Text: l})
	}
	return out
}

// ruleWords describes one "always allow" rule (Claude Code's
// permission_suggestions) in the words every surface uses
// (actiontext.Describe): where it applies ("this session") and what it
// allows (" for Bash(npm test:*)").
func ruleWords(raw json.RawMessage) (where, what string) {
	r := actiontext.Describe(raw)
	return r.Where, " for " + r.What
}

// actionFromForm reads the answer to an approval with an action: an edit
// ("do=edit" with edited_command or edited_input), an "always allow"
// choice (rule), a reason (the "Deny with note…" form), or an option; ok
// is false for an option, which approvalFromForm reads as for any
// approval. Every form sends the digest of the action it showed.
func actionFromForm(q *domain.Question, form url.Values) (req domain.RespondRequest, ok bool, err error) {
	req.Digest = strings.TrimSpace(form.Get("digest"))
	switch {
	case form.Get("do") == "edit":
		in, err := editedInput(q.Action, form)
		if err != nil {
			return req, true, &domain.Error{Code: domain.EInvalidAnswer, Message: "The edited action was not sent: " + err.Error() + ". Nothing was decided; fix it below and allow again.",
				Details: []domain.Detail{{Field: "edited_input", Problem: err.Error()}}}
		}
		if unchanged(q.Action.Input, in) {
			// "Allow with these changes" without a change allows the
			// action as asked, not as an edit.
			for j, tone := range approval.Tones(q) {
				if tone == approval.Allow {
					label := q.Questions[0].Options[j].Label
					req.Response = &label
					return req, true, nil
				}
			}
		}
		req.EditedInput = in
		return req, true, nil
	case form.Has("rule"):
		n, err := strconv.Atoi(form.Get("rule"))
		if err != nil {
			return req, true, &domain.Error{Code: domain.EInvalidAnswer, Message: "That \"always allow\" choice is not one this approval offers; reload the page.",
				Details: []domain.Detail{{Field: "rule", Problem: "not a number"}}}
		}
		req.Rule = &n
		return req, true, nil
	case form.Get("a0") == "note":
		text := form.Get("t0") // the reason, exactly as typed
		if strings.TrimSpace(text) == "" {
			return req, true, &domain.Error{Code: domain.EInvalidAnswer, Message: "Write a note to deny with, or press Deny.",
				Details: []domain.Detail{{Field: "answers[" + q.Questions[0].Question + "]", Problem: "the note is empty"}}}
		}
		req.Reason = &text
		return req, true, nil
	}
	return req, false, nil
}

// editedInput builds the edited arguments from the form: a Bash command
// replaces the command and keeps the other arguments; otherwise the field
// is the whole arguments as a JSON object.
func editedInput(a *domain.Action, form url.Values) (json.RawMessage, error) {
	if _, _, ok := bashCommand(a); ok && form.Has("edited_command") {
		cmd := strings.ReplaceAll(form.Get("edited_command"), "\r\n", "\n")
		if strings.TrimSpace(cmd) == "" {
			return nil, errors.New("the command is empty: write the command to run, or deny instead")
		}
		var in map[string]json.RawMessage
		if err := json.Unmarshal(a.Input, &in); err != nil {
			return nil, errors.New("the asked arguments cannot be edited as a command")
		}
		c, _ := json.Marshal(cmd)
		in["command"] = c
		return json.Marshal(in)
	}
	text := strings.TrimSpace(strings.ReplaceAll(form.Get("edited_input"), "\r\n", "\n"))
	if text == "" {
		return nil, errors.New("the arguments are empty: write them as a JSON object, e.g. {\"command\": \"ls\"}")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the arguments are not valid JSON %s", jsonWhere(text, err))
	}
	if dec.More() {
		return nil, fmt.Errorf("the arguments are not valid JSON %s: there is more after the closing brace", lineCol(text, int(dec.InputOffset())))
	}
	if _, isObject := v.(map[string]any); !isObject {
		return nil, errors.New("the arguments must be a JSON object in braces, e.g. {\"command\": \"ls\"}")
	}
	return json.RawMessage(text), nil
}

// jsonWhere says where a JSON syntax error is, in words.
func jsonWhere(text string, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg := strings.TrimPrefix(se.Error(), "invalid character ")
		return lineCol(text, int(se.Offset)) + " (found " + strings.Replace(msg, " looking for beginning of ", " where this should begin: ", 1) + ")"
	}
	return "(it ends too early: a brace, bracket or quote is not closed)"
}

// lineCol is "at line L, column C" of byte offset off in text.
func lineCol(text string, off int) string {
	off = min(max(off, 1), len(text))
	before := text[:off]
	line := strings.Count(before, "\n") + 1
	col := off - strings.LastIndex(before, "\n") - 1
	return fmt.Sprintf("at line %d, column %d", line, col)
}

// problem puts an edit's refusal next to its field.
func (av *actionView) problem(details []domain.Detail) {
	for _, d := range details {
		if d.Field == "edited_input" {
			av.Problem, av.EditOpen = d.Problem, true
		}
	}
}

// unchanged reports whether edited is the asked input, compared in
// canonical form (a stored input may spell < as \u003c).
func unchanged(asked, edited json.RawMessage) bool {
	a, err1 := domain.CanonicalInput(asked)
	b, err2 := domain.CanonicalInput(edited)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
