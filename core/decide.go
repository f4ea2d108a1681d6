package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Answering an approval that carries an action (docs/openapi.yaml,
// RespondRequest and Decision):
//
//   - choosing its allow option allows the action as asked; choosing
//     another option, or answering with text that is no option (the
//     "Deny with note" convention every surface shares), denies it, the
//     text being the agent's feedback;
//   - reason denies in one step with that feedback;
//   - edited_input allows the action with other arguments (unless the
//     route sets allow_edit: false);
//   - rule also accepts one of the action's "always allow" suggestions;
//   - digest, when sent, must be the action's digest: a person who saw
//     another action gets a conflict instead of approving this one.

// approvalFields reports whether req uses any approval-only field.
func approvalFields(req RespondRequest) bool {
	return req.EditedInput != nil || req.Rule != nil || req.Digest != "" || req.Reason != nil
}

// prepareApproval checks the approval fields of req against q and turns
// reason and a bare edited_input into the plain answer they stand for.
func prepareApproval(q *Question, req *RespondRequest, allowEdit bool) error {
	if !approvalFields(*req) {
		return nil
	}
	bad := func(field, format string, args ...any) error {
		return &Error{Code: EInvalidAnswer, Message: "the answer is not valid",
			Details: []Detail{{Field: field, Problem: fmt.Sprintf(format, args...)}}}
	}
	field := "reason"
	switch {
	case req.EditedInput != nil:
		field = "edited_input"
	case req.Rule != nil:
		field = "rule"
	case req.Digest != "":
		field = "digest"
	}
	if q.Kind != KindApproval || len(q.Questions) != 1 {
		return bad(field, "only an approval takes %s; answer this question with response or answers", field)
	}
	if req.Digest != "" {
		if q.Action == nil {
			return bad("digest", "this approval carries no action, so it has no digest; leave digest out")
		}
		if req.Digest != q.Action.Digest {
			return &Error{Code: EConflict, Message: "the action changed since it was shown",
				Details: []Detail{{Field: "digest", Problem: fmt.Sprintf("you decided on %s but this approval is for %s; reload the question and decide again", req.Digest, q.Action.Digest)}}}
		}
	}
	if req.Reason != nil {
		if req.Response != nil || len(req.Answers) > 0 || req.EditedInput != nil || req.Rule != nil {
			return bad("reason", "a reason denies on its own: leave out response, answers, edited_input and rule")
		}
		r := strings.TrimSpace(*req.Reason)
		if r == "" {
			return bad("reason", "required when given: say why the action is refused")
		}
		if utf8.RuneCountInString(r) > MaxAnswerLen {
			return bad("reason", "at most %d characters", MaxAnswerLen)
		}
		if _, ok := MatchOption(q.Questions[0], r); ok {
			// A reason that reads like an option still denies.
			r = "Deny: " + r
		}
		req.Response = &r
		return nil
	}
	if req.EditedInput == nil && req.Rule == nil {
		return nil
	}
	if q.Action == nil {
		return bad(field, "this approval carries no action to edit or always allow; answer with response")
	}
	if q.ApprovalsRequired > 1 {
		return bad(field, "this approval needs %d votes, which count for options only; vote with response", q.ApprovalsRequired)
	}
	if req.EditedInput != nil && !allowEdit {
		return bad("edited_input", "editing is turned off for route %q (allow_edit: false); allow or deny the action as asked", q.Route)
	}
	if req.Rule != nil && (*req.Rule < 0 || *req.Rule >= len(q.Action.Suggestions)) {
		if len(q.Action.Suggestions) == 0 {
			return bad("rule", "this action offers no \"always allow\" suggestions; leave rule out")
		}
		return bad("rule", "must be the index of one of the action's %d suggestions (0 to %d)", len(q.Action.Suggestions), len(q.Action.Suggestions)-1)
	}
	if req.Response == nil && len(req.Answers) == 0 {
		o, ok := allowOption(q.Questions[0])
		if !ok {
			return bad(field, "no option of this approval allows; answer with response")
		}
		req.Response = &o.Label
	}
	return nil
}

// decideApproval adds the decision of an approval with an action to ans.
func decideApproval(q *Question, req RespondRequest, ans *Answer, who *Person) error {
	if q.Action == nil || q.Kind != KindApproval || len(q.Questions) != 1 {
		return nil
	}
	it := q.Questions[0]
	label := ""
	if sel := ans.Selections[it.Question]; len(sel) > 0 {
		label = sel[0]
	}
	d := &Decision{Behavior: BehaviorDeny, Digest: q.Action.Digest}
	o, isOption := MatchOption(it, label)
	if isOption && optionAllows(it, o) {
		d.Behavior = BehaviorAllow
		d.Input = q.Action.Input
	}
	if d.Behavior == BehaviorDeny {
		if req.EditedInput != nil || req.Rule != nil {
			f := "edited_input"
			if req.EditedInput == nil {
				f = "rule"
			}
			return &Error{Code: EInvalidAnswer, Message: "the answer is not valid",
				Details: []Detail{{Field: f, Problem: "goes with allowing the action; to refuse it, leave " + f + " out"}}}
		}
		switch {
		case isOption && who != nil && who.Platform == "system":
			d.Message = "No answer in time: denied by default (on_timeout)."
		case isOption:
			d.Message = "Denied by " + personName(who) + "."
		default:
			d.Message = label
		}
		ans.Decision = d
		return nil
	}
	if req.EditedInput != nil {
		if len(req.EditedInput) > MaxActionInput {
			return &Error{Code: EInvalidAnswer, Message: "the answer is not valid",
				Details: []Detail{{Field: "edited_input", Problem: fmt.Sprintf("at most %d KiB of JSON", MaxActionInput>>10)}}}
		}
		in, err := CanonicalInput(req.EditedInput)
		if err != nil {
			return &Error{Code: EInvalidAnswer, Message: "the answer is not valid",
				Details: []Detail{{Field: "edited_input", Problem: err.Error()}}}
		}
		if string(in) != string(q.Action.Input) {
			digest := ActionDigest(q.Action.Tool, in)
			ans.Edited = &EditedAction{Tool: q.Action.Tool, Input: in, Digest: digest, By: who}
			d.Input, d.Digest, d.Edited = in, digest, true
		}
	}
	if req.Rule != nil {
		d.Rules = []json.RawMessage{q.Action.Suggestions[*req.Rule]}
		r := *req.Rule
		ans.AppliedRule = &r
	}
	ans.Decision = d
	return nil
}

// allowOption is the option of an approval's item that allows.
func allowOption(it Item) (Option, bool) {
	for _, o := range it.Options {
		if optionAllows(it, o) {
			return o, true
		}
	}
	return Option{}, false
}

var (
	denyWords  = []string{"deny", "reject", "refuse", "decline", "no", "block", "abort", "veto", "disallow", "don't", "do not", "stop"}
	allowWords = []string{"allow", "approve", "yes", "accept", "confirm", "proceed", "ok", "go", "grant", "permit", "continue", "run"}
)

// optionAllows reports whether choosing o allows the action: its label or
// value starts with an allow word ("Allow", "Approve", "Yes, run it"), or,
// when no option of the item is recognised, it is the first of two (the
// order the hook uses). A veto option never allows.
func optionAllows(it Item, o Option) bool {
	tone := func(o Option) int {
		if o.Veto {
			return -1
		}
		for _, s := range []string{o.Label, o.Value} {
			s = strings.ToLower(strings.TrimSpace(s))
			for _, w := range denyWords {
				if startsWithWord(s, w) {
					return -1
				}
			}
			for _, w := range allowWords {
				if startsWithWord(s, w) {
					return 1
				}
			}
		}
		return 0
	}
	if t := tone(o); t != 0 {
		return t > 0
	}
	if len(it.Options) == 2 && tone(it.Options[0]) == 0 && tone(it.Options[1]) == 0 {
		return it.Options[0].Label == o.Label
	}
	return false
}

func startsWithWord(s, w string) bool {
	if !strings.HasPrefix(s, w) {
		return false
	}
	rest := s[len(w):]
	return rest == "" || strings.IndexAny(rest[:1], " ,.:;!-—(") == 0
}

// auditApproval adds the approval lines of an answer to the audit trail:
// "edited" with the asked and the approved arguments and who edited, and
// "always_allowed" with the chosen rule.
func (r *Router) auditApproval(ctx context.Context, final, asked *Question, ans *Answer) {
	if ans.Edited != nil {
		orig := EditedAction{Tool: asked.Action.Tool, Input: asked.Action.Input, Digest: asked.Action.Digest}
		ed := *ans.Edited
		ed.By = nil
		b, _ := json.Marshal(map[string]any{"original": orig, "edited": ed})
		r.audit(ctx, final, AuditEntry{Type: "edited", By: ans.Edited.By, Detail: string(b)})
	}
	if ans.AppliedRule != nil && ans.Decision != nil && len(ans.Decision.Rules) > 0 {
		r.audit(ctx, final, AuditEntry{Type: "always_allowed", By: final.RespondedBy, Detail: string(ans.Decision.Rules[0])})
	}
}
