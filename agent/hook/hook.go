// Package hook is the Claude Code hook of askbridge (askbridge hook
// claude-code). It reads one hook event as JSON on stdin and answers it on
// stdout after asking people through the bridge:
//
//   - AskUserQuestion (PreToolUse, or the PermissionRequest Claude Code
//     raises when no PreToolUse hook answered): the questions are asked
//     through the bridge and the answers handed to Claude Code as
//     updatedInput, keyed by the original question strings.
//   - PermissionRequest for other tools, and PreToolUse for tools matched
//     by --approve patterns: an approval (Allow / Deny) is asked.
//
// A PermissionRequest hook follows the session transcript: it re-attaches
// to what a PreToolUse hook already asked for the same tool call, and
// withdraws its question once the person decided in the terminal. The
// first approval of a turn asks for the turn's sibling calls too, as one
// batch; a PostToolUse event withdraws an approval of a call that ran
// without its hook (batch.go).
//
// Exit codes (Claude Code treats 2 as "block the tool call", so the hook
// never uses it):
//
//	0  a decision was printed on stdout, or nothing was printed: no answer in
//	   time (Claude Code falls back to its own dialog) or an event this hook
//	   does not handle (a PreToolUse for a tool no --approve pattern matches)
//	1  the input was malformed or unknown, the flags were wrong, or the bridge
//	   refused or could not be reached: a message on stderr, nothing on stdout;
//	   Claude Code shows the message and carries on as without the hook
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/internal/reach"
	"github.com/askbridge/askbridge/domain"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	// ExitUsage is ExitError: exit 2 would make Claude Code block the tool.
	ExitUsage = 1
)

// Defaults.
const (
	DefaultTimeout = 9 * time.Minute
	DefaultAgent   = "claude-code"
	// MaxInput bounds the hook JSON read from stdin.
	MaxInput = 4 << 20
	// ReadTimeout bounds reading stdin, so a hook run by hand never hangs.
	ReadTimeout = 30 * time.Second
)

// Env is the bridge connection (BRIDGE_URL, BRIDGE_TOKEN, BRIDGE_PROJECT,
// BRIDGE_ROUTE, BRIDGE_AGENT_ID) and the agent run's W3C trace context
// (TRACEPARENT, TRACESTATE), sent with the ask so the question joins the
// run's trace.
type Env struct {
	URL, Token, Project, Route, AgentID string
	Traceparent, Tracestate             string
}

// Input is a Claude Code hook event.
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	// PermissionSuggestions are the "always allow" rules a
	// PermissionRequest offers; one a person chooses is returned as
	// updatedPermissions.
	PermissionSuggestions []json.RawMessage `json:"permission_suggestions"`
	// Set inside a subagent.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
}

// Output is what the hook prints.
type Output struct {
	HookSpecificOutput any `json:"hookSpecificOutput"`
}

// PreToolUseOutput answers a PreToolUse event.
type PreToolUseOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             any    `json:"updatedInput,omitempty"`
}

// PermissionRequestOutput answers a PermissionRequest event.
type PermissionRequestOutput struct {
	HookEventName string   `json:"hookEventName"`
	Decision      Decision `json:"decision"`
}

// Decision is the behaviour of a PermissionRequest answer.
type Decision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
	// UpdatedInput replaces the tool's input on allow (AskUserQuestion:
	// the questions with their answers; an approval: the arguments a
	// person edited).
	UpdatedInput any `json:"updatedInput,omitempty"`
	// UpdatedPermissions are the "always allow" rules a person chose among
	// the request's permission_suggestions (allow only).
	UpdatedPermissions []json.RawMessage `json:"updatedPermissions,omitempty"`
}

// config is the parsed flags.
type config struct {
	agent     string
	timeout   time.Duration
	onTimeout string
	approve   []string
	route     string
	poll      time.Duration
}

type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

const usage = `usage: askbridge hook claude-code [flags] < hook-input.json

Answers Claude Code hook events through askbridge: AskUserQuestion (PreToolUse
or PermissionRequest) becomes a question in Slack/Discord/the web inbox; other
PermissionRequests and PreToolUse for --approve tools become an Allow/Deny
approval.

exit codes: 0 decision printed, or nothing printed (no answer in time: Claude
Code shows its own dialog; or a tool this hook does not handle); 1 malformed
or unknown input, bad flags, or the bridge failed (message on stderr).`

// Run runs the hook: args are the flags after "hook claude-code".
func Run(ctx context.Context, args []string, env Env, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hook claude-code", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, usage+"\n\nflags:"); fs.PrintDefaults() }
	var cfg config
	var approve stringsFlag
	fs.StringVar(&cfg.agent, "agent", "", `agent id of the questions (default BRIDGE_AGENT_ID, else "claude-code")`)
	fs.DurationVar(&cfg.timeout, "timeout", DefaultTimeout, "how long to wait for an answer; keep it under the hook's timeout in settings.json")
	fs.StringVar(&cfg.onTimeout, "on-timeout", "fallback", `no answer in time: "fallback" (Claude Code asks in the terminal) or "deny"`)
	fs.Var(&approve, "approve", `ask for approval before a tool runs (PreToolUse), e.g. "Bash(rm *)", "mcp__*__deploy"; repeatable`)
	fs.StringVar(&cfg.route, "route", "", "route of the questions (default BRIDGE_ROUTE)")
	fs.DurationVar(&cfg.poll, "poll", client.DefaultPollTimeout, "long-poll interval (testing)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "askbridge hook claude-code: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	if cfg.onTimeout != "fallback" && cfg.onTimeout != "deny" {
		fmt.Fprintf(stderr, "askbridge hook claude-code: --on-timeout must be fallback or deny, got %q\n", cfg.onTimeout)
		return ExitUsage
	}
	if cfg.timeout <= 0 {
		fmt.Fprintf(stderr, "askbridge hook claude-code: --timeout must be positive, got %s\n", cfg.timeout)
		return ExitUsage
	}
	for _, p := range approve {
		if _, err := parsePattern(p); err != nil {
			fmt.Fprintf(stderr, "askbridge hook claude-code: --approve %q: %v\n", p, err)
			return ExitUsage
		}
	}
	cfg.approve = approve
	cfg.agent = firstNonEmpty(cfg.agent, env.AgentID, DefaultAgent)
	cfg.route = firstNonEmpty(cfg.route, env.Route)

	raw, err := readInput(ctx, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "askbridge hook claude-code: %v\n", err)
		return ExitError
	}
	in, err := parseInput(raw)
	if err != nil {
		fmt.Fprintf(stderr, "askbridge hook claude-code: %v\n", err)
		return ExitError
	}
	h := &hook{cfg: cfg, in: in, stderr: stderr,
		c: client.New(env.URL, env.Token, env.Project, client.WithUserAgent("askbridge-hook"), client.WithPollTimeout(cfg.poll),
			client.WithTraceContext(env.Traceparent, env.Tracestate), client.WithNotices(onceEach(stderr)))}
	out, err := h.handle(ctx)
	if err != nil {
		if msg := reach.Problem(env.URL, err); msg != "" {
			fmt.Fprintf(stderr, "askbridge hook claude-code: %s\n", msg)
			return ExitError
		}
		fmt.Fprintf(stderr, "askbridge hook claude-code: %v\n", err)
		return ExitError
	}
	if out == nil {
		return ExitOK
	}
	b, _ := json.Marshal(out)
	fmt.Fprintln(stdout, string(b))
	return ExitOK
}

// readInput reads stdin, refusing a terminal, oversized input and a writer
// that never closes.
func readInput(ctx context.Context, r io.Reader) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, errors.New("expects the hook event as JSON on stdin (it is run by Claude Code, see docs/agents.md)")
		}
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, fmt.Errorf("reading stdin: %w", res.err)
		}
		if len(res.b) > MaxInput {
			return nil, fmt.Errorf("hook input larger than %d bytes", MaxInput)
		}
		return res.b, nil
	case <-time.After(ReadTimeout):
		return nil, fmt.Errorf("no hook input on stdin within %s", ReadTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func parseInput(raw []byte) (*Input, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, errors.New("empty input: expected the hook event as JSON on stdin")
	}
	var in Input
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("input is not a hook event (JSON object expected): %v", err)
	}
	if dec.More() {
		return nil, errors.New("input has data after the hook event's JSON object")
	}
	if in.HookEventName == "" {
		return nil, errors.New("input has no hook_event_name")
	}
	return &in, nil
}

type hook struct {
	cfg    config
	in     *Input
	c      *client.Client
	stderr io.Writer
	// tr follows the session transcript while a PermissionRequest waits.
	tr *transcript
}

func (h *hook) handle(ctx context.Context) (*Output, error) {
	switch h.in.HookEventName {
	case "PreToolUse":
		if h.in.ToolName == "" {
			return nil, errors.New("PreToolUse input has no tool_name")
		}
		if h.in.ToolName == "AskUserQuestion" {
			return h.askUserQuestion(ctx)
		}
		if h.wouldAsk(h.in.ToolName, h.in.ToolInput) {
			h.followTranscript(ctx)
			defer h.sweep(ctx)()
			return h.approval(ctx)
		}
		return nil, nil // not ours: the normal permission flow goes on
	case "PostToolUse":
		// The call ran: an approval still waiting for it (asked with a
		// sibling, its own hook never came) is withdrawn.
		h.followTranscript(ctx)
		h.sweep(ctx)()
		return nil, nil
	case "PermissionRequest":
		if h.in.ToolName == "" {
			return nil, errors.New("PermissionRequest input has no tool_name")
		}
		h.findToolCall(ctx)
		defer h.sweep(ctx)()
		if h.in.ToolName == "AskUserQuestion" {
			// Claude Code raises this when no PreToolUse hook answered:
			// the answer is the questions' answers, not an "Allow".
			return h.askUserQuestion(ctx)
		}
		return h.approval(ctx)
	}
	return nil, fmt.Errorf("unsupported hook event %q: configure this hook for PreToolUse (AskUserQuestion and --approve tools), PermissionRequest and PostToolUse", h.in.HookEventName)
}

// askUserQuestion asks AskUserQuestion's questions (PreToolUse or
// PermissionRequest) and hands the answers to Claude Code as updatedInput.
func (h *hook) askUserQuestion(ctx context.Context) (*Output, error) {
	event := h.in.HookEventName
	ai, err := parseAskInput(h.in.ToolInput)
	if err != nil {
		return nil, err
	}
	shown := ai.display()
	req := &domain.AskRequest{RunID: h.in.SessionID, AgentID: h.cfg.agent, AgentName: "Claude Code",
		Questions: shown, Route: h.cfg.route, IdempotencyKey: h.in.ToolUseID,
		Context: h.contextLine()}
	if h.in.AgentID != "" {
		// A subagent: the bridge refuses it, like Claude Code itself.
		req.RunID = h.in.SessionID + "/" + h.in.AgentID
		req.ParentRunID = h.in.SessionID
	}
	w, err := h.askAndWait(ctx, req)
	if err != nil {
		if domain.ErrorCode(err) == domain.ESubagentNotAllowed {
			return h.deny("only parent conversations can ask user questions: ask the parent agent to ask the user"), nil
		}
		if msg := questionsProblems(err); msg != "" {
			return h.deny(msg), nil
		}
		return nil, err
	}
	q := w.q
	switch {
	case w.terminal:
		return nil, nil
	case w.timedOut:
		return h.onTimeout(event, "No answer came through askbridge within "+h.cfg.timeout.String()+"."), nil
	case q.Status == domain.StatusAnswered:
		return h.allow("", ai.updatedInput(ai.answers(q, shown))), nil
	case q.Status == domain.StatusCancelled && q.CancelReason == domain.CancelUser:
		return h.deny(dismissed(q)), nil
	}
	// Expired, superseded or withdrawn: Claude Code asks in the terminal.
	fmt.Fprintf(h.stderr, "askbridge hook claude-code: question %s %s; Claude Code will ask in the terminal\n", q.ID, describe(q))
	return h.onTimeout(event, "No answer came through askbridge: the question "+describe(q)+"."), nil
}

// approval handles PermissionRequest and PreToolUse for --approve tools.
// The call's siblings in the transcript that this hook would ask for too
// are asked with it, as one batch (batch.go).
func (h *hook) approval(ctx context.Context) (*Output, error) {
	event := h.in.HookEventName
	req := h.approvalRequest(h.in.ToolName, h.in.ToolInput, h.in.ToolUseID, h.action())
	w, err := h.askAndWait(ctx, req, h.siblingsToAsk(ctx)...)
	if err != nil {
		return nil, err
	}
	if w.terminal {
		return nil, nil
	}
	if w.timedOut {
		return h.onTimeout(event, "No approval came through askbridge within "+h.cfg.timeout.String()+"."), nil
	}
	q := w.q
	switch {
	case q.Status == domain.StatusAnswered && q.Decision != nil:
		return h.decided(q), nil
	case q.Status == domain.StatusAnswered:
		ans := strings.TrimSpace(q.Answers[q.Questions[0].Question])
		by := responder(q, "the user")
		switch {
		case q.Reason != "": // Deny with note: the note, as typed
			return h.deny(said(by, q.Reason)), nil
		case strings.EqualFold(ans, "Allow"):
			return h.allow("Allowed by "+by+" via askbridge.", nil), nil
		case strings.EqualFold(ans, "Deny"):
			return h.deny("Denied by " + by + " via askbridge."), nil
		default:
			return h.deny(said(by, ans)), nil
		}
	case q.Status == domain.StatusCancelled && q.CancelReason == domain.CancelUser:
		return h.deny(dismissed(q)), nil
	}
	fmt.Fprintf(h.stderr, "askbridge hook claude-code: approval %s %s; Claude Code will ask in the terminal\n", q.ID, describe(q))
	return h.onTimeout(event, "No approval came through askbridge: the request "+describe(q)+"."), nil
}

// allow answers the event with an allow decision; reason is shown for
// PreToolUse only (a PermissionRequest allow carries none).
func (h *hook) allow(reason string, updated any) *Output {
	if h.in.HookEventName == "PermissionRequest" {
		return &Output{HookSpecificOutput: PermissionRequestOutput{HookEventName: "PermissionRequest",
			Decision: Decision{Behavior: "allow", UpdatedInput: updated}}}
	}
	return preToolUse("allow", reason, updated)
}

func (h *hook) deny(msg string) *Output {
	if h.in.HookEventName == "PermissionRequest" {
		return &Output{HookSpecificOutput: PermissionRequestOutput{HookEventName: "PermissionRequest",
			Decision: Decision{Behavior: "deny", Message: msg}}}
	}
	return preToolUse("deny", msg, nil)
}

func (h *hook) onTimeout(event, reason string) *Output {
	if h.cfg.onTimeout == "deny" {
		return h.deny(reason)
	}
	if event == "PreToolUse" && h.in.ToolName != "AskUserQuestion" {
		// An approved-by-pattern tool: make Claude Code ask in the terminal
		// rather than run it under the usual rules.
		return preToolUse("ask", reason, nil)
	}
	return nil
}

func (h *hook) contextLine() string {
	var parts []string
	if h.in.Cwd != "" {
		parts = append(parts, "in `"+h.in.Cwd+"`")
	}
	if h.in.AgentType != "" {
		parts = append(parts, "subagent "+h.in.AgentType)
	}
	if len(parts) == 0 {
		return "Claude Code session " + h.in.SessionID
	}
	return "Claude Code session " + h.in.SessionID + " (" + strings.Join(parts, ", ") + ")"
}

func preToolUse(decision, reason string, updated any) *Output {
	return &Output{HookSpecificOutput: PreToolUseOutput{HookEventName: "PreToolUse", PermissionDecision: decision,
		PermissionDecisionReason: reason, UpdatedInput: updated}}
}

func dismissed(q *domain.Question) string {
	by := responder(q, "The user")
	return by + " dismissed the question without answering (via askbridge). Continue without the answer."
}

func describe(q *domain.Question) string {
	switch q.Status {
	case domain.StatusExpired:
		return "expired"
	case domain.StatusCancelled:
		return "was cancelled (" + q.CancelReason + ")"
	}
	return "is " + string(q.Status)
}

// approvalKey makes repeated deliveries of the same permission prompt
// re-attach, and a PermissionRequest re-attach to the PreToolUse approval
// of the same tool call: the tool_use_id (sent with PreToolUse, read from
// the transcript for PermissionRequest).
func approvalKey(in *Input) string {
	if in.ToolUseID == "" {
		return ""
	}
	return "approval:" + in.ToolUseID
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// responder names who answered q on one line, made visible (a chat display
// name is the person's own text), or def.
func responder(q *domain.Question, def string) string {
	if q.RespondedBy == nil {
		return def
	}
	return domain.Visible(strings.Join(strings.Fields(q.RespondedBy.String()), " "))
}

// said is a denial that carries the person's own words, quoted as the
// resume webhook and the MCP tool quote them (escapes and line breaks
// written out), so the model can always tell them from the bridge's.
func said(by, words string) string {
	return fmt.Sprintf("Denied by %s via askbridge, who said: %q", by, words)
}

// onceEach prints each notice of the bridge (what it ignored or guessed)
// once on w.
func onceEach(w io.Writer) func(string) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(n string) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[n] {
			seen[n] = true
			fmt.Fprintf(w, "askbridge hook claude-code: note: %s\n", n)
		}
	}
}
