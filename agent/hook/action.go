package hook

import (
	"bytes"
	"encoding/json"

	"github.com/askbridge/askbridge/domain"
)

// action is the tool call an approval asks about, sent whole so people see
// every argument (and a diff for file edits) and the decision binds to
// it. A tool input that is not a JSON object, or too large to send, leaves
// the approval without an action: it is still asked, by its text.
func (h *hook) action() *domain.Action {
	in := bytes.TrimSpace(h.in.ToolInput)
	if len(in) == 0 || in[0] != '{' || len(in) > domain.MaxActionInput {
		return nil
	}
	a := &domain.Action{Tool: h.in.ToolName, Input: in}
	if len(h.in.PermissionSuggestions) <= domain.MaxSuggestions {
		for _, s := range h.in.PermissionSuggestions {
			if s = bytes.TrimSpace(s); len(s) > 0 && s[0] == '{' && len(s) <= domain.MaxSuggestionLen {
				a.Suggestions = append(a.Suggestions, s)
			}
		}
	}
	return a
}

// decided answers the event with an approval's decision: allow with the
// edited arguments as updatedInput and, on PermissionRequest, the chosen
// "always allow" rule as updatedPermissions; or deny with the reason.
func (h *hook) decided(q *domain.Question) *Output {
	d := q.Decision
	by := responder(q, "the user")
	if d.Behavior != domain.BehaviorAllow {
		msg := "Denied by " + by + " via askbridge."
		switch ans := q.Answers[q.Questions[0].Question]; {
		case q.Reason != "": // Deny with note: the note, as typed
			msg = said(by, q.Reason)
		case d.Message != "" && !isOption(q, ans): // free text sent as the answer
			msg = said(by, d.Message)
		}
		return h.deny(msg)
	}
	var updated any
	if d.Edited && len(d.Input) > 0 {
		updated = json.RawMessage(d.Input)
	}
	reason := "Allowed by " + by + " via askbridge."
	switch {
	case d.AutoRule != "":
		reason = "Allowed by the askbridge rule " + d.AutoRule + "."
	case d.Edited:
		reason = "Allowed by " + by + " via askbridge, with arguments they edited."
	}
	if h.in.HookEventName == "PermissionRequest" {
		return &Output{HookSpecificOutput: PermissionRequestOutput{HookEventName: "PermissionRequest",
			Decision: Decision{Behavior: "allow", UpdatedInput: updated, UpdatedPermissions: d.Rules}}}
	}
	return preToolUse("allow", reason, updated)
}

func isOption(q *domain.Question, ans string) bool {
	_, ok := domain.MatchOption(q.Questions[0], ans)
	return ok
}
