package mcpserver

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskForm is the form a waiting task offers the host's user in its
// inputRequests, or nil: only under 2026-07-28 (where a form rides in the
// task, SEP-2322) to a host that declared form elicitation, when the bridge
// takes answers from hosts (Caller.Answer) and the host's user may answer
// the question and has not voted on it yet.
func (s *Server) taskForm(ss *mcp.ServerSession, who Caller, q *domain.Question) *mcp.ElicitParams {
	if q.Status.Final() || who.Answer == nil || !formInTask(ss) {
		return nil
	}
	person := s.taskPerson(ss, q)
	if !domain.Allowed(q.Responders, person) || voted(q, person) {
		return nil
	}
	schema, _ := elicitSchema(q)
	return &mcp.ElicitParams{Mode: "form", Message: formMessage(q), RequestedSchema: schema}
}

// formInTask reports a 2026-07-28 host that declared form elicitation.
func formInTask(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil || p.ProtocolVersion < mrtrProtocol {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // no mode named: form
}

func voted(q *domain.Question, who domain.Person) bool {
	for _, v := range q.Votes {
		if v.By.Key() == who.Key() {
			return true
		}
	}
	return false
}

// taskPerson is the host's user answering q's form.
func (s *Server) taskPerson(ss *mcp.ServerSession, q *domain.Question) domain.Person {
	_, name := s.agent(ss, "")
	return hostUser(q.AgentID, name)
}

// taskUpdate takes the host user's answer from the task's form. It goes
// through the same path as a click (Caller.Answer: responders, approvals,
// the first answer anywhere wins). A response to no outstanding form (the
// question was answered elsewhere first) is ignored, as the extension says.
func (s *Server) taskUpdate(ctx context.Context, r *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	who, q, err := s.taskCall(ctx, r)
	if err != nil {
		return nil, err
	}
	raw, ok := r.Params.InputResponses[taskInputKey]
	if !ok || s.taskForm(r.Session, who, q) == nil {
		return ack(), nil
	}
	var res mcp.ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: `inputResponses.answer is not a form's result: send {"action": "accept", "content": {...}}`}
	}
	if res.Action != "accept" {
		// Declined at the host: the question waits for an answer elsewhere.
		s.log.Info("task form not accepted; waiting for an answer elsewhere", "question", q.ID, "action", res.Action)
		return ack(), nil
	}
	person := s.taskPerson(r.Session, q)
	_, names := elicitSchema(q)
	if err := who.Answer(context.WithoutCancel(ctx), q.ID, formAnswer(q, names, res.Content, person), person); err != nil {
		var e *domain.Error
		if errors.As(err, &e) && e.Code == domain.EInvalidAnswer {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: "the answer was not recorded: " + answerProblems(e) + ". Fix it and send tasks/update again."}
		}
		// Answered elsewhere first, expired or withdrawn: nothing is
		// outstanding any more; tasks/get tells the outcome.
		s.log.Info("the host user's answer to a task was not taken", "question", q.ID, "err", err)
	}
	return ack(), nil
}
