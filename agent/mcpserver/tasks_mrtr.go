package mcpserver

import (
	"context"
	"errors"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Multi round-trip (SEP-2322) for 2026-07-28 hosts without tasks: a server
// may no longer send the host a form while a call waits, so the call that
// asks returns at once with the question's form (resultType
// "input_required") and the question's id as requestState; the host shows
// the form and calls again with its user's response, which is recorded like
// a click, and that call waits for the outcome as today. The question was
// posted everywhere else meanwhile: the first answer anywhere wins.

// mrtrOffers reports whether a call offers the form by multi round-trip.
func mrtrOffers(ss *mcp.ServerSession, who Caller) bool {
	return who.Answer != nil && formInTask(ss)
}

// mrtrForm is the input-required result offering q's form, or nil when the
// host's user may not answer q (or q is no longer waiting).
func (s *Server) mrtrForm(ss *mcp.ServerSession, who Caller, q *domain.Question, refused string) *mcp.CallToolResult {
	form := s.taskForm(ss, who, q)
	if form == nil {
		return nil
	}
	if refused != "" {
		form.Message = "Not recorded: " + refused + "\n\n" + form.Message
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{taskInputKey: form}, RequestState: q.ID}
}

// mrtrRound takes a call retried with the requestState of an earlier
// round: the question it names (of this credential only) and the host
// user's response to its form. The call then waits for the question as a
// first call does; res, when set, is the call's result instead (the
// question is not this caller's, or the answer was refused: the form again,
// saying why).
func (s *Server) mrtrRound(ctx context.Context, req *mcp.CallToolRequest, who Caller) (asked *client.Asked, res *mcp.CallToolResult) {
	q, err := who.Backend.Get(ctx, req.Params.RequestState)
	if err != nil || !ownedBy(q, credentialKey(req.Extra)) {
		if err != nil && !isDomainError(err) {
			return nil, s.notSent(err, who.Backend)
		}
		return nil, invalidResult([]string{"requestState: not a question this credential asked; call ask_user again without requestState"})
	}
	if r, ok := req.Params.InputResponses[taskInputKey].(*mcp.ElicitResult); ok && r.Action == "accept" && s.taskForm(req.Session, who, q) != nil {
		person := s.taskPerson(req.Session, q)
		_, names := elicitSchema(q)
		if err := who.Answer(context.WithoutCancel(ctx), q.ID, formAnswer(q, names, r.Content, person), person); err != nil {
			var e *domain.Error
			if errors.As(err, &e) && e.Code == domain.EInvalidAnswer {
				if form := s.mrtrForm(req.Session, who, q, answerProblems(e)); form != nil {
					return nil, form
				}
			}
			s.log.Info("the host user's answer was not taken", "question", q.ID, "err", err)
		}
	}
	return &client.Asked{Question: *q, Replayed: true}, nil
}

func isDomainError(err error) bool {
	var e *domain.Error
	return errors.As(err, &e) && e.Code != domain.EInternal && e.Code != domain.EUnavailable
}
