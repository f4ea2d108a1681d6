// Package executor helps Go agent runtimes that embed askbridge pause a run
// while a question waits and continue it when the resume webhook arrives
// (docs/agents.md "Webhook mode"):
//
//  1. the ask_user tool calls Asker.Ask, which posts the question with the
//     runtime's resume URL and closes the run's PauseGate;
//  2. the agent loop checks the gate before its next model call, and when
//     it is paused, saves its state, calls Asker.Paused (the bridge accepts
//     answers from then on) and returns;
//  3. the bridge POSTs the signed resume webhook when someone answers (or
//     the question expires or is dismissed); a webhook.Receiver verifies it
//     and drops duplicates, and the runtime continues the conversation as
//     the new run (Resume.Run.ID, resumed_from the old one) with
//     ResumeMessage as the next user message.
package executor

import (
	"context"
	"errors"
	"sync"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/webhook"
	"github.com/askbridge/askbridge/domain"
)

// PauseGate tells an agent loop to stop before its next model call. The
// ask_user tool closes it; the loop checks it. Safe for concurrent use; the
// zero value is open.
type PauseGate struct {
	mu       sync.Mutex
	question *domain.Question
}

// Pause closes the gate for question q.
func (g *PauseGate) Pause(q *domain.Question) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.question = q
}

// Paused reports whether the loop must stop, and for which question.
func (g *PauseGate) Paused() (*domain.Question, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.question, g.question != nil
}

// Reset opens the gate again.
func (g *PauseGate) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.question = nil
}

// ResumeMessage is the user_message of docs/agents.md "Webhook mode" for a final question: what
// the agent asked and what came back, or that no answer came. The bridge
// sends the same text in the webhook body.
func ResumeMessage(q *domain.Question) string { return webhook.ResumeMessage(q) }

// Asker is the ask_user tool of an embedding runtime: it asks in webhook
// mode and pauses the run.
type Asker struct {
	Client    *client.Client
	ResumeURL string // where the bridge POSTs the resume webhook
	AgentID   string
	Gate      *PauseGate
}

// ErrNoResumeURL is returned when the Asker has no resume URL.
var ErrNoResumeURL = errors.New("executor: Asker needs a ResumeURL (webhook mode)")

// Ask posts req for run (webhook mode) and closes the gate unless the
// question is already final (an identical re-ask that was answered). It
// returns the sentence for the tool result.
func (a *Asker) Ask(ctx context.Context, runID string, req *domain.AskRequest) (*client.Asked, error) {
	if a.ResumeURL == "" {
		return nil, ErrNoResumeURL
	}
	r := *req
	r.RunID = runID
	if r.AgentID == "" {
		r.AgentID = a.AgentID
	}
	r.Resume = &domain.ResumeRequest{URL: a.ResumeURL}
	asked, err := a.Client.Ask(ctx, &r)
	if err != nil {
		return nil, err
	}
	if !asked.Status.Final() && a.Gate != nil {
		a.Gate.Pause(&asked.Question)
	}
	return asked, nil
}

// Paused reports to the bridge that the run's loop has stopped; answers are
// accepted from then on (before, respond gets 409 run_not_paused).
func (a *Asker) Paused(ctx context.Context, runID string) (*domain.Run, error) {
	return a.Client.PauseRun(ctx, runID)
}
