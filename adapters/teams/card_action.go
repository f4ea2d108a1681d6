package teams

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/actiontext"
	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// ActionInput is what one click on a card asks of the lifecycle, as on
// the other surfaces: an answer (Router.AnswerRead with Request), a
// dismissal (Router.Cancel, reason user), or only the card as it is now,
// for the one person whose client asked (refresh).
type ActionInput struct {
	// Request is the answer: the options or free text per item, a denial's
	// note as its reason, an edited action, an "always allow" rule, and
	// the digest of the action the person saw. Set when neither Dismiss
	// nor Refresh is.
	Request domain.RespondRequest
	// Dismiss closes the question unanswered (cancel reason user).
	Dismiss bool
	// Refresh asks only for the card (refresh.action): nothing changes.
	Refresh bool
}

// ActionError is why a click records nothing, for the person who clicked
// (privately): a phrase naming what to fix, to follow "Not sent: ". It
// never holds internals.
type ActionError struct{ Text string }

func (e *ActionError) Error() string { return e.Text }

func refuse(text string) error { return &ActionError{Text: text} }

// errStale is the refusal of a control that no longer matches its question
// (or data that no card of ours sends).
var errStale = refuse("this control no longer matches the question")

// actionData is an Action.Execute's data as the card sets it, merged by
// Teams with the card's input values (strings, by input id).
type actionData struct {
	Q      string            `json:"q"`
	Item   *int              `json:"i"`
	Option *int              `json:"o"`
	Digest string            `json:"g"`
	Suffix string            `json:"s"` // of the note and edit inputs' ids (batch cards)
	Inputs map[string]string `json:"-"`
}

func decodeData(data json.RawMessage) (actionData, error) {
	var d actionData
	if err := json.Unmarshal(data, &d); err != nil {
		return d, errStale
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(data, &all)
	d.Inputs = map[string]string{}
	for k, v := range all {
		var s string
		if json.Unmarshal(v, &s) == nil {
			d.Inputs[k] = s
		}
	}
	return d, nil
}

// ActionQuestionID is the id of the question an invoke's action data names,
// "" when it names none (the data of no card of ours).
func ActionQuestionID(data json.RawMessage) string {
	d, err := decodeData(data)
	if err != nil {
		return ""
	}
	return d.Q
}

// ParseAction turns an adaptiveCard/action invoke's action (verb + data)
// into a respond input for q. Its errors are *ActionError: what to tell
// the person, privately; nothing was recorded.
func ParseAction(q *domain.Question, verb string, data json.RawMessage) (ActionInput, error) {
	d, err := decodeData(data)
	if err != nil || q == nil || d.Q != q.ID || len(q.Questions) == 0 {
		return ActionInput{}, errStale
	}
	switch verb {
	case VerbRefresh:
		return ActionInput{Refresh: true}, nil
	case verbDismiss:
		return ActionInput{Dismiss: true}, nil
	}
	// The digest of the action the card showed: the lifecycle refuses
	// the answer (a conflict) when the action is not that one any more,
	// so nobody decides what they did not see.
	digest := ""
	if q.Action != nil {
		digest = d.Digest
		if digest == "" {
			return ActionInput{}, errStale
		}
	}
	item := func() (int, domain.Item, bool) {
		if d.Item == nil || *d.Item < 0 || *d.Item >= len(q.Questions) {
			return 0, domain.Item{}, false
		}
		return *d.Item, q.Questions[*d.Item], true
	}
	answer := func(it domain.Item, s ...string) (ActionInput, error) {
		return ActionInput{Request: domain.RespondRequest{
			Answers: map[string]domain.StringList{it.Question: s}, Digest: digest}}, nil
	}
	switch verb {
	case verbAnswer:
		_, it, ok := item()
		if !ok || form(q) || d.Option == nil || *d.Option < 0 || *d.Option >= len(it.Options) {
			return ActionInput{}, errStale
		}
		return answer(it, it.Options[*d.Option].Label)
	case verbOther, verbText:
		i, it, ok := item()
		if !ok || form(q) || (verb == verbText) != it.OpenEnded() || q.Kind == domain.KindApproval && !it.OpenEnded() {
			return ActionInput{}, errStale
		}
		key := inOwn
		if verb == verbText {
			key = inText
		}
		text := strings.TrimSpace(d.Inputs[key+strconv.Itoa(i)])
		if text == "" {
			return ActionInput{}, refuse("the answer was empty")
		}
		if p := domain.FreeTextProblem(it, text); p != "" {
			return ActionInput{}, refuse(p)
		}
		return answer(it, text)
	case verbDenyNote:
		// The note is the denial's reason, exactly as typed: never read
		// as an answer, so a note "Allow." denies like any other.
		req, ok := approval.NoteRequest(q, d.Inputs[inNote+d.Suffix])
		if !ok {
			if !approval.NoteAllowed(q) {
				return ActionInput{}, errStale
			}
			return ActionInput{}, refuse("the note was empty: write why you deny it, or press Deny")
		}
		req.Digest = digest
		return ActionInput{Request: req}, nil
	case verbEdit:
		if q.Action == nil || !approval.Is(q) || q.ApprovalsRequired > 1 {
			return ActionInput{}, errStale
		}
		_, bash := actiontext.EditText(q.Action)
		in, err := actiontext.EditedInput(q.Action, d.Inputs[inEdit+d.Suffix], bash)
		if err != nil {
			return ActionInput{}, refuse(err.Error())
		}
		return ActionInput{Request: domain.RespondRequest{EditedInput: in, Digest: digest}}, nil
	case verbRule:
		n, err := strconv.Atoi(d.Inputs[inRule])
		if q.Action == nil || err != nil || n < 0 || n >= len(q.Action.Suggestions) || q.ApprovalsRequired > 1 {
			return ActionInput{}, errStale
		}
		return ActionInput{Request: domain.RespondRequest{Rule: &n, Digest: digest}}, nil
	case verbSubmit:
		if !form(q) {
			return ActionInput{}, errStale
		}
		req, err := formAnswer(q, d.Inputs)
		if err != nil {
			return ActionInput{}, err
		}
		req.Digest = digest
		return ActionInput{Request: req}, nil
	}
	return ActionInput{}, errStale
}

// formAnswer reads the form's inputs: each asked item's options and free
// text. Items whose condition the choices do not meet are not asked, and
// what was typed for them is dropped. Every asked item needs an answer.
func formAnswer(q *domain.Question, in map[string]string) (domain.RespondRequest, error) {
	choices := make([][]string, len(q.Questions))
	for i, it := range q.Questions {
		id := strconv.Itoa(i)
		if it.OpenEnded() {
			if t := strings.TrimSpace(in[inText+id]); t != "" {
				choices[i] = []string{t}
			}
			continue
		}
		var picked []string
		for _, v := range strings.Split(in[inChoice+id], ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				continue
			}
			j, err := strconv.Atoi(v)
			if err != nil || j < 0 || j >= len(it.Options) {
				return domain.RespondRequest{}, errStale
			}
			picked = append(picked, it.Options[j].Label)
		}
		own := strings.TrimSpace(in[inOwn+id])
		if own != "" && q.Kind == domain.KindApproval {
			return domain.RespondRequest{}, errStale
		}
		if own != "" && !it.MultiSelect && len(picked) > 0 {
			return domain.RespondRequest{}, refuse("for " + itemName(it, i) + ", pick an option or write your own answer, not both")
		}
		if own != "" {
			picked = append(picked, own)
		}
		choices[i] = picked
	}
	shown := domain.Shown(q.Questions, choices)
	answers := map[string]domain.StringList{}
	var missing, problems []string
	for i, it := range q.Questions {
		if !shown[i] {
			continue
		}
		if len(choices[i]) == 0 {
			missing = append(missing, itemName(it, i))
			continue
		}
		for _, c := range choices[i] {
			if _, isOption := domain.MatchOption(it, c); isOption {
				continue
			}
			if p := domain.FreeTextProblem(it, c); p != "" {
				problems = append(problems, itemName(it, i)+": "+p)
			}
		}
		answers[it.Question] = choices[i]
	}
	switch {
	case len(missing) > 0:
		return domain.RespondRequest{}, refuse("still to answer: " + strings.Join(missing, ", ") + "; make your choices, then press Submit")
	case len(problems) > 0:
		return domain.RespondRequest{}, refuse(strings.Join(problems, "; "))
	}
	return domain.RespondRequest{Answers: answers}, nil
}

// IsActionError reports whether err is a refusal to show the person.
func IsActionError(err error) bool {
	var ae *ActionError
	return errors.As(err, &ae)
}
