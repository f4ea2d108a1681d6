// Package mcpserver is askbridge's MCP server: one tool, ask_user, in the
// shape of Claude Code's AskUserQuestion, that posts the question through a
// bridge and blocks until someone answers. It serves stdio (askbridge mcp) and
// Streamable HTTP (/mcp of askbridge serve).
package mcpserver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/admit"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolName is the name of the tool.
const ToolName = "ask_user"

// DefaultProgressEvery is how often a waiting call reports progress.
const DefaultProgressEvery = 15 * time.Second

// Backend is the bridge a call asks through: the HTTP API client for
// askbridge mcp, the in-process API for /mcp.
type Backend interface {
	Ask(ctx context.Context, req *domain.AskRequest) (*client.Asked, error)
	Wait(ctx context.Context, id string) (*domain.Question, error)
	// Get reads a question without waiting (tasks/get).
	Get(ctx context.Context, id string) (*domain.Question, error)
	Cancel(ctx context.Context, id, reason string) (*domain.Question, error)
}

// Canceler cancels a question: what withdraws the question of a session
// that ended (Backend's Cancel).
type Canceler interface {
	Cancel(ctx context.Context, id, reason string) (*domain.Question, error)
}

// Caller is who a call asks for, as the transport established it.
type Caller struct {
	Backend Backend
	// Withdraw, when set, is what withdraws the call's question should its
	// session end first, kept with the session instead of Backend (a
	// session may wait for hours, by the hundred thousand: keep it small).
	Withdraw Canceler
	// AgentID overrides the agent id ("" = Config.AgentID, else the MCP
	// client's name, else "mcp").
	AgentID string
	// RunID is a run the client named; "" = one run per call of the session.
	RunID string
	// Answer takes the host user's answer to an elicitation; nil = no
	// elicitation.
	Answer Answerer
	// Timeout is how long the call's question stays open (0 = Config.Timeout).
	Timeout time.Duration
}

// Config configures the server.
type Config struct {
	// Client is the bridge of every call (askbridge mcp). Ignored when
	// CallerFor is set.
	Client  *client.Client
	Route   string // BRIDGE_ROUTE: route of every question ("" = the agent's or the default)
	AgentID string // BRIDGE_AGENT_ID ("" = the MCP client's name, else "mcp")
	// RunID (BRIDGE_RUN_ID) puts every question in that run; it outlives
	// the session. Else every call gets a run of its own derived from the
	// session, withdrawn when the session ends.
	RunID string
	// CallerFor resolves each call's bridge and identity (Streamable HTTP:
	// from the request's token and headers).
	CallerFor func(req *mcp.CallToolRequest) (Caller, error)
	// Answer, when set, offers each question to the host's own user as a
	// form elicitation if the host supports it (askbridge mcp).
	Answer Answerer
	// Timeout (--timeout, BRIDGE_TIMEOUT) is how long each question stays
	// open before it expires; 0 = the bridge's default (the route's, else
	// 5 minutes).
	Timeout time.Duration
	// ProgressEvery is the interval of progress notifications (default 15s).
	ProgressEvery time.Duration
	// AskAtOnce bounds the blocking calls over Streamable HTTP being asked
	// at once (admit.go); 0 = 8 per core, at least 8.
	AskAtOnce int
	// Version is reported to clients.
	Version string
	Logger  *slog.Logger
}

// Server is the MCP server.
type Server struct {
	cfg    Config
	server *mcp.Server
	log    *slog.Logger

	mu sync.Mutex
	// sessions: a Streamable HTTP session by its id (the SDK rests an
	// idle one and makes it anew, another object, on its next request), a
	// stdio session by the SDK's object.
	sessions map[sessionRef]*session
	closed   bool
	// Streamable HTTP sessions are told apart from stdio's once
	// HTTPHandler is built: their end is learnt from the stream store
	// (sessionClosed), without a goroutine each.
	closedIDs map[string]time.Time // closed before their first call was seen
	httpEnds  bool
	// life ends at Close: the calls of 2026-07-28 clients, which have no
	// session, stop waiting then.
	life    context.Context
	endLife context.CancelFunc

	// parker parks blocking calls over Streamable HTTP (park.go); slots
	// are the POSTs that may be parked, by their parkHeader token.
	parker  Parker
	slots   sync.Map
	admit   admit.Line          // the calls being asked at once (admit.go)
	orphans sync.Map            // their streams that may be resumed, by session and stream
	events  *parkedStore        // the sessions' streams (set with httpEnds, under mu)
	impl    *mcp.Implementation // who the server says it is
}

const toolDescription = `Ask a person on the team a question and wait for their answer. The question is posted where the team works (Slack, Discord, Telegram, email or the askbridge web inbox, and the person on call may be paged through PagerDuty) and this call blocks until someone answers, it expires, or it is dismissed.

Use it when you need a decision, preference or piece of information that only a person can give and guessing would risk wasted or harmful work: choosing between approaches, confirming a destructive or costly step, clarifying an ambiguous requirement. Do not use it for things you can find out yourself, or to report progress.

Ask 1-4 related questions in one call. Give each 2-4 short, distinct options with a one-line description of the trade-off, or no options for an open-ended question. Do not add an "Other" option: the person can always answer in their own words instead ("Other" is added automatically). If you recommend an option, put it first and end its label with "(Recommended)".`

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
	s := &Server{cfg: cfg, log: cfg.Logger, sessions: map[sessionRef]*session{}, admit: admit.New(cfg.AskAtOnce)}
	s.life, s.endLife = context.WithCancel(context.Background())
	s.impl = &mcp.Implementation{Name: "askbridge", Title: "askbridge", Version: cfg.Version}
	s.server = mcp.NewServer(s.impl,
		&mcp.ServerOptions{Logger: slog.New(quietSessions{cfg.Logger.Handler()}), Capabilities: tasksCapabilities(),
			Instructions: "ask_user asks a person on the team and waits for the answer. Use it for decisions only a person can make."})
	// The raw handler (not mcp.AddTool) so invalid input gets the bridge's
	// own problems, naming the question by index, instead of the SDK's
	// schema paths. The schemas go in as JSON: the SDK encodes the input
	// schema again for every call over HTTP (to find x-mcp-header
	// annotations), which from a *jsonschema.Schema left ~100 KB of
	// garbage a call.
	s.server.AddTool(&mcp.Tool{
		Name: ToolName, Title: "Ask the user", Description: toolDescription,
		InputSchema: rawSchema(InputSchema()), OutputSchema: rawSchema(OutputSchema()),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolp(true)},
	}, s.askUser)
	s.registerTasks() // ask_user as a task (tasks.go)
	return s
}

func boolp(b bool) *bool { return &b }

// rawSchema is a schema as the JSON the SDK would write for it.
func rawSchema(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("the ask_user schema cannot be encoded: %v", err)) // a bug in schema.go
	}
	return b
}

// MCP returns the underlying SDK server (to serve other transports).
func (s *Server) MCP() *mcp.Server { return s.server }

// Serve runs one MCP session over r and w (stdin and stdout of askbridge mcp)
// until the client closes r or ctx ends (SIGTERM, SIGINT), whether or not a
// call is waiting. The session's questions are then withdrawn unless
// Config.RunID pins their run.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	eof := make(chan struct{})
	in := &eofReader{r: r, eof: eof}
	ss, err := s.server.Connect(ctx, &mcp.IOTransport{Reader: in, Writer: writeCloser{w}}, nil)
	if err != nil {
		return err
	}
	s.sessionFor(ss, "")
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		s.log.Info("signal received: ending the session")
	case <-eof:
	case err := <-ended:
		s.endSession(refOf(ss))
		return quiet(err)
	}
	s.endSession(refOf(ss))
	// Calls still asking finish their ask and withdraw what it created.
	_ = ss.Close()
	select {
	case <-ended:
	case <-time.After(withdrawTimeout):
	}
	return nil
}

func quiet(err error) error {
	if err != nil && (errors.Is(err, io.EOF) || strings.Contains(err.Error(), "server is closing")) {
		return nil
	}
	return err
}

// eofReader closes eof once its reader fails: the client closed stdin.
type eofReader struct {
	r    io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

func (e *eofReader) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }

// asked is how the session keeps a question the caller asked: withdrawn
// when the session ends unless in a run the caller named.
func (c Caller) asked() askedIn {
	switch {
	case c.RunID != "":
		return askedIn{}
	case c.Withdraw != nil:
		return askedIn{withdraw: c.Withdraw}
	}
	return askedIn{withdraw: c.Backend}
}

func (s *Server) caller(req *mcp.CallToolRequest) (Caller, error) {
	if s.cfg.CallerFor != nil {
		return s.cfg.CallerFor(req)
	}
	return Caller{Backend: s.cfg.Client, RunID: s.cfg.RunID, Answer: s.cfg.Answer}, nil
}

// runID is the run of a call: the one the caller named, else one of its own
// derived from the session and the call's questions. Two different
// concurrent calls never share a run (a run's newer question supersedes its
// pending one), while the identical call repeated in the session (after the
// host's timeout cut it) lands in the same run and re-attaches.
func runID(st *session, named string, in Input) string {
	if named != "" {
		return named
	}
	b, _ := json.Marshal(in.Questions)
	sum := sha256.Sum256(b)
	return st.runPrefix() + "-" + hex.EncodeToString(sum[:6])
}

func (s *Server) agent(ss *mcp.ServerSession, override string) (id, name string) {
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
	if override != "" {
		id = override
	}
	if id == "" {
		id = "mcp"
	}
	return id, name
}

func (s *Server) askUser(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in, problems := decodeInput(req.Params.Arguments)
	if len(problems) > 0 {
		return invalidResult(problems), nil
	}
	who, err := s.caller(req)
	if err != nil {
		return s.notSent(err, nil), nil
	}
	key := ""
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		key = req.Extra.TokenInfo.UserID
	}
	ask := s.askRequest(req, who, in, "")
	agentID, agentName := ask.AgentID, ask.AgentName
	var st *session
	if stateless(req) {
		st = s.statelessSession(key, agentID)
	} else {
		st = s.sessionFor(req.Session, key)
	}
	ask.RunID = runID(st, who.RunID, in)
	// The ask itself is not cut when the session ends, so the question it
	// creates is known and can be withdrawn; the wait ends with the session.
	var asked *client.Asked
	if req.Params.RequestState != "" { // a multi round-trip's next round (tasks_mrtr.go)
		var res *mcp.CallToolResult
		if asked, res = s.mrtrRound(ctx, req, who); res != nil {
			return res, nil
		}
	} else {
		offer := mrtrOffers(req.Session, who)
		if offer {
			ask.IdempotencyKey = taskIdempotencyKey(key)
		}
		if asked, err = who.Backend.Ask(ctx, ask); err != nil {
			return s.notSent(err, who.Backend), nil
		}
		if offer {
			if form := s.mrtrForm(req.Session, who, &asked.Question, ""); form != nil {
				return form, nil
			}
		}
	}
	s.log.Info("question asked", "question", asked.ID, "run", asked.RunID, "reattached", asked.Replayed)
	q := &asked.Question
	if slot := s.slotOf(req); slot != nil {
		// Parked when nothing needs this goroutine while it waits: no form
		// at the host.
		form := who.Answer != nil && canElicit(req.Session) && domain.Allowed(q.Responders, hostUser(agentID, agentName))
		if !q.Status.Final() && !form && s.park(slot, req, q, st, who.asked()) {
			return parkedResult(), nil // dropped: the parked connection gets the result
		}
		slot.hold.pass()
		slot.release() // it waits here: its place goes to the next call to ask
	}
	if !q.Status.Final() {
		if !st.track(q.ID, who.asked()) {
			if who.RunID == "" {
				s.withdraw(context.WithoutCancel(ctx), who.Backend, q.ID)
			}
			return nil, context.Canceled
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ended := st.done()
		defer context.AfterFunc(ended, cancel)()
		stop := s.progress(ctx, req, q)
		// The host's own user may answer too, where the agent runs; the
		// form is withdrawn when the wait ends (answered anywhere).
		ectx, ecancel := context.WithCancel(ctx)
		var formOpen chan bool
		if person := hostUser(agentID, agentName); who.Answer != nil && canElicit(req.Session) && domain.Allowed(q.Responders, person) {
			formOpen = make(chan bool, 1)
			go func() { formOpen <- s.elicit(ectx, req.Session, q, who.Answer, person) }()
		}
		q, err = who.Backend.Wait(ctx, asked.ID)
		ecancel()
		if formOpen != nil && <-formOpen {
			// The SDK sends the form's cancellation in the background; over
			// Streamable HTTP it rides on this call's stream, which closes
			// with the result: give it a moment to leave first.
			time.Sleep(formWithdrawGrace)
		}
		stop()
		if err != nil {
			if ctx.Err() != nil {
				if ended.Err() != nil {
					s.log.Info("session ended before an answer", "question", asked.ID)
				} else {
					// The client gave up (cancelled or timed out). The question
					// stays pending: the same call repeated re-attaches to it.
					s.log.Info("call ended before an answer; question left pending", "question", asked.ID)
				}
				return nil, ctx.Err()
			}
			why := "askbridge could not be reached"
			var e *domain.Error
			if errors.As(err, &e) {
				why = e.Message
			}
			s.log.Error("waiting for an answer failed", "question", asked.ID, "err", s.transportProblem(err, who.Backend))
			return waitFailedResult(asked.ID, why), nil
		}
	}
	st.settled(q.ID)
	return finalResult(q), nil
}

// askRequest is the ask of a call in run.
func (s *Server) askRequest(req *mcp.CallToolRequest, who Caller, in Input, run string) *domain.AskRequest {
	agentID, agentName := s.agent(req.Session, who.AgentID)
	ask := &domain.AskRequest{RunID: run, AgentID: agentID, AgentName: agentName, Route: s.cfg.Route}
	for _, it := range in.Questions {
		ask.Questions = append(ask.Questions, it.domainItem())
	}
	if d := cmp.Or(who.Timeout, s.cfg.Timeout); d > 0 {
		dd := domain.Duration(d)
		ask.Timeout = &dd
	}
	return ask
}

// waitFailedResult is the result of a call whose wait ended before its
// question was final.
func waitFailedResult(id, why string) *mcp.CallToolResult {
	out := newOutput(StatusPending)
	out.QuestionID = id
	return result(true, fmt.Sprintf("Waiting for the answer to question %s failed: %s. The question is still open; you may call ask_user again with the same questions to keep waiting, or continue without the answer.", id, why), out)
}

// invalidResult is the result of input the bridge refuses.
func invalidResult(problems []string) *mcp.CallToolResult {
	out := newOutput(StatusInvalid)
	out.Problems = problems
	return result(true, "The question was not sent: "+strings.Join(problems, "; ")+". Fix these and call ask_user again.", out)
}

// finalResult is the result of a call whose question is final: the
// answer, or a no-answer result telling the model to continue.
func finalResult(q *domain.Question) *mcp.CallToolResult {
	out := newOutput(string(q.Status))
	out.QuestionID = q.ID
	for k, v := range q.Answers {
		out.Answers[k] = v
	}
	for k, v := range q.Selections {
		out.Selections[k] = v
	}
	if q.Status == domain.StatusAnswered {
		return result(false, AnsweredText(q), out)
	}
	return result(true, NoAnswerText(q), out)
}

func newOutput(status string) Output {
	return Output{Status: status, Answers: map[string]string{}, Selections: map[string][]string{}}
}

// result is a tool result: the prose for the model first, then the
// structured result as JSON text (the spec's advice for clients that read
// only text content).
func result(isError bool, text string, out Output) *mcp.CallToolResult {
	b, _ := json.Marshal(out)
	return &mcp.CallToolResult{IsError: isError, StructuredContent: out,
		Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(b)}}}
}

// progress sends a progress notification every ProgressEvery while the
// call waits, if the client gave a progress token. stop ends it.
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest, q *domain.Question) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
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
			msg := progressLine(q)
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(n), Message: msg,
			}); err != nil && ctx.Err() == nil {
				s.log.Warn("progress notification failed", "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// progressLine says what a waiting call or task waits for.
func progressLine(q *domain.Question) string { return waitingLine(q.Places(), q.ExpiresAt) }

func waitingLine(places string, expires time.Time) string {
	return fmt.Sprintf("waiting for an answer in %s — expires in %s", places, domain.HumanDuration(time.Until(expires)))
}

// AnsweredText is the tool result text of an answered question, in Claude
// Code's AskUserQuestion phrasing.
func AnsweredText(q *domain.Question) string {
	parts := make([]string, 0, len(q.Questions))
	for _, it := range q.Questions {
		parts = append(parts, fmt.Sprintf("%q=%q", it.Question, q.Answers[it.Question]))
	}
	return "User has answered your questions: " + strings.Join(parts, ", ") +
		". You can now continue with the user's answers in mind."
}

// NoAnswerText tells the model plainly that no answer came and that it
// should continue without one.
func NoAnswerText(q *domain.Question) string {
	const cont = " Continue without the answer: make the safest reasonable choice yourself and tell the user which one you made. Do not ask the same question again."
	switch {
	case q.Status == domain.StatusExpired:
		return fmt.Sprintf("No answer: the question expired at %s before anyone answered.", q.ExpiresAt.Format(time.RFC3339)) + cont
	case q.Status == domain.StatusCancelled && q.CancelReason == domain.CancelUser:
		by := "The user"
		if q.RespondedBy != nil {
			by = q.RespondedBy.String()
		}
		return by + " dismissed the question without answering." + cont
	case q.Status == domain.StatusCancelled && q.CancelReason == domain.CancelSuperseded:
		return "No answer: the question was replaced by a newer question of this run." + cont
	case q.Status == domain.StatusCancelled:
		return "No answer: the question was withdrawn." + cont
	}
	return fmt.Sprintf("No answer: the question is %s.", q.Status) + cont
}
