package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
)

// Parallel tool calls (docs/agents.md "Parallel tool calls"): a model's
// turn may call several tools at once, and Claude Code runs their hooks one
// after another. The first hook of a turn asks for every sibling call of
// its assistant message that this hook configuration would ask for (its
// --approve patterns) as one batch, so people see and decide them
// together; each later hook re-attaches to its own call's record (keyed by
// the tool_use_id) and returns at once when it is decided. A sibling whose
// hook never comes (Claude Code let it through, or the turn was
// interrupted) is withdrawn once the transcript shows it ended: by the
// next hook of the session, or at once by a PostToolUse hook.

// wouldAsk reports whether this hook's --approve patterns ask about a call
// of tool with input before it runs.
func (h *hook) wouldAsk(tool string, input json.RawMessage) bool {
	for _, p := range h.cfg.approve {
		if pat, err := parsePattern(p); err == nil && pat.match(tool, input) {
			return true
		}
	}
	return false
}

// followTranscript opens the session transcript for a PreToolUse (or
// PostToolUse) event, which names its call: the hook reads the call's
// siblings and which calls ended from it.
func (h *hook) followTranscript(ctx context.Context) {
	if h.in.TranscriptPath == "" || h.tr != nil {
		return
	}
	h.tr = newTranscript(h.in.TranscriptPath)
	if h.in.ToolUseID == "" {
		h.in.ToolUseID = h.tr.lookup(ctx, h.in.ToolName, h.in.ToolInput)
		return
	}
	// The call is in the transcript before its hooks run; a moment's
	// wait covers a write that lags the hook's start.
	deadline := time.Now().Add(transcriptSettle)
	for {
		err := h.tr.poll()
		if _, ok := h.tr.open[h.in.ToolUseID]; ok || h.tr.done[h.in.ToolUseID] || time.Now().After(deadline) ||
			(err != nil && os.IsNotExist(err) && h.tr.off == 0) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(transcriptPoll / 4):
		}
	}
}

// siblingsToAsk are the approvals of this call's unresolved siblings (the
// other tool calls of its assistant message) that this hook would ask for
// — those its --approve patterns match — in the order the model made
// them, this call's own place marked by an empty BatchCall. A
// PermissionRequest hook cannot know which siblings Claude Code will let
// through without asking, so without --approve patterns it asks for its
// own call only (docs/agents.md). nil: no sibling to ask.
func (h *hook) siblingsToAsk(ctx context.Context) []domain.BatchCall {
	if h.tr == nil || h.in.ToolUseID == "" || len(h.cfg.approve) == 0 {
		return nil
	}
	h.settleTranscript(ctx) // calls written since the hook started, and still being written
	var out []domain.BatchCall
	for _, s := range h.tr.siblings(h.in.ToolUseID) {
		switch {
		case s.id == h.in.ToolUseID:
			out = append(out, domain.BatchCall{})
		case h.wouldAsk(s.name, s.input):
			req := h.approvalRequest(s.name, s.input, s.id, &domain.Action{Tool: s.name, Input: s.input})
			out = append(out, batchCall(req))
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// settleTranscript reads the transcript until this call is in it and it
// has stopped growing for a moment (at most transcriptSettle): Claude Code
// writes each tool_use block of an assistant message as a line of its own
// and was seen to run the first call's hook before its siblings' lines were
// on disk, so the first hook asked for its own call alone.
func (h *hook) settleTranscript(ctx context.Context) {
	deadline := time.Now().Add(transcriptSettle)
	last, quiet := int64(-1), 0
	for {
		_ = h.tr.poll()
		if h.tr.off == last {
			quiet++
		} else {
			last, quiet = h.tr.off, 0
		}
		if _, own := h.tr.open[h.in.ToolUseID]; (own && quiet >= 2) || time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(transcriptQuiet):
		}
	}
}

// approvalRequest is the approval of one tool call (this hook's, or a
// sibling's): "Allow Bash: rm -rf build?" with Allow / Deny, the call's
// action keyed by its tool_use_id.
func (h *hook) approvalRequest(tool string, input json.RawMessage, callID string, action *domain.Action) *domain.AskRequest {
	summary := summarize(tool, input)
	text := "Allow " + tool + "?"
	if summary != "" {
		text = "Allow " + tool + ": " + summary + "?"
	}
	if action != nil {
		action.CallID = callID
	}
	key := ""
	if callID != "" {
		key = "approval:" + callID
	}
	return &domain.AskRequest{RunID: h.in.SessionID, AgentID: h.cfg.agent, AgentName: "Claude Code",
		Kind: domain.KindApproval, Route: h.cfg.route, IdempotencyKey: key,
		Questions: []domain.Item{{Question: shorten(text, 300), Header: "Approval", Options: []domain.Option{
			{Label: "Allow", Description: "Let the agent run it"},
			{Label: "Deny", Description: "Refuse; Deny with note… tells the agent why"},
		}}},
		Context: h.contextLine() + "\n\n" + toolDetails(tool, input),
		Action:  action}
}

func batchCall(req *domain.AskRequest) domain.BatchCall {
	it := req.Questions[0]
	return domain.BatchCall{Question: it.Question, Header: it.Header, Options: it.Options, Context: req.Context,
		Action: req.Action, IdempotencyKey: req.IdempotencyKey}
}

// ask asks req, with its siblings (siblingsToAsk: req's place marked) as
// one batch when there are any, and returns req's own record.
func (h *hook) ask(ctx context.Context, req *domain.AskRequest, siblings []domain.BatchCall) (*client.Asked, error) {
	own := slices.IndexFunc(siblings, func(c domain.BatchCall) bool { return c.Action == nil && c.Question == "" })
	if len(siblings) < 2 || own < 0 {
		return h.c.Ask(ctx, req)
	}
	calls := slices.Clone(siblings)
	calls[own] = batchCall(req)
	b := &domain.BatchRequest{RunID: req.RunID, AgentID: req.AgentID, AgentName: req.AgentName, Route: req.Route,
		Timeout: req.Timeout, Approvals: calls}
	asked, err := h.c.AskBatch(ctx, b)
	if err != nil {
		return nil, err
	}
	if len(asked.Calls) != len(calls) {
		return nil, fmt.Errorf("the bridge returned %d records for a batch of %d calls", len(asked.Calls), len(calls))
	}
	return &client.Asked{Question: *asked.Calls[own], Message: asked.Message, Replayed: asked.Replayed}, nil
}

// withdrawnNote is what every copy of a sibling's approval says once it is
// withdrawn because its call ended without its hook.
const withdrawnNote = "Claude Code went on without asking about this call"

// sweep withdraws the session's approvals still waiting for a tool call
// that has ended — its result is in the transcript, or (PostToolUse) it
// just ran — without its own hook: a sibling asked with another call's
// batch that Claude Code let through, or that an interruption ended. It
// returns what waits for the withdrawals to finish (at most a few
// seconds), so a hook can do it while it waits for its own answer.
func (h *hook) sweep(ctx context.Context) (wait func()) {
	ran := ""
	if h.in.HookEventName == "PostToolUse" {
		ran = h.in.ToolUseID
	}
	if h.in.SessionID == "" || (h.tr == nil && ran == "") {
		return func() {}
	}
	// What ended, read now: the transcript is not shared with the
	// goroutine (the hook goes on reading it).
	ended := map[string]bool{}
	if h.tr != nil {
		_ = h.tr.poll()
		ended = maps.Clone(h.tr.done)
	}
	if ran != "" {
		ended[ran] = true
	}
	own := h.in.ToolUseID
	if ran != "" {
		own = ""
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		qs, err := h.c.RunQuestions(sctx, h.in.SessionID)
		if err != nil {
			return
		}
		for _, q := range qs {
			if q.Status != domain.StatusPending || q.Kind != domain.KindApproval || q.Action == nil || q.Action.CallID == "" {
				continue
			}
			if id := q.Action.CallID; id == own || !ended[id] {
				continue
			}
			if _, err := h.c.CancelWithNote(sctx, q.ID, domain.CancelAgent, withdrawnNote); err == nil {
				fmt.Fprintf(h.stderr, "askbridge hook claude-code: approval %s of %s withdrawn: %s\n", q.ID, q.Action.Tool, withdrawnNote)
			}
		}
	}()
	return wg.Wait
}
