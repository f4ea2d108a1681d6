// Package api is askbridge's HTTP API for agent runtimes and operators
// (docs/openapi.yaml): ask, list, wait, respond, cancel, runs, tools, events,
// notifications, health and metrics.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/httperr"
)

// MaxWait bounds one long-poll.
const MaxWait = 120 * time.Second

// Config configures the API.
type Config struct {
	Router  *core.Router
	Auth    *Auth
	Logger  *slog.Logger
	Metrics *Metrics
	// Ready reports whether the adapters are ready (nil = always).
	Ready func(ctx context.Context) error
	// MetricsToken, when set, is the bearer token /metrics requires.
	MetricsToken string
}

// reads is what the API reads from the store directly; every change goes
// through the Router.
type reads interface {
	core.QuestionReader
	core.Runs
	core.EventLog
	Audit(ctx context.Context, project, question string, limit int) ([]core.AuditEntry, error)
	MarkRead(ctx context.Context, project, id string) (*core.Question, error)
	Ping(ctx context.Context) error
}

// API serves the HTTP API.
type API struct {
	router *core.Router
	store  reads
	auth   *Auth
	log    *slog.Logger
	m      *Metrics
	ready  func(ctx context.Context) error
	// metricsToken guards /metrics when set.
	metricsToken string

	drainCtx context.Context
	drain    context.CancelFunc

	mux *http.ServeMux // the routes, for answers taken over the live WebSocket

	parkOnce sync.Once
	parks    *parker
}

// parker starts the parker on first use.
func (a *API) parker() *parker {
	a.parkOnce.Do(func() { a.parks = newParker(a.store, a.log) })
	return a.parks
}

// Drain makes every long-poll return the current record at once (graceful
// shutdown): callers poll again and reach another replica.
func (a *API) Drain() {
	a.drain()
	a.parkOnce.Do(func() {}) // no parker from now on if none was started
	if a.parks != nil {
		a.parks.drain()
	}
}

// New builds the API.
func New(cfg Config) *API {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Auth == nil {
		cfg.Auth = NewAuth(nil, nil)
	}
	a := &API{router: cfg.Router, store: cfg.Router.Store(), auth: cfg.Auth, log: cfg.Logger,
		m: cfg.Metrics, ready: cfg.Ready, metricsToken: cfg.MetricsToken}
	a.drainCtx, a.drain = context.WithCancel(context.Background())
	return a
}

// Register adds the API's routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	a.mux = mux
	p := "/api/projects/{p}"
	mux.Handle("POST "+p+"/agent-questions", a.handle(a.ask))
	mux.Handle("GET "+p+"/agent-questions", a.handle(a.list))
	mux.Handle("GET "+p+"/agent-questions/{id}", a.handle(a.get))
	mux.Handle("GET "+p+"/agent-questions/{id}/wait", a.handle(a.wait))
	mux.Handle("POST "+p+"/agent-questions/{id}/respond", a.handle(a.respond))
	mux.Handle("POST "+p+"/agent-questions/{id}/cancel", a.handle(a.cancel))
	mux.Handle("GET "+p+"/agent-runs/{run}", a.handle(a.run))
	mux.Handle("POST "+p+"/agent-runs/{run}/pause", a.handle(a.pause))
	mux.Handle("GET "+p+"/agent-runs/{run}/questions", a.handle(a.runQuestions))
	mux.Handle("GET "+p+"/agents/{agent}/tools", a.handle(a.tools))
	mux.Handle("GET "+p+"/events", a.handle(a.events))
	mux.Handle("GET "+p+"/live", a.handle(a.live))
	mux.Handle("GET "+p+"/notifications", a.handle(a.notifications))
	mux.Handle("POST "+p+"/notifications/{id}/read", a.handle(a.markRead))
	mux.Handle("GET "+p+"/audit", a.handle(a.audit))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.HandleFunc("GET /api/openapi.json", openAPI)
	if a.m != nil {
		mux.Handle("GET /metrics", a.metrics(a.m.Handler()))
	}
	mux.Handle("/api/", a.noRoute(mux))
}

// noRoute answers a request no route took: 405 with Allow when the path
// exists for other methods (the catch-all would otherwise hide ServeMux's
// own 405), else 404.
func (a *API) noRoute(mux *http.ServeMux) http.Handler {
	notFound := a.handle(func(w http.ResponseWriter, r *http.Request, _ Principal) error {
		return core.Errorf(core.ENotFound, "no API endpoint %s %s", r.Method, r.URL.Path)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/api/" {
				allow = append(allow, m)
				if m == http.MethodGet {
					allow = append(allow, http.MethodHead)
				}
			}
		}
		if len(allow) == 0 {
			notFound.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		a.writeError(w, r, core.Errorf(core.EMethodNotAllowed, "%s is not allowed on %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
	})
}

// metrics serves h, behind the bearer token metrics.token when one is
// configured.
func (a *API) metrics(h http.Handler) http.Handler {
	if a.metricsToken == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !tokenEqual(a.metricsToken, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			a.writeError(w, r, core.Errorf(core.EUnauthorized, "/metrics needs the metrics token: send Authorization: Bearer <metrics.token>"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, p Principal) error

var projectRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// handle authenticates, checks the project, and writes errors in the one
// format of docs/openapi.yaml. Only internal errors are logged.
func (a *API) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.auth.Authenticate(r)
		if err == nil {
			if proj := r.PathValue("p"); proj != "" {
				switch {
				case !projectRe.MatchString(proj):
					err = &core.Error{Code: core.EInvalid, Message: "invalid project id",
						Details: []core.Detail{{Field: "project", Problem: "1-64 letters, digits, '.', '_' or '-'"}}}
				case !p.inProject(proj):
					err = core.Errorf(core.EForbidden, "this token may not act in project %s", proj)
				}
			}
		}
		if err == nil {
			err = checkJSONBody(r)
		}
		if err == nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
			err = h(w, r, p)
		}
		if err != nil {
			a.writeError(w, r, err)
		}
	})
}

// writeError answers with err through httperr, the one error writer, and
// logs what the client cannot fix (its own words stay in the log).
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ours *core.Error
	if !errors.As(err, &ours) && errors.Is(err, context.Canceled) {
		return // the client went away
	}
	e := httperr.Of(err)
	if e.Code == core.EInternal || e.Code == core.EUnavailable {
		a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	httperr.Write(w, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// visible keeps the questions p may see, as the API shows them.
func visible(qs []*core.Question, p Principal) []*core.Question {
	out := []*core.Question{}
	for _, q := range qs {
		if p.owns(q) {
			out = append(out, public(q))
		}
	}
	return out
}

// public is a question as the API shows it: platform secrets never leave
// the bridge.
func public(q *core.Question) *core.Question { return q.Public() }

// question loads a question p may see; another project's or agent's is not
// found (its existence is not revealed).
func (a *API) question(r *http.Request, p Principal) (*core.Question, error) {
	q, err := a.store.Get(r.Context(), r.PathValue("p"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if !p.owns(q) {
		return nil, core.Errorf(core.ENotFound, "no question %s in project %s", r.PathValue("id"), r.PathValue("p"))
	}
	return q, nil
}

func (a *API) ask(w http.ResponseWriter, r *http.Request, p Principal) error {
	var req core.AskRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	project := r.PathValue("p")
	agentRoute := ""
	switch {
	case p.Agent != nil:
		if req.AgentID != "" && req.AgentID != p.Agent.ID {
			return &core.Error{Code: core.EForbidden, Message: "this token belongs to another agent",
				Details: []core.Detail{{Field: "agent_id", Problem: fmt.Sprintf("must be %q or empty", p.Agent.ID)}}}
		}
		req.AgentID = p.Agent.ID
		if !p.Agent.HasTool("ask_user") {
			return core.Errorf(core.EToolNotEnabled, "agent %s does not have the ask_user tool: add ask_user to its tools in the configuration", p.Agent.ID)
		}
		agentRoute = p.Agent.Route
	case p.Operator != nil:
		// An operator asks in its own name: never as a configured agent,
		// whose runs and webhook secret belong to that agent alone.
		if req.AgentID == "" {
			req.AgentID = "agent"
		}
		if _, ok := a.auth.AgentByID(req.AgentID); ok {
			return &core.Error{Code: core.EForbidden, Message: fmt.Sprintf("agent_id %s is a configured agent: only its own token may ask as it", req.AgentID),
				Details: []core.Detail{{Field: "agent_id", Problem: "use an agent id that is not configured, or the agent's own token"}}}
		}
	default: // a bridge without tokens: the local user may name any agent
		if req.AgentID == "" {
			req.AgentID = "agent"
		}
	}
	res, err := a.router.Ask(r.Context(), project, &req, agentRoute)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !res.Created {
		status = http.StatusOK
	}
	if res.Created && a.m != nil {
		a.m.Asked(project)
	}
	writeJSON(w, status, struct {
		*core.Question
		Message string `json:"message"`
	}{public(res.Question), res.Message})
	return nil
}

func (a *API) list(w http.ResponseWriter, r *http.Request, p Principal) error {
	status := core.Status(r.URL.Query().Get("status"))
	switch status {
	case "", core.StatusPending, core.StatusAnswered, core.StatusCancelled, core.StatusExpired:
	default:
		return &core.Error{Code: core.EInvalid, Message: "invalid status filter",
			Details: []core.Detail{{Field: "status", Problem: "one of pending, answered, cancelled, expired"}}}
	}
	qs, err := a.store.List(r.Context(), r.PathValue("p"), status, 500)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": visible(qs, p)})
	return nil
}

func (a *API) get(w http.ResponseWriter, r *http.Request, p Principal) error {
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, public(q))
	return nil
}

func (a *API) wait(w http.ResponseWriter, r *http.Request, p Principal) error {
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	timeout := 25 * time.Second
	if s := r.URL.Query().Get("timeout"); s != "" {
		d, err := core.ParseDuration(s)
		if err != nil || d < 0 {
			return &core.Error{Code: core.EInvalid, Message: "invalid timeout",
				Details: []core.Detail{{Field: "timeout", Problem: "a duration such as 25s, at most 120s"}}}
		}
		timeout = min(d, MaxWait)
	}
	if !q.Status.Final() && timeout > 0 && a.drainCtx.Err() == nil {
		if pk := a.parker(); pk != nil && pk.park(w, r, q.ProjectID, q.ID, timeout) {
			return nil // answered by the parker
		}
	}
	// Shutdown drains long-polls: draining cancels this wait. AfterFunc
	// costs no goroutine per waiter while nothing happens.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(a.drainCtx, cancel)
	defer stop()
	q, err = a.router.Wait(ctx, r.PathValue("p"), r.PathValue("id"), timeout)
	if err != nil && ctx.Err() != nil && r.Context().Err() == nil {
		q, err = a.store.Get(r.Context(), r.PathValue("p"), r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, public(q))
	return nil
}

func (a *API) respond(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return core.Errorf(core.EForbidden, "agent tokens may not answer questions; use an operator token")
	}
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	var req core.RespondRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	who, err := respondent(p, req.RespondedBy)
	if err != nil {
		return err
	}
	if who.Via != "" {
		// A relayed person passes the same responders check as their own
		// click: the chat adapter fills in their groups.
		who = a.router.ResolvePerson(r.Context(), q, who)
	}
	q, err = a.router.AnswerRead(r.Context(), q, req, who)
	if err != nil {
		return err
	}
	run := q.RunID
	if q.ResumedRunID != "" {
		run = q.ResumedRunID
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": q.ID, "status": string(q.Status), "run_id": run})
	return nil
}

func (a *API) cancel(w http.ResponseWriter, r *http.Request, p Principal) error {
	q, err := a.question(r, p)
	if err != nil {
		return err
	}
	var body struct {
		Reason string `json:"reason"`
		Note   string `json:"note"`
	}
	if r.ContentLength != 0 {
		if err := decode(r, &body); err != nil {
			return err
		}
	}
	reason := body.Reason
	if reason == "" {
		reason = core.CancelUser
		if p.Agent != nil {
			reason = core.CancelAgent
		}
	}
	var bad []core.Detail
	if reason != core.CancelUser && reason != core.CancelAgent {
		bad = append(bad, core.Detail{Field: "reason", Problem: "user (a person dismissed it) or agent (the runtime withdrew it); put free text in note"})
	}
	note := strings.Join(strings.Fields(body.Note), " ") // one line on every copy
	if n := utf8.RuneCountInString(note); n > core.MaxCancelNote {
		bad = append(bad, core.Detail{Field: "note", Problem: fmt.Sprintf("at most %d characters (this one has %d)", core.MaxCancelNote, n)})
	}
	if len(bad) > 0 {
		return &core.Error{Code: core.EInvalid, Message: "invalid cancel request", Details: bad}
	}
	var who *core.Person
	switch {
	case p.Operator != nil:
		who = &core.Person{Platform: "api", ID: p.Operator.ID, Name: p.Operator.ID}
	case p.Agent != nil:
		who = &core.Person{Platform: "agent", ID: p.Agent.ID}
	}
	if reason == core.CancelAgent {
		who = nil
	}
	final, err := a.router.CancelWithNote(r.Context(), q.ProjectID, q.ID, reason, note, who)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, public(final))
	return nil
}

func (a *API) runFor(r *http.Request, p Principal) (*core.Run, error) {
	run, err := a.store.Run(r.Context(), r.PathValue("p"), r.PathValue("run"))
	if err != nil {
		return nil, err
	}
	if p.Agent != nil && run.AgentID != p.Agent.ID {
		return nil, core.Errorf(core.ENotFound, "no run %s in project %s", r.PathValue("run"), r.PathValue("p"))
	}
	return run, nil
}

func (a *API) run(w http.ResponseWriter, r *http.Request, p Principal) error {
	run, err := a.runFor(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

func (a *API) pause(w http.ResponseWriter, r *http.Request, p Principal) error {
	agentID := ""
	if p.Agent != nil {
		agentID = p.Agent.ID
		if run, err := a.store.Run(r.Context(), r.PathValue("p"), r.PathValue("run")); err == nil && run.AgentID != agentID {
			return core.Errorf(core.ENotFound, "no run %s in project %s", r.PathValue("run"), r.PathValue("p"))
		}
	}
	run, err := a.store.PauseRun(r.Context(), r.PathValue("p"), r.PathValue("run"), agentID, a.router.Clock().Now().UTC())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

func (a *API) runQuestions(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil { // another agent's run is not found, as for the run itself
		if _, err := a.runFor(r, p); err != nil {
			return err
		}
	}
	qs, err := a.store.RunQuestions(r.Context(), r.PathValue("p"), r.PathValue("run"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"questions": visible(qs, p)})
	return nil
}

func (a *API) tools(w http.ResponseWriter, r *http.Request, p Principal) error {
	id := r.PathValue("agent")
	if p.Agent != nil && p.Agent.ID != id {
		return core.Errorf(core.EForbidden, "this token belongs to agent %s", p.Agent.ID)
	}
	tools := []Tool{}
	if !a.auth.AgentsConfigured() {
		tools = append(tools, askUserTool) // the embedded default: any agent gets the tool
	} else {
		ag, ok := a.auth.AgentByID(id)
		if !ok || ag.Project != r.PathValue("p") {
			return core.Errorf(core.ENotFound, "no agent %s in project %s", id, r.PathValue("p"))
		}
		if ag.HasTool("ask_user") {
			tools = append(tools, askUserTool)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
	return nil
}

func (a *API) notifications(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return core.Errorf(core.EForbidden, "notifications are for operators; use an operator token")
	}
	unread := r.URL.Query().Get("unread") == "true"
	qs, err := a.store.List(r.Context(), r.PathValue("p"), "", 200)
	if err != nil {
		return err
	}
	out := []core.Notification{}
	for i := len(qs) - 1; i >= 0; i-- { // newest first
		n := core.NotificationFor(qs[i])
		if unread && n.Read {
			continue
		}
		out = append(out, n)
	}
	writeJSON(w, http.StatusOK, map[string]any{"notifications": out})
	return nil
}

func (a *API) markRead(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return core.Errorf(core.EForbidden, "notifications are for operators; use an operator token")
	}
	q, err := a.store.MarkRead(r.Context(), r.PathValue("p"), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, core.NotificationFor(q))
	return nil
}

// audit returns the project's audit trail, oldest first: ?question=ID
// filters, ?format=jsonl (or Accept: application/x-ndjson) streams JSON lines.
func (a *API) audit(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return core.Errorf(core.EForbidden, "the audit trail is for operators; use an operator token")
	}
	entries, err := a.store.Audit(r.Context(), r.PathValue("p"), r.URL.Query().Get("question"), 100000)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("format") == "jsonl" || strings.Contains(r.Header.Get("Accept"), "application/x-ndjson") {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, e := range entries {
			enc.Encode(e)
		}
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries})
	return nil
}

func (a *API) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"store": "ok"}
	code := http.StatusOK
	if err := a.store.Ping(ctx); err != nil {
		checks["store"] = "unavailable"
		code = http.StatusServiceUnavailable
	}
	if a.ready != nil {
		checks["adapters"] = "ok"
		if err := a.ready(ctx); err != nil {
			checks["adapters"] = err.Error()
			code = http.StatusServiceUnavailable
		}
	}
	status := "ready"
	if code != http.StatusOK {
		status = "not ready"
	}
	writeJSON(w, code, map[string]any{"status": status, "checks": checks})
}
