package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/server/api"
)

// mountMCP serves the ask_user tool over Streamable HTTP at /mcp (remote
// MCP). Calls go through the API handler in-process with the request's own
// bearer token, so /mcp obeys exactly the API's rules: an agent token asks
// as its agent in its project; operators and open mode (no tokens, loopback
// only) name the project with ?project= or the Askbridge-Project header
// (default "default"). Hosts that support form elicitation also get
// the question as a form for their own user. close ends every session, withdrawing its pending
// questions; call it before draining the API. admit puts the POSTs to /mcp
// in line for their turn (mcpserver.Admit): it goes outside every handler
// that starts a clock on the request.
func mountMCP(mux *http.ServeMux, auth *api.Auth, a *api.API, apiHandler http.Handler, router *lifecycle.Router, log *slog.Logger, version string, progressEvery, sessionTimeout time.Duration) (close func(), admit func(http.Handler) http.Handler) {
	srv := mcpserver.New(mcpserver.Config{Logger: log, Version: version, ProgressEvery: progressEvery})
	h := mcpserver.HTTPConfig{API: apiHandler, SessionTimeout: sessionTimeout,
		// A host's user answering an elicitation answers through the Router,
		// like a click: responders, votes and the first-answer-wins rule apply.
		Answer: func(ctx context.Context, project, id string, req domain.RespondRequest, who domain.Person) error {
			_, err := router.Answer(ctx, project, id, req, who)
			return err
		},
		// Blocking calls waiting for a person are parked like long-polls.
		Park: apiParker{a}}
	if !auth.Open() {
		h.Authenticate = func(r *http.Request) (mcpserver.Principal, error) {
			p, err := auth.Authenticate(r)
			if err != nil {
				return mcpserver.Principal{}, err
			}
			if p.Agent != nil {
				return mcpserver.Principal{Key: "agent:" + p.Agent.ID, AgentID: p.Agent.ID, Project: p.Agent.Project}, nil
			}
			return mcpserver.Principal{Key: "operator:" + p.Operator.ID}, nil
		}
	}
	mux.Handle("/mcp", srv.HTTPHandler(h))
	return srv.Close, srv.Admit
}

// onPath applies mw to the requests for path only.
func onPath(path string, mw func(http.Handler) http.Handler, next http.Handler) http.Handler {
	wrapped := mw(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path {
			wrapped.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// apiParker parks the blocking calls of /mcp on the API's parker.
type apiParker struct{ a *api.API }

func (p apiParker) ParkCall(w http.ResponseWriter, r *http.Request, project, id string, timeout time.Duration, c mcpserver.ParkedCall) bool {
	return p.a.ParkReply(w, r, project, id, timeout, api.Reply{Final: c.Final, Head: c.Head, Every: c.Every, Tick: c.Tick,
		OnPark: c.OnPark, Done: c.Done})
}
