package teams

// A placeholder of the card seam (QuestionCard, ParseAction, CardView,
// ActionInput) so the adapter builds and its tests run before the Adaptive
// Card rendering (card*.go) is merged; drop this file then. The real cards
// keep what the adapter relies on:
//   - every Action.Execute's data carries the question id under "q"
//     (ActionQuestionID), so an invoke names its question;
//   - verb "refresh" is the per-user refresh (refresh.action);
//   - ParseAction says whether the action answers, dismisses or refreshes.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/approval"
	"github.com/askbridge/askbridge/domain"
)

// CardView says whose view a card is rendered for and its state.
type CardView struct {
	PublicURL string
	Viewer    string // "" = everyone; else the person's Teams user id (from.id)
	Refused   string // a notice only Viewer sees
}

// ActionInput is what one Action.Execute asks for.
type ActionInput struct {
	Dismiss bool // the person dismisses the question
	Refresh bool // Teams asks for the person's view of the card
	Request domain.RespondRequest
}

// ActionQuestionID returns the question an action's data names.
func ActionQuestionID(data json.RawMessage) string {
	var d struct {
		Q string `json:"q"`
	}
	_ = json.Unmarshal(data, &d)
	return d.Q
}

type stubBlock = map[string]any

// QuestionCard renders q (pending or final) as an Adaptive Card.
func QuestionCard(q *domain.Question, v CardView) (json.RawMessage, error) {
	body := []any{stubText(q.AgentLabel(), "bolder")}
	if q.Context != "" {
		body = append(body, stubText(q.Context, ""))
	}
	for _, it := range q.Questions {
		body = append(body, stubText(it.Question, "bolder"))
		for _, o := range it.Options {
			if o.Default {
				body = append(body, stubText("Default: "+o.Label, ""))
			}
		}
	}
	if q.Action != nil && q.Action.Diff != "" {
		body = append(body, stubText(q.Action.Diff, ""))
	}
	if v.Refused != "" {
		body = append(body, stubText(v.Refused, "attention"))
	}
	var actions []any
	data := func(extra ...any) map[string]any {
		m := map[string]any{"q": q.ID}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	exec := func(title, verb string, d map[string]any) stubBlock {
		return stubBlock{"type": "Action.Execute", "title": title, "verb": verb, "data": d}
	}
	if q.Status != domain.StatusPending {
		body = append(body, stubText(domain.OutcomeLine(q), ""))
	} else {
		if t := domain.TallyLine(q); t != "" {
			body = append(body, stubText(t, ""))
		}
		single := len(q.Questions) == 1 && !q.Questions[0].MultiSelect && !q.Questions[0].OpenEnded()
		if single {
			for j, o := range q.Questions[0].Options {
				actions = append(actions, exec(o.Label, "answer", data("item", 0, "option", j)))
			}
		}
		for i, it := range q.Questions {
			if !single && !it.OpenEnded() {
				var choices []any
				for j, o := range it.Options {
					choices = append(choices, stubBlock{"title": o.Label, "value": strconv.Itoa(j)})
				}
				body = append(body, stubBlock{"type": "Input.ChoiceSet", "id": "c" + strconv.Itoa(i),
					"isMultiSelect": it.MultiSelect, "choices": choices})
			}
			if q.Kind != domain.KindApproval {
				id := "o" + strconv.Itoa(i)
				if it.OpenEnded() {
					id = "t" + strconv.Itoa(i)
				}
				body = append(body, stubBlock{"type": "Input.Text", "id": id})
			}
		}
		if single && q.Kind != domain.KindApproval {
			actions = append(actions, exec("Send", "other", data("item", 0)))
		} else if !single {
			actions = append(actions, exec("Submit", "submit", data()))
		}
		if approval.NoteAllowed(q) {
			actions = append(actions, stubBlock{"type": "Action.ShowCard", "title": "Deny with note…", "card": stubCard(
				[]any{stubBlock{"type": "Input.Text", "id": "note"}}, []any{exec("Deny", "deny_note", data())})})
		}
		actions = append(actions, stubBlock{"type": "Action.ShowCard", "title": "Dismiss…", "card": stubCard(
			[]any{stubText(domain.Words{}.DismissConfirm().Text, "")}, []any{exec("Dismiss", "dismiss", data())})})
	}
	c := stubCard(body, actions)
	c["refresh"] = stubBlock{"action": exec("Refresh", "refresh", data())}
	if v.Viewer != "" && q.Status == domain.StatusPending {
		c["refresh"].(stubBlock)["userIds"] = []string{v.Viewer}
	}
	return json.Marshal(c)
}

func stubCard(body, actions []any) stubBlock {
	c := stubBlock{"type": "AdaptiveCard", "version": "1.5", "body": body}
	if len(actions) > 0 {
		c["actions"] = actions
	}
	return c
}

func stubText(s, style string) stubBlock {
	b := stubBlock{"type": "TextBlock", "text": s, "wrap": true}
	if style == "bolder" {
		b["weight"] = "bolder"
	} else if style == "attention" {
		b["color"] = "attention"
	}
	return b
}

// ParseAction turns an adaptiveCard/action invoke's action into a request.
func ParseAction(q *domain.Question, verb string, data json.RawMessage) (ActionInput, error) {
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		return ActionInput{}, errors.New("the action's data is not an object")
	}
	str := func(k string) string { s, _ := d[k].(string); return strings.TrimSpace(s) }
	num := func(k string) int {
		f, ok := d[k].(float64)
		if !ok {
			return -1
		}
		return int(f)
	}
	switch verb {
	case "refresh":
		return ActionInput{Refresh: true}, nil
	case "dismiss":
		return ActionInput{Dismiss: true}, nil
	case "deny_note":
		req, ok := approval.NoteRequest(q, fmt.Sprint(d["note"]))
		if !ok {
			return ActionInput{}, errors.New("write a note to deny with")
		}
		return ActionInput{Request: req}, nil
	case "answer":
		i, j := num("item"), num("option")
		if i != 0 || j < 0 || j >= len(q.Questions[0].Options) {
			return ActionInput{}, errors.New("this button no longer matches the question")
		}
		it := q.Questions[0]
		return ActionInput{Request: domain.RespondRequest{Answers: map[string]domain.StringList{it.Question: {it.Options[j].Label}}}}, nil
	case "other":
		t := str("o0") + str("t0")
		if t == "" {
			return ActionInput{}, errors.New("the answer was empty")
		}
		return ActionInput{Request: domain.RespondRequest{Answers: map[string]domain.StringList{q.Questions[0].Question: {t}}}}, nil
	case "submit":
		choices := make([][]string, len(q.Questions))
		for i, it := range q.Questions {
			for _, v := range strings.Split(str("c"+strconv.Itoa(i)), ",") {
				if j, err := strconv.Atoi(v); err == nil && j >= 0 && j < len(it.Options) {
					choices[i] = append(choices[i], it.Options[j].Label)
				}
			}
			if t := str("o"+strconv.Itoa(i)) + str("t"+strconv.Itoa(i)); t != "" {
				choices[i] = append(choices[i], t)
			}
		}
		shown := domain.Shown(q.Questions, choices)
		answers := map[string]domain.StringList{}
		for i, it := range q.Questions {
			if !shown[i] {
				continue
			}
			if len(choices[i]) == 0 {
				return ActionInput{}, fmt.Errorf("answer %q first", it.Question)
			}
			answers[it.Question] = choices[i]
		}
		return ActionInput{Request: domain.RespondRequest{Answers: answers}}, nil
	}
	return ActionInput{}, errors.New("this button is not one of askbridge's")
}
