package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Answerer records an answer given where the agent runs (an elicitation of
// the MCP host), as who: it goes through the Router like any other answer,
// so the first answer anywhere wins.
type Answerer func(ctx context.Context, questionID string, req domain.RespondRequest, who domain.Person) error

// mrtrProtocol is the first protocol version where a server may no longer
// send requests (elicitation) while serving a call: it must return the
// request and be called again (multi round-trip, SEP-2322), which cannot
// run beside the other copies of a question.
const mrtrProtocol = "2026-07-28"

// canElicit reports whether the host declared form elicitation and speaks a
// protocol that lets the form stay open while the call waits.
func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil || p.ProtocolVersion >= mrtrProtocol {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // no mode named: form (older hosts)
}

// hostUser is the person at the MCP host: recorded as who answered.
func hostUser(agentID, clientName string) domain.Person {
	name := "user of " + agentID
	if clientName != "" {
		name = clientName + " user"
	}
	return domain.Person{Platform: "mcp", ID: agentID, Name: name}
}

// formWithdrawGrace lets the cancellation of an open form leave before the
// call's result.
const formWithdrawGrace = 150 * time.Millisecond

// elicit offers q to the host's own user while the call waits; the answer
// goes through answer. It ends quietly when ctx ends (answered elsewhere:
// the SDK tells the host to drop the form) or the user declines. withdrawn
// reports a form that was still open when ctx ended.
func (s *Server) elicit(ctx context.Context, ss *mcp.ServerSession, q *domain.Question, answer Answerer, who domain.Person) (withdrawn bool) {
	schema, names := elicitSchema(q)
	msg := formMessage(q)
	// An answer the bridge refuses (a rule for free text, a condition) is
	// asked again with the problem on top, a few times at most.
	problem := ""
	for try := 0; try < 3; try++ {
		if try > 0 && problem == "" {
			return false
		}
		var done bool
		if withdrawn, done, problem = s.elicitOnce(ctx, ss, q, answer, who, msg, problem, schema, names); done {
			return withdrawn
		}
	}
	return false
}

// formMessage is the message of q's form.
func formMessage(q *domain.Question) string {
	msg := "An agent is asking you"
	if q.Context != "" {
		msg += ":\n\n" + q.Context
	}
	if len(q.Questions) == 1 {
		msg = q.Questions[0].Question
	}
	return msg + "\n\n(Also asked in " + q.Places() + "; the first answer anywhere counts.)"
}

// elicitOnce shows the form once. done is false when the answer was
// refused as not valid: problem says why, to ask again.
func (s *Server) elicitOnce(ctx context.Context, ss *mcp.ServerSession, q *domain.Question, answer Answerer, who domain.Person,
	msg, refused string, schema map[string]any, names []string) (withdrawn, done bool, problem string) {
	if refused != "" {
		msg = "Not recorded: " + refused + "\n\n" + msg
	}
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema})
	if ctx.Err() != nil {
		return true, true, ""
	}
	if err != nil {
		s.log.Info("elicitation failed", "question", q.ID, "err", err)
		return false, true, ""
	}
	if res.Action != "accept" {
		s.log.Info("elicitation not accepted; waiting for an answer elsewhere", "question", q.ID, "action", res.Action)
		return false, true, ""
	}
	req := formAnswer(q, names, res.Content, who)
	if err := answer(context.WithoutCancel(ctx), q.ID, req, who); err != nil {
		s.log.Info("the host user's answer was not taken", "question", q.ID, "err", err)
		var e *domain.Error
		if errors.As(err, &e) && e.Code == domain.EInvalidAnswer && ctx.Err() == nil {
			return false, false, answerProblems(e)
		}
	}
	return false, true, ""
}

// answerProblems says why the bridge refused an answer.
func answerProblems(e *domain.Error) string {
	var ps []string
	for _, d := range e.Details {
		ps = append(ps, d.Field+": "+d.Problem)
	}
	if len(ps) == 0 {
		ps = append(ps, e.Message)
	}
	return strings.Join(ps, "; ")
}

// formAnswer is the answer the host's user gave in q's form (content, by
// the property names of elicitSchema), as who.
func formAnswer(q *domain.Question, names []string, content map[string]any, who domain.Person) domain.RespondRequest {
	choices := make([][]string, len(q.Questions))
	req := domain.RespondRequest{Answers: map[string]domain.StringList{}, RespondedBy: &domain.PersonRef{Person: who}}
	for i, it := range q.Questions {
		var chosen []string
		switch v := content[names[i]].(type) {
		case string:
			if v != "" {
				chosen = append(chosen, v)
			}
		case []any:
			for _, x := range v {
				if str, ok := x.(string); ok && str != "" {
					chosen = append(chosen, str)
				}
			}
		}
		if other, _ := content[names[i]+"_other"].(string); strings.TrimSpace(other) != "" {
			if it.MultiSelect {
				chosen = append(chosen, strings.TrimSpace(other))
			} else {
				chosen = []string{strings.TrimSpace(other)}
			}
		}
		choices[i] = chosen
	}
	// A form shows every item: the ones whose condition the answers do not
	// meet are left out, as the other surfaces never ask them.
	shown := domain.Shown(q.Questions, choices)
	for i, it := range q.Questions {
		if shown[i] {
			req.Answers[it.Question] = choices[i]
		}
	}
	return req
}

// elicitSchema is the form of q: per item, a choice (single: an enum;
// multiple: an array of enums) and an optional "Other" text, or a text for
// an open-ended item. names[i] is item i's property.
func elicitSchema(q *domain.Question) (map[string]any, []string) {
	props := map[string]any{}
	required, names := []string{}, []string{}
	for i, it := range q.Questions {
		name := fmt.Sprintf("q%d", i+1)
		names = append(names, name)
		title := it.Header
		if title == "" {
			title = fmt.Sprintf("Question %d", i+1)
		}
		desc := it.Question
		if c := domain.ConditionText(q.Questions, it.ShowIf); c != "" {
			desc += " (" + c + "; otherwise leave it empty)"
		}
		if r := it.Other; r != nil {
			desc += " Your own words: " + r.Describe() + "."
		}
		if it.OpenEnded() {
			p := map[string]any{"type": "string", "title": title, "description": desc}
			if r := it.Other; r != nil {
				if r.MinLength > 0 {
					p["minLength"] = r.MinLength
				}
				if r.MaxLength > 0 {
					p["maxLength"] = r.MaxLength
				}
			}
			props[name] = p
			if it.ShowIf == nil {
				required = append(required, name)
			}
			continue
		}
		defaults := domain.DefaultChoices(q.Questions)[i]
		labels := make([]any, len(it.Options))
		for j, o := range it.Options {
			labels[j] = o.Label
		}
		if it.MultiSelect {
			p := map[string]any{"type": "array", "title": title, "description": desc,
				"items": map[string]any{"type": "string", "enum": labels}}
			if len(defaults) > 0 {
				p["default"] = defaults
			}
			props[name] = p
		} else {
			p := map[string]any{"type": "string", "title": title, "description": desc, "enum": labels}
			if len(defaults) > 0 {
				p["default"] = defaults[0]
			}
			props[name] = p
		}
		props[name+"_other"] = map[string]any{"type": "string", "title": "Other (your own words)",
			"description": "Leave empty to use the choice above."}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}, names
}
