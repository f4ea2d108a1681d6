package domain

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Answering an approval that carries an action (docs/openapi.yaml,
// RespondRequest and Decision):
//
//   - choosing its allow option allows the action as asked; choosing
//     another option, or answering with text that is no option, denies
//     it, the text being the agent's feedback;
//   - reason denies in one step: the answer is the Deny option and the
//     reason, exactly as typed, is the record's reason and the decision's
//     message. It is never read as an answer, so no reason allows. Every
//     surface's "Deny with note" sends it, on approvals without an action
//     too;
//   - edited_input allows the action with other arguments (unless the
//     route sets allow_edit: false);
//   - rule also accepts one of the action's "always allow" suggestions;
//   - digest, when sent, must be the action's digest: a person who saw
//     another action gets a conflict instead of approving this one.

// approvalFields reports whether req uses any approval-only field.
func approvalFields(req RespondRequest) bool {
	return req.EditedInput != nil || req.Rule != nil || req.Digest != "" || req.Reason != nil
}

// PrepareApproval checks the approval fields of req against q and turns
// reason and a bare edited_input into the option they stand for (a reason
// stays in req, for DecideApproval to record).
func PrepareApproval(q *Question, req *RespondRequest, allowEdit bool) error {
	if !approvalFields(*req) {
		return nil
	}
	bad := func(field, format string, args ...any) error {
		return &Error{Code: EInvalidAnswer, Message: MsgAnswerNotValid,
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
		// The reason is kept exactly as typed and never read as an
		// answer: whatever it says, the answer is the Deny option.
		if strings.TrimSpace(*req.Reason) == "" {
			return bad("reason", "required when given: say why the action is refused")
		}
		if utf8.RuneCountInString(*req.Reason) > MaxAnswerLen {
			return bad("reason", "at most %d characters", MaxAnswerLen)
		}
		if q.ApprovalsRequired > 1 {
			return bad("reason", "this approval needs %d votes, which count for options only; vote with response", q.ApprovalsRequired)
		}
		o, ok := DenyOption(q.Questions[0])
		if !ok {
			return bad("reason", "no option of this approval denies, so nothing can be denied with a reason; answer with response")
		}
		req.Response = &o.Label
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
	if req.EditedInput != nil && q.Action.AllowEdit != nil && !*q.Action.AllowEdit {
		return bad("edited_input", "the agent cannot run edited arguments (its action says allow_edit: false); allow or deny the action as asked")
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

// DecideApproval adds the decision of an approval with an action to ans,
// and to any approval the reason it was denied with (PrepareApproval).
func DecideApproval(q *Question, req RespondRequest, ans *Answer, who *Person) error {
	if req.Reason != nil {
		ans.Reason = *req.Reason
	}
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
			return &Error{Code: EInvalidAnswer, Message: MsgAnswerNotValid,
				Details: []Detail{{Field: f, Problem: "goes with allowing the action; to refuse it, leave " + f + " out"}}}
		}
		switch {
		case req.Reason != nil:
			d.Message = *req.Reason
		case isOption && who != nil && who.Platform == "system":
			d.Message = "No answer in time: denied by default (on_timeout)."
		case isOption:
			d.Message = "Denied by " + PersonName(who) + "."
		default:
			d.Message = label
		}
		ans.Decision = d
		return nil
	}
	if req.EditedInput != nil {
		if len(req.EditedInput) > MaxActionInput {
			return &Error{Code: EInvalidAnswer, Message: MsgAnswerNotValid,
				Details: []Detail{{Field: "edited_input", Problem: fmt.Sprintf("at most %d KiB of JSON", MaxActionInput>>10)}}}
		}
		in, err := CanonicalInput(req.EditedInput)
		if err != nil {
			return &Error{Code: EInvalidAnswer, Message: MsgAnswerNotValid,
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

// routeAllowsAtTimeout names the setting, in the operator's configuration,
// that lets approvals be allowed when nobody answers (an ask never can).
func routeAllowsAtTimeout(label string) string {
	return fmt.Sprintf("routes[].on_timeout: {answer: %q}", label)
}

// checkTimeoutOutcome refuses an approval (kind approval, or a gate that
// needs several approvals) whose own ask would have it allowed when nobody
// answers: its on_timeout naming an option that allows, or use_defaults
// (its own or its route's) with an option that allows marked default. An
// agent cannot approve its own action by waiting; only a route's
// on_timeout.answer, the operator's choice, can.
func checkTimeoutOutcome(p *problems, approval bool, items []Item, own, effective *OnTimeout) {
	if !approval || effective == nil {
		return
	}
	const only = "Only the operator can make the deadline approve, on a route in the bridge's configuration (%s)"
	if own != nil && !own.UseDefaults && len(items) == 1 {
		if o, ok := MatchOption(items[0], own.Answer); ok && optionAllows(items[0], o) {
			instead := "leave on_timeout out, and the approval expires without approval"
			if d, ok := DenyOption(items[0]); ok {
				instead = fmt.Sprintf("name the option that denies (on_timeout: {answer: %q}), or %s", d.Label, instead)
			}
			p.add("on_timeout", "%q would be chosen when nobody answers, and it approves: an approval's own ask may not decide that; %s. "+only,
				o.Label, instead, routeAllowsAtTimeout(o.Label))
		}
	}
	if !effective.UseDefaults {
		return
	}
	for i, it := range items {
		tones := ItemTones(it)
		for j, o := range it.Options {
			if o.Default && tones[j] == ToneAllow {
				p.add(fmt.Sprintf("questions[%d].options[%d].default", i, j), "on_timeout.use_defaults would choose %q when nobody answers, and it approves: an approval's own ask may not decide that; mark the option that denies default instead, or leave default off. "+only,
					o.Label, routeAllowsAtTimeout(o.Label))
			}
		}
	}
}

// DenyOption is the option of an approval's item that denies (ItemTones):
// the answer a reason is recorded with.
func DenyOption(it Item) (Option, bool) {
	tones := ItemTones(it)
	for j, o := range it.Options {
		if tones[j] == ToneDeny {
			return o, true
		}
	}
	return Option{}, false
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

// Tone is what choosing an option of an approval does.
type Tone int

// Tones of an approval's options.
const (
	ToneNeutral Tone = iota // neither: a plain option
	ToneAllow               // lets the agent go ahead
	ToneDeny                // refuses
)

var (
	denyWords  = []string{"deny", "reject", "refuse", "decline", "no", "block", "abort", "veto", "disallow", "don't", "do not", "stop", "cancel"}
	allowWords = []string{"allow", "approve", "yes", "accept", "confirm", "proceed", "ok", "go", "grant", "permit", "continue", "run"}
)

// OptionTone classifies one option of an approval by the first word of its
// label or value ("Deny", "Deny it", "Approve", "Yes, run it") as people
// read it (Skeleton: "Dеny" with a Cyrillic е is Deny), or its veto flag.
// Every surface and the decision use this one rule.
func OptionTone(o Option) Tone {
	if o.Veto {
		return ToneDeny
	}
	for _, s := range []string{o.Label, o.Value} {
		s = Skeleton(s)
		for _, w := range denyWords {
			if startsWithWord(s, w) {
				return ToneDeny
			}
		}
		for _, w := range allowWords {
			if startsWithWord(s, w) {
				return ToneAllow
			}
		}
	}
	return ToneNeutral
}

// ItemTones classifies every option of an approval's item. When no option
// is recognised and there are exactly two, the first allows and the second
// denies: the order the hook and the on-call examples use.
func ItemTones(it Item) []Tone {
	out := make([]Tone, len(it.Options))
	known := false
	for j, o := range it.Options {
		out[j] = OptionTone(o)
		known = known || out[j] != ToneNeutral
	}
	if !known && len(it.Options) == 2 {
		out[0], out[1] = ToneAllow, ToneDeny
	}
	return out
}

// optionAllows reports whether choosing o allows the action (ItemTones).
func optionAllows(it Item, o Option) bool {
	tones := ItemTones(it)
	for j, x := range it.Options {
		if x.Label == o.Label {
			return tones[j] == ToneAllow
		}
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
