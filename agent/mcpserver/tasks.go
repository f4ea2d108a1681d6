package mcpserver

// ask_user as an MCP task: the io.modelcontextprotocol/tasks extension
// (SEP-2663). A client that declares the extension gets a task at once
// instead of a call that blocks until a person answers; it polls tasks/get,
// may answer through tasks/update and withdraws with tasks/cancel.
//
// A task is its question: the task id is the question id and every state
// is read from the question in the store, so a task outlives the session
// and the process and any replica serves it. Nothing about a task is kept
// in memory.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TasksExtension is the extension's identifier, declared by a client in its
// capabilities (per request in _meta, or when its session starts) and by
// the server in its own.
const TasksExtension = "io.modelcontextprotocol/tasks"

// The extension's methods.
const (
	methodTaskGet    = "tasks/get"
	methodTaskUpdate = "tasks/update"
	methodTaskCancel = "tasks/cancel"
)

const (
	// codeMissingCapability is the JSON-RPC error of a tasks method from a
	// client that did not declare the extension (SEP-2575).
	codeMissingCapability = -32021
	// TaskPollInterval is the polling interval a task suggests.
	TaskPollInterval = 5 * time.Second
	// TaskGrace is how long a task stays readable after its question's
	// deadline (the bridge keeps final questions for its retention, 7 days
	// by default).
	TaskGrace = time.Hour
	// taskInputKey names the form of a task waiting for a person, in
	// inputRequests and inputResponses. One task asks one form.
	taskInputKey = "answer"
	// taskKeyPrefix starts the idempotency key of a task's question: it
	// binds the question to the credential that created the task.
	taskKeyPrefix = "mcp-task-"
)

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

// task is the extension's Task, with the fields of its detailed shapes.
type task struct {
	ResultType     string                  `json:"resultType"`
	TaskID         string                  `json:"taskId"`
	Status         string                  `json:"status"`
	StatusMessage  string                  `json:"statusMessage,omitempty"`
	CreatedAt      string                  `json:"createdAt"`
	LastUpdatedAt  string                  `json:"lastUpdatedAt"`
	TTLMs          int64                   `json:"ttlMs"`
	PollIntervalMs int64                   `json:"pollIntervalMs"`
	InputRequests  map[string]inputRequest `json:"inputRequests,omitempty"`
	Result         json.RawMessage         `json:"result,omitempty"`
}

type inputRequest struct {
	Method string            `json:"method"`
	Params *mcp.ElicitParams `json:"params"`
}

// taskResult is a task as a JSON-RPC result (CreateTaskResult, GetTaskResult).
type taskResult struct {
	mcp.ResultBase
	task
}

// ackResult is the empty acknowledgement of tasks/update and tasks/cancel.
type ackResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

func ack() *ackResult { return &ackResult{ResultType: "complete"} }

// registerTasks adds the extension's methods and the middleware that serves
// them and turns ask_user into a task for clients that declared it.
func (s *Server) registerTasks() {
	unreachable := func(context.Context, *mcp.ServerSession, *taskParams) (*ackResult, error) {
		return nil, errors.New("tasks methods are served by the middleware")
	}
	for _, m := range []string{methodTaskGet, methodTaskUpdate, methodTaskCancel} {
		if err := mcp.AddReceivingCustomMethod(s.server, m, unreachable); err != nil {
			panic(err) // a standard method name: a programming error
		}
	}
	s.server.AddReceivingMiddleware(s.tasksMiddleware)
}

// tasksCapabilities are the server's capabilities: the SDK's default
// (logging) and the tasks extension.
func tasksCapabilities() *mcp.ServerCapabilities {
	// Hosts before 2026-07-28 still use logging, which the SDK offered by
	// default: keep offering it through its deprecation window.
	//lint:ignore SA1019 kept for hosts older than 2026-07-28 (SEP-2577)
	c := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	c.AddExtension(TasksExtension, map[string]any{})
	return c
}

// The middleware sees each request with its transport extras (the token
// and headers), which a custom method's handler does not get.
func (s *Server) tasksMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call":
			r, ok := req.(*mcp.CallToolRequest)
			if ok && r.Params != nil && r.Params.Name == ToolName && tasksDeclared(r.Session, r.Params.Meta) {
				return s.createTask(ctx, r)
			}
		case methodTaskGet, methodTaskUpdate, methodTaskCancel:
			r, ok := req.(*mcp.ServerRequest[*taskParams])
			if !ok {
				break
			}
			if !tasksDeclared(r.Session, r.Params.Meta) {
				return nil, missingTasksCapability(method)
			}
			switch method {
			case methodTaskGet:
				return s.taskGet(ctx, r)
			case methodTaskUpdate:
				return s.taskUpdate(ctx, r)
			default:
				return s.taskCancel(ctx, r)
			}
		}
		return next(ctx, method, req)
	}
}

func missingTasksCapability(method string) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{
		"extensions": map[string]any{TasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: codeMissingCapability, Data: data,
		Message: method + " needs the " + TasksExtension + " extension: declare it in the request's client capabilities"}
}

// tasksDeclared reports whether a request's client declared the extension:
// in the request's own capabilities (_meta, SEP-2575), which then are the
// only ones that count, else when its session started.
func tasksDeclared(ss *mcp.ServerSession, meta map[string]any) bool {
	if caps, ok := meta[mcp.MetaKeyClientCapabilities].(map[string]any); ok {
		ext, _ := caps["extensions"].(map[string]any)
		_, ok := ext[TasksExtension]
		return ok
	}
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil {
		return false
	}
	_, ok := p.Capabilities.Extensions[TasksExtension]
	return ok
}

// ownerTag is the credential's mark in its tasks' questions: a hash, so the
// question never carries the credential itself.
func ownerTag(key string) string {
	sum := sha256.Sum256([]byte("askbridge mcp task owner\x00" + key))
	return hex.EncodeToString(sum[:12])
}

// taskIdempotencyKey makes a task's question its own (never re-attached to
// another) and marks it with the credential that created it.
func taskIdempotencyKey(key string) string {
	return taskKeyPrefix + ownerTag(key) + "-" + randomHex(8)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b)
}

// ownedBy reports whether q is a task created with the credential key.
func ownedBy(q *domain.Question, key string) bool {
	rest, ok := strings.CutPrefix(q.IdempotencyKey, taskKeyPrefix)
	if !ok {
		return false
	}
	tag, _, _ := strings.Cut(rest, "-")
	return subtle.ConstantTimeCompare([]byte(tag), []byte(ownerTag(key))) == 1
}

func credentialKey(extra *mcp.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil {
		return extra.TokenInfo.UserID
	}
	return ""
}

// createTask asks the question and answers at once with its task. Input
// the bridge refuses, or an ask that fails, is the ordinary tool result the
// blocking call returns: there is no task to poll.
func (s *Server) createTask(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	in, problems := decodeInput(req.Params.Arguments)
	if len(problems) > 0 {
		return invalidResult(problems), nil
	}
	who, err := s.caller(req)
	if err != nil {
		return s.notSent(err, nil), nil
	}
	run := who.RunID
	if run == "" {
		// A run of its own: a newer question of a run supersedes its
		// pending one, and two tasks must not end each other.
		run = taskKeyPrefix + randomHex(8)
	}
	ask := s.askRequest(req, who, in, run)
	ask.IdempotencyKey = taskIdempotencyKey(credentialKey(req.Extra))
	asked, err := who.Backend.Ask(ctx, ask)
	if err != nil {
		return s.notSent(err, who.Backend), nil
	}
	s.log.Info("question asked as a task", "question", asked.ID, "run", asked.RunID)
	t := s.taskOf(&asked.Question, nil)
	t.ResultType = "task"
	if t.Result != nil {
		// CreateTaskResult is a Task without a result: the result of a
		// question settled at once comes with the first tasks/get.
		t.Status, t.StatusMessage, t.Result = "working", "the question is settled: poll for the result", nil
	}
	return &taskResult{task: t}, nil
}

// taskOf is q as a task. form, when set, is the form offered to the host's
// user while the question waits (input_required).
func (s *Server) taskOf(q *domain.Question, form *mcp.ElicitParams) task {
	t := task{ResultType: "complete", TaskID: q.ID,
		CreatedAt: q.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: q.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TTLMs:          (q.ExpiresAt.Sub(q.CreatedAt) + TaskGrace).Milliseconds(),
		PollIntervalMs: TaskPollInterval.Milliseconds()}
	switch {
	case !q.Status.Final():
		t.Status, t.StatusMessage = "working", progressLine(q)
		if form != nil {
			t.Status = "input_required"
			t.StatusMessage = "waiting for an answer here or in " + q.Places() + " — expires in " + domain.HumanDuration(time.Until(q.ExpiresAt))
			t.InputRequests = map[string]inputRequest{taskInputKey: {Method: "elicitation/create", Params: form}}
		}
	case q.Status == domain.StatusCancelled && q.CancelReason == domain.CancelAgent:
		t.Status, t.StatusMessage = "cancelled", "the question was withdrawn"
	default:
		// Answered, expired, dismissed or replaced: the result the blocking
		// call returns, so the model continues either way.
		t.Status = "completed"
		t.StatusMessage = "the question is " + string(q.Status)
		t.Result, _ = json.Marshal(finalResult(q))
	}
	return t
}

// taskCall resolves the caller of a tasks method and loads its task: a
// question that is not a task of this credential is not found.
func (s *Server) taskCall(ctx context.Context, r *mcp.ServerRequest[*taskParams]) (Caller, *domain.Question, error) {
	id := strings.TrimSpace(r.Params.TaskID)
	who, err := s.caller(&mcp.CallToolRequest{Session: r.Session, Extra: r.Extra})
	if err != nil {
		return who, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	if id == "" {
		return who, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is missing: send the taskId that tools/call returned"}
	}
	q, err := who.Backend.Get(ctx, id)
	var e *domain.Error
	switch {
	case err == nil && ownedBy(q, credentialKey(r.Extra)):
		return who, q, nil
	case err == nil || errors.As(err, &e) && (e.Code == domain.ENotFound || e.Code == domain.EForbidden || e.Code == domain.EInvalid):
		// Another credential's task, or none: the same answer, so a task's
		// existence is not revealed.
		return who, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("task not found: no task %s for this credential (a task is read with the token that created it)", id)}
	default:
		s.log.Error("reading a task failed", "task", id, "err", s.transportProblem(err, who.Backend))
		return who, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "askbridge could not be reached; try again"}
	}
}

func (s *Server) taskGet(ctx context.Context, r *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	who, q, err := s.taskCall(ctx, r)
	if err != nil {
		return nil, err
	}
	return &taskResult{task: s.taskOf(q, s.taskForm(r.Session, who, q))}, nil
}

// taskCancel withdraws the task's question (cancel_reason agent). A task
// already final is left as it is: cancellation is cooperative.
func (s *Server) taskCancel(ctx context.Context, r *mcp.ServerRequest[*taskParams]) (mcp.Result, error) {
	who, q, err := s.taskCall(ctx, r)
	if err != nil {
		return nil, err
	}
	if !q.Status.Final() {
		s.withdraw(ctx, who.Backend, q.ID)
	}
	return ack(), nil
}
