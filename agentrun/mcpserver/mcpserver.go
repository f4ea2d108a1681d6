// Package mcpserver is askbridge's MCP server: one tool, ask_user, in the
// shape of Claude Code's AskUserQuestion, that posts the question through a
// bridge and blocks until someone answers (bridge mcp).
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/agentrun/client"
	"github.com/askbridge/askbridge/core"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolName is the name of the tool.
const ToolName = "ask_user"

// DefaultProgressEvery is how often a waiting call reports progress.
const DefaultProgressEvery = 15 * time.Second

// Config configures the server.
type Config struct {
	Client  *client.Client
	Route   string // BRIDGE_ROUTE: route of every question ("" = the agent's or the default)
	AgentID string // BRIDGE_AGENT_ID ("" = the MCP client's name, else "mcp")
	// RunID (BRIDGE_RUN_ID) puts every question in that run; else each MCP
	// session is one run.
	RunID string
	// ProgressEvery is the interval of progress notifications (default 15s).
	ProgressEvery time.Duration
	// Version is reported to clients.
	Version string
	Logger  *slog.Logger
}

// Server is the MCP server.
type Server struct {
	cfg    Config
	server *mcp.Server
	log    *slog.Logger

	mu   sync.Mutex
	runs map[*mcp.ServerSession]string
}

// Item is one question of an ask_user call.
type Item struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
}

// Option is one choice of an item.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Input is the ask_user input: Claude Code's AskUserQuestion shape.
type Input struct {
	Questions []Item `json:"questions"`
}

// Output is the structured result of ask_user.
type Output struct {
	// Status: answered, expired or cancelled.
	Status string `json:"status"`
	// Answers maps each question to the chosen label(s), joined with ", ",
	// or the person's own words.
	Answers map[string]string `json:"answers"`
	// Selections are the same as lists.
	Selections map[string][]string `json:"selections"`
	QuestionID string              `json:"question_id"`
}

const toolDescription = `Ask a person on the team a question and wait for their answer. The question is posted where the team works (Slack, Discord or the askbridge web inbox) and this call blocks until someone answers, it expires, or it is dismissed.

Use it when you need a decision, preference or piece of information that only a person can give and guessing would risk wasted or harmful work: choosing between approaches, confirming a destructive or costly step, clarifying an ambiguous requirement. Do not use it for things you can find out yourself, or to report progress.

Ask 1-4 related questions in one call. Give each 2-4 short, distinct options with a one-line description of the trade-off, or no options for an open-ended question. Do not add an "Other" option: the person can always answer in their own words instead ("Other" is added automatically). If you recommend an option, put it first and end its label with "(Recommended)".`

func intp(n int) *int { return &n }

// InputSchema is the JSON schema of the ask_user input.
func InputSchema() *jsonschema.Schema {
	option := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"label": {Type: "string", MinLength: intp(1), MaxLength: intp(core.MaxLabelLen),
				Description: "The text of the choice the person clicks, 1-5 words."},
			"description": {Type: "string", MaxLength: intp(core.MaxDescriptionLen),
				Description: "What choosing this option means or implies."},
		},
		Required: []string{"label", "description"},
	}
	item := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"question": {Type: "string", MinLength: intp(1), MaxLength: intp(core.MaxQuestionLen),
				Description: "The complete question, ending with a question mark. Include the context the person needs to answer it without reading your conversation."},
			"header": {Type: "string", MinLength: intp(1), MaxLength: intp(core.MaxHeaderLen),
				Description: "A very short label shown as a chip, at most 12 characters (e.g. \"Auth method\", \"Deploy\")."},
			"options": {Type: "array", Items: option, MaxItems: intp(core.MaxOptions),
				Description: "2-4 choices, or omit (or leave empty) for an open-ended question answered in free text. Do not include an \"Other\" option; it is added automatically."},
			"multiSelect": {Type: "boolean",
				Description: "true lets the person choose several options; answers are then joined with \", \"."},
		},
		Required: []string{"question", "header"},
	}
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"questions": {Type: "array", Items: item, MinItems: intp(1), MaxItems: intp(core.MaxItems),
				Description: "1-4 questions asked together; the person answers all of them at once."},
		},
		Required:             []string{"questions"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// New builds the server.
func New(cfg Config) *Server {
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = DefaultProgressEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	s := &Server{cfg: cfg, log: cfg.Logger, runs: map[*mcp.ServerSession]string{}}
	s.server = mcp.NewServer(&mcp.Implementation{Name: "askbridge", Title: "askbridge", Version: cfg.Version},
		&mcp.ServerOptions{Logger: cfg.Logger,
			Instructions: "ask_user asks a person on the team and waits for the answer. Use it for decisions only a person can make."})
	mcp.AddTool(s.server, &mcp.Tool{
		Name: ToolName, Title: "Ask the user", Description: toolDescription, InputSchema: InputSchema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolp(true)},
	}, s.askUser)
	return s
}

func boolp(b bool) *bool { return &b }

// MCP returns the underlying SDK server (to serve other transports).
func (s *Server) MCP() *mcp.Server { return s.server }

// Serve runs one MCP session over r and w (stdin and stdout of bridge mcp)
// until the client disconnects or ctx ends.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.server.Run(ctx, &mcp.IOTransport{Reader: readCloser{r}, Writer: writeCloser{w}})
	if err != nil && (errors.Is(err, io.EOF) || strings.Contains(err.Error(), "server is closing")) {
		return nil
	}
	return err
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }

// runFor returns the run of a session: BRIDGE_RUN_ID, else one per session.
func (s *Server) runFor(ss *mcp.ServerSession) string {
	if s.cfg.RunID != "" {
		return s.cfg.RunID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.runs[ss]; ok {
		return id
	}
	id := "mcp-" + uuid.NewString()
	s.runs[ss] = id
	return id
}

func (s *Server) agent(ss *mcp.ServerSession) (id, name string) {
	if ss != nil {
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			name = p.ClientInfo.Title
			if name == "" {
				name = p.ClientInfo.Name
			}
			id = strings.Join(strings.Fields(p.ClientInfo.Name), "-")
		}
	}
	if s.cfg.AgentID != "" {
		id = s.cfg.AgentID
	}
	if id == "" {
		id = "mcp"
	}
	return id, name
}

func (s *Server) askUser(ctx context.Context, req *mcp.CallToolRequest, in Input) (*mcp.CallToolResult, Output, error) {
	out := Output{Answers: map[string]string{}, Selections: map[string][]string{}}
	agentID, agentName := s.agent(req.Session)
	ask := &core.AskRequest{RunID: s.runFor(req.Session), AgentID: agentID, AgentName: agentName, Route: s.cfg.Route}
	for _, it := range in.Questions {
		item := core.Item{Question: it.Question, Header: it.Header, MultiSelect: it.MultiSelect}
		for _, o := range it.Options {
			item.Options = append(item.Options, core.Option{Label: o.Label, Description: o.Description})
		}
		ask.Questions = append(ask.Questions, item)
	}
	asked, err := s.cfg.Client.Ask(ctx, ask)
	if err != nil {
		return errorResult(notSent(err)), out, nil
	}
	s.log.Info("question asked", "question", asked.ID, "run", asked.RunID, "reattached", asked.Replayed)
	q := &asked.Question
	if !q.Status.Final() {
		stop := s.progress(ctx, req, q)
		q, err = s.cfg.Client.Wait(ctx, asked.ID)
		stop()
		if err != nil {
			if ctx.Err() != nil {
				// The client gave up (cancelled or timed out). The question
				// stays pending: the same call repeated re-attaches to it.
				s.log.Info("call ended before an answer; question left pending", "question", asked.ID)
				return nil, out, ctx.Err()
			}
			return errorResult(fmt.Sprintf("Waiting for the answer to question %s failed: %v. The question is still open; you may call ask_user again with the same questions to keep waiting, or continue without the answer.", asked.ID, err)), out, nil
		}
	}
	out.Status, out.QuestionID = string(q.Status), q.ID
	for k, v := range q.Answers {
		out.Answers[k] = v
	}
	for k, v := range q.Selections {
		out.Selections[k] = v
	}
	if q.Status == core.StatusAnswered {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: AnsweredText(q)}}}, out, nil
	}
	return errorResult(NoAnswerText(q)), out, nil
}

// progress sends a progress notification every ProgressEvery while the
// call waits, if the client gave a progress token. stop ends it.
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest, q *core.Question) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	where := q.Places()
	go func() {
		defer close(done)
		t := time.NewTicker(s.cfg.ProgressEvery)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			msg := fmt.Sprintf("waiting for an answer in %s — expires in %s", where, core.HumanDuration(time.Until(q.ExpiresAt)))
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(n), Message: msg,
			}); err != nil && ctx.Err() == nil {
				s.log.Warn("progress notification failed", "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// AnsweredText is the tool result text of an answered question, in Claude
// Code's AskUserQuestion phrasing.
func AnsweredText(q *core.Question) string {
	parts := make([]string, 0, len(q.Questions))
	for _, it := range q.Questions {
		parts = append(parts, fmt.Sprintf("%q=%q", it.Question, q.Answers[it.Question]))
	}
	return "User has answered your questions: " + strings.Join(parts, ", ") +
		". You can now continue with the user's answers in mind."
}

// NoAnswerText tells the model plainly that no answer came and that it
// should continue without one.
func NoAnswerText(q *core.Question) string {
	const cont = " Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made. Do not ask the same question again."
	switch {
	case q.Status == core.StatusExpired:
		return fmt.Sprintf("No answer: the question expired at %s before anyone answered.", q.ExpiresAt.Format(time.RFC3339)) + cont
	case q.Status == core.StatusCancelled && q.CancelReason == core.CancelUser:
		by := "The user"
		if q.RespondedBy != nil {
			by = q.RespondedBy.String()
		}
		return by + " dismissed the question without answering." + cont
	case q.Status == core.StatusCancelled && q.CancelReason == core.CancelSuperseded:
		return "No answer: the question was replaced by a newer question of this run." + cont
	case q.Status == core.StatusCancelled:
		return "No answer: the question was withdrawn." + cont
	}
	return fmt.Sprintf("No answer: the question is %s.", q.Status) + cont
}

func notSent(err error) string {
	var e *core.Error
	if errors.As(err, &e) {
		msg := "The question was not sent: " + e.Message
		if len(e.Details) > 0 {
			var ps []string
			for _, d := range e.Details {
				ps = append(ps, d.Field+": "+d.Problem)
			}
			msg += " (" + strings.Join(ps, "; ") + "). Fix these and call ask_user again."
		} else {
			msg += ". Continue without asking."
		}
		return msg
	}
	return "The question was not sent: the askbridge server could not be reached (" + err.Error() + "). Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made."
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
