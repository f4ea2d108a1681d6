package hook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// findToolCall learns the tool call a PermissionRequest is about from the
// session transcript: its tool_use_id (the event carries none) makes the
// hook re-attach to what a PreToolUse hook already asked about this call
// instead of posting it twice.
func (h *hook) findToolCall(ctx context.Context) {
	if h.in.TranscriptPath == "" {
		return
	}
	h.tr = newTranscript(h.in.TranscriptPath)
	if h.in.ToolUseID == "" {
		h.in.ToolUseID = h.tr.lookup(ctx, h.in.ToolName, h.in.ToolInput)
	}
}

// waited is how a wait ended: q is final, or the hook gave up (timedOut),
// or the person decided in the terminal first; in both of the latter the
// question was withdrawn.
type waited struct {
	q                  *domain.Question
	timedOut, terminal bool
}

var errDecidedInTerminal = errors.New("decided in the terminal")

// askAndWait asks and waits up to the timeout. On giving up, and when the
// transcript shows the person decided in the terminal, the question is
// withdrawn (docs/agents.md "Webhook mode"), as it is when Claude Code stops the hook.
// With siblings (an approval's parallel tool calls), they are asked with
// it as one batch; only this hook's own call is waited for (and withdrawn).
func (h *hook) askAndWait(ctx context.Context, req *domain.AskRequest, siblings ...domain.BatchCall) (waited, error) {
	// The question outlives the hook a little, so the hook's own deadline,
	// not the bridge's expiry, decides and withdraws it.
	d := domain.Duration(h.cfg.timeout + time.Minute)
	req.Timeout = &d
	// The create is not cut by Claude Code stopping the hook: a question
	// the bridge created must come back to be withdrawn.
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	asked, err := h.ask(actx, req, siblings)
	acancel()
	if err != nil {
		return waited{}, err
	}
	if asked.Status.Final() {
		return waited{q: &asked.Question}, nil
	}
	wctx, cancel := context.WithTimeout(ctx, h.cfg.timeout)
	defer cancel()
	wctx, stop := context.WithCancelCause(wctx)
	defer stop(nil)
	if h.tr != nil {
		go h.tr.watch(wctx, h.in.ToolUseID, h.in.ToolName, h.in.ToolInput, func() { stop(errDecidedInTerminal) })
	}
	q, err := h.c.Wait(wctx, asked.ID)
	if err == nil {
		return waited{q: q}, nil
	}
	if wctx.Err() == nil {
		return waited{}, err
	}
	terminal := errors.Is(context.Cause(wctx), errDecidedInTerminal)
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer ccancel()
	if cq, cerr := h.c.Cancel(cctx, asked.ID, domain.CancelAgent); cerr != nil {
		// Answered at the last moment? Then use the answer.
		if fq, gerr := h.c.Get(cctx, asked.ID); gerr == nil && fq.Status == domain.StatusAnswered && !terminal {
			return waited{q: fq}, nil
		}
		fmt.Fprintf(h.stderr, "askbridge hook claude-code: withdrawing question %s failed: %v\n", asked.ID, cerr)
	} else if cq.Status == domain.StatusAnswered && !terminal {
		return waited{q: cq}, nil
	}
	if terminal {
		fmt.Fprintf(h.stderr, "askbridge hook claude-code: %s was decided in the terminal; question %s withdrawn\n", h.in.ToolName, asked.ID)
		return waited{terminal: true}, nil
	}
	if ctx.Err() != nil {
		return waited{}, fmt.Errorf("stopped while waiting for question %s; question withdrawn", asked.ID)
	}
	return waited{timedOut: true}, nil
}
