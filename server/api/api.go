// Package api is askbridge's HTTP API for agent runtimes and operators
// (docs/openapi.yaml): ask, list, wait, respond, cancel, runs, tools, events,
// notifications, health and metrics.
//
// api.go holds the routes, the handler wrapper and error writing (through
// internal/httperr); questions.go, runs.go and inbox.go the handlers of
// each resource; park.go and hangup_*.go the long-polls parked without a
// goroutine; sse.go and live.go the event stream and its WebSocket form;
// auth.go and guard.go who may call what and from where; decode.go how
// bodies are read; tools.go the tool definitions; routes.go the route
// names; metrics.go and openapi.go what the bridge tells about itself.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/httperr"
	"github.com/askbridge/askbridge/internal/tracing"

	"go.opentelemetry.io/otel/trace"
)

// MaxWait bounds one long-poll.
const MaxWait = 120 * time.Second

// Config configures the API.
type Config struct {
	Router  *lifecycle.Router
	Auth    *Auth
	Logger  *slog.Logger
	Metrics *Metrics
	// Ready reports whether the adapters are ready (nil = always).
	Ready func(ctx context.Context) error
	// MetricsToken, when set, is the bearer token /metrics requires.
	MetricsToken string
	// TracerProvider records the ask's span (nil: none recorded; a
	// traceparent received is still kept with the question).
	TracerProvider trace.TracerProvider
}

// reads is what the API takes from the store directly: reads, plus two
// changes that are bookkeeping, not decisions (marking a notification
// read, a run's pause). Asking, answering and cancelling go through the
// Router.
type reads interface {
	lifecycle.QuestionReader
	lifecycle.Runs
	lifecycle.EventLog
	Audit(ctx context.Context, project, question string, limit int) ([]domain.AuditEntry, error)
	MarkRead(ctx context.Context, project, id string) (*domain.Question, error)
	Ping(ctx context.Context) error
}

// API serves the HTTP API.
type API struct {
	router *lifecycle.Router
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

	// projects are those known to have questions (open mode's notices).
	projects knownProjects

	tracer trace.Tracer
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
	a.tracer = tracing.Tracer(cfg.TracerProvider)
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
	mux.Handle("GET "+p+"/agent-questions/{id}/history", a.handle(a.history))
	mux.Handle("POST "+p+"/agent-questions/{id}/respond", a.handle(a.respond))
	mux.Handle("POST "+p+"/agent-questions/{id}/cancel", a.handle(a.cancel))
	mux.Handle("POST "+p+"/approval-batches", a.handle(a.askBatch))
	mux.Handle("GET "+p+"/approval-batches/{id}", a.handle(a.getBatch))
	mux.Handle("GET "+p+"/approval-batches/{id}/wait", a.handle(a.waitBatch))
	mux.Handle("POST "+p+"/approval-batches/{id}/respond", a.handle(a.respondBatch))
	mux.Handle("GET "+p+"/agent-runs/{run}", a.handle(a.run))
	mux.Handle("POST "+p+"/agent-runs/{run}/pause", a.handle(a.pause))
	mux.Handle("GET "+p+"/agent-runs/{run}/questions", a.handle(a.runQuestions))
	mux.Handle("GET "+p+"/agents/{agent}/tools", a.handle(a.tools))
	mux.Handle("GET "+p+"/routes", a.handle(a.routes))
	mux.Handle("GET "+p+"/events", a.handle(a.events))
	mux.Handle("GET "+p+"/live", a.handle(a.live))
	mux.Handle("GET "+p+"/notifications", a.handle(a.notifications))
	mux.Handle("POST "+p+"/notifications/{id}/read", a.handle(a.markRead))
	mux.Handle("GET "+p+"/audit", a.handle(a.audit))
	mux.Handle("GET "+BackupPath, a.handle(a.backup))
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
		return domain.Errorf(domain.ENotFound, "no API endpoint %s %s", r.Method, r.URL.Path)
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
		a.writeError(w, r, domain.Errorf(domain.EMethodNotAllowed, "%s is not allowed on %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
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
			a.writeError(w, r, domain.Errorf(domain.EUnauthorized, "/metrics needs the metrics token: send Authorization: Bearer <metrics.token>"))
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
					err = &domain.Error{Code: domain.EInvalid, Message: "invalid project id",
						Details: []domain.Detail{{Field: "project", Problem: "1-64 letters, digits, '.', '_' or '-'"}}}
				case !p.inProject(proj):
					err = domain.Errorf(domain.EForbidden, "this token may not act in project %s", proj)
				}
			}
		}
		if err == nil && p.Open {
			a.openNotices(w, r, r.PathValue("p"))
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
	var ours *domain.Error
	if !errors.As(err, &ours) && errors.Is(err, context.Canceled) {
		return // the client went away
	}
	e := httperr.Of(err)
	if e.Code == domain.EInternal || e.Code == domain.EUnavailable {
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

func (a *API) tools(w http.ResponseWriter, r *http.Request, p Principal) error {
	id := r.PathValue("agent")
	if p.Agent != nil && p.Agent.ID != id {
		return domain.Errorf(domain.EForbidden, "this token belongs to agent %s", p.Agent.ID)
	}
	tools := []Tool{}
	if !a.auth.AgentsConfigured() {
		tools = append(tools, askUserTool) // the embedded default: any agent gets the tool
	} else {
		ag, ok := a.auth.AgentByID(id)
		if !ok || ag.Project != r.PathValue("p") {
			return domain.Errorf(domain.ENotFound, "no agent %s in project %s", id, r.PathValue("p"))
		}
		if ag.HasTool("ask_user") {
			tools = append(tools, askUserTool)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
	return nil
}

func (a *API) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]string{"store": "ok"}
	code := http.StatusOK
	if err := a.store.Ping(ctx); err != nil {
		checks["store"] = "unavailable"
		var why interface{ Readiness() string } // the embedded store's disk problem, without its path
		if errors.As(err, &why) {
			checks["store"] = "unavailable: " + why.Readiness()
		}
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
