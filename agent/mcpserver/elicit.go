package mcpserver

import (
	"context"
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
	msg := "An agent is asking you"
	if q.Context != "" {
		msg += ":\n\n" + q.Context
	}
	if len(q.Questions) == 1 {
		msg = q.Questions[0].Question
	}
	msg += "\n\n(Also asked in " + q.Places() + "; the first answer anywhere counts.)"
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema})
	if ctx.Err() != nil {
		return true
	}
	if err != nil {
		s.log.Info("elicitation failed", "question", q.ID, "err", err)
		return false
	}
	if res.Action != "accept" {
		s.log.Info("elicitation not accepted; waiting for an answer elsewhere", "question", q.ID, "action", res.Action)
		return false
	}
	req := domain.RespondRequest{Answers: map[string]domain.StringList{}, RespondedBy: &domain.PersonRef{Person: who}}
	for i, it := range q.Questions {
		var chosen []string
		switch v := res.Content[names[i]].(type) {
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
		if other, _ := res.Content[names[i]+"_other"].(string); strings.TrimSpace(other) != "" {
			if it.MultiSelect {
				chosen = append(chosen, strings.TrimSpace(other))
			} else {
				chosen = []string{strings.TrimSpace(other)}
			}
		}
		req.Answers[it.Question] = chosen
	}
	if err := answer(context.WithoutCancel(ctx), q.ID, req, who); err != nil {
		s.log.Info("the host user's answer was not taken", "question", q.ID, "err", err)
	}
	return false
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
		if it.OpenEnded() {
			props[name] = map[string]any{"type": "string", "title": title, "description": it.Question}
			required = append(required, name)
			continue
		}
		labels := make([]any, len(it.Options))
		for j, o := range it.Options {
			labels[j] = o.Label
		}
		if it.MultiSelect {
			props[name] = map[string]any{"type": "array", "title": title, "description": it.Question,
				"items": map[string]any{"type": "string", "enum": labels}}
		} else {
			props[name] = map[string]any{"type": "string", "title": title, "description": it.Question, "enum": labels}
		}
		props[name+"_other"] = map[string]any{"type": "string", "title": "Other (your own words)",
			"description": "Leave empty to use the choice above."}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}, names
}
