package mcpserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/httperr"
	"github.com/askbridge/askbridge/internal/tracing"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Headers of /mcp. A client may send ProjectHeader and RunHeader (or the
// query parameters project and run); the handler overwrites AgentHeader and
// ProjectHeader with what the token allows before the SDK sees the request.
const (
	ProjectHeader = "Askbridge-Project"
	RunHeader     = "Askbridge-Run-Id"
	TimeoutHeader = "Askbridge-Timeout" // how long questions stay open (?timeout=)
	AgentHeader   = "Askbridge-Agent"   // set by the handler only
)

// DefaultSessionTimeout closes a Streamable HTTP session idle this long (no
// request, no call waiting); its pending questions are then withdrawn.
const DefaultSessionTimeout = 10 * time.Minute

// Principal is who an /mcp request authenticated as.
type Principal struct {
	// Key identifies the credential; a session is bound to the key that
	// opened it ("" in open mode).
	Key string
	// AgentID is the agent of an agent token ("" for operators and open mode).
	AgentID string
	// Project is the agent token's project ("" = the client chooses).
	Project string
}

// HTTPConfig configures Streamable HTTP.
type HTTPConfig struct {
	// Authenticate resolves a request's bearer token. nil = open mode (no
	// tokens configured; the bridge listens on loopback only).
	Authenticate func(r *http.Request) (Principal, error)
	// API is the bridge's HTTP API, called in-process with the request's own
	// token, so /mcp obeys exactly the API's rules.
	API http.Handler
	// DefaultProject is used when an operator or open-mode client names none.
	DefaultProject string
	// Answer records the answer of a host's user to an elicitation (the
	// Router's Answer); nil = no elicitation.
	Answer func(ctx context.Context, project, questionID string, req domain.RespondRequest, who domain.Person) error
	// SessionTimeout (default DefaultSessionTimeout).
	SessionTimeout time.Duration
	// Park, when set, parks the blocking calls of 2026-07-28 hosts that
	// wait for a person (park.go); nil = every call waits in a goroutine.
	Park Parker
}

// HTTPHandler serves the ask_user tool over Streamable HTTP (/mcp).
func (s *Server) HTTPHandler(h HTTPConfig) http.Handler {
	if h.DefaultProject == "" {
		h.DefaultProject = "default"
	}
	if h.SessionTimeout <= 0 {
		h.SessionTimeout = DefaultSessionTimeout
	}
	hc := &http.Client{Transport: inProcess{h.API}}
	s.parker = h.Park
	s.cfg.CallerFor = func(req *mcp.CallToolRequest) (Caller, error) {
		hd := http.Header{}
		if req.Extra != nil && req.Extra.Header != nil {
			hd = req.Extra.Header
		}
		token, _ := strings.CutPrefix(hd.Get("Authorization"), "Bearer ")
		// The ask joins the trace of the /mcp request that made the call.
		tp, ts := tracing.Carrier(tracing.Extract(context.Background(), hd))
		c := client.New("http://localhost", token, hd.Get(ProjectHeader),
			client.WithHTTPClient(hc), client.WithUserAgent("askbridge-mcp-http"), client.WithTraceContext(tp, ts))
		caller := Caller{Backend: c, AgentID: hd.Get(AgentHeader), RunID: hd.Get(RunHeader),
			Withdraw: withdrawer{hc: hc, token: token, project: hd.Get(ProjectHeader)}}
		caller.Timeout, _ = ParseTimeout(hd.Get(TimeoutHeader)) // checked by the handler
		if h.Answer != nil {
			project := hd.Get(ProjectHeader)
			caller.Answer = func(ctx context.Context, id string, req domain.RespondRequest, who domain.Person) error {
				return h.Answer(ctx, project, id, req, who)
			}
		}
		return caller, nil
	}
	server := func(*http.Request) *mcp.Server { return s.server }
	// One path, both eras: sessions for 2025-11-25 and older, with a
	// stream store so a dropped stream resumes (Last-Event-ID) within this
	// replica; no session for 2026-07-28, so any replica serves any request,
	// and a cut POST ends its call's wait (the question stays open).
	// An idle session (its calls parked, say) rests without the SDK's
	// objects and is connected anew by its next request (SDK patch #4):
	// sessions are known here by id (sessionRef).
	events := &parkedStore{EventStore: newStreamStore(), closed: s.sessionClosed}
	stateful := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Logger: s.log,
		SessionTimeout: h.SessionTimeout, EventStore: events, RestIdleSessions: true})
	s.mu.Lock()
	s.httpEnds, s.events = true, events
	s.mu.Unlock()
	var sdk http.Handler = transports{
		stateful: stateful,
		stateless: mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Logger: s.log,
			Stateless: true, PropagateRequestCancellation: true}),
		s: s,
	}
	if s.parker != nil {
		// A session whose calls are parked has no POST in progress: keep it
		// from idling out while they wait.
		go s.keepSessions(stateful, h.SessionTimeout/3)
	}
	var bound http.Handler = sdk
	if h.Authenticate != nil {
		// The SDK binds a session to the TokenInfo.UserID that opened it, so
		// another credential cannot use (or read the stream of) the session.
		bound = auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
			p, err := h.Authenticate(r)
			if err != nil {
				return nil, auth.ErrInvalidToken
			}
			return &auth.TokenInfo{UserID: p.Key}, nil
		}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if crossSite(r) {
			writeError(w, domain.EForbidden, "cross-site requests to /mcp are refused")
			return
		}
		var p Principal
		if h.Authenticate != nil {
			var err error
			if p, err = h.Authenticate(r); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="askbridge"`)
				msg := "missing or unknown token: send Authorization: Bearer <token> (an agent or operator token of the bridge)"
				if e := (*domain.Error)(nil); errors.As(err, &e) {
					msg = e.Message
				}
				writeError(w, domain.EUnauthorized, msg)
				return
			}
		}
		q := r.URL.Query()
		project := firstOf(q.Get("project"), r.Header.Get(ProjectHeader))
		switch {
		case p.Project != "" && project != "" && project != p.Project:
			writeError(w, domain.EForbidden, "this agent token asks in project "+p.Project+", not "+project)
			return
		case p.Project != "":
			project = p.Project
		case project == "":
			project = h.DefaultProject
		}
		r.Header.Set(ProjectHeader, project)
		r.Header.Del(AgentHeader)
		if p.AgentID != "" {
			r.Header.Set(AgentHeader, p.AgentID)
		}
		if run := q.Get("run"); run != "" {
			r.Header.Set(RunHeader, run)
		}
		if d := q.Get("timeout"); d != "" {
			r.Header.Set(TimeoutHeader, d)
		}
		if _, err := ParseTimeout(r.Header.Get(TimeoutHeader)); err != nil {
			httperr.Write(w, &domain.Error{Code: domain.EInvalid, Message: "invalid timeout",
				Details: []domain.Detail{{Field: "timeout", Problem: err.Error()}}})
			return
		}
		if r.Method == http.MethodDelete {
			// The SDK closes a session only once its calls return, and a call
			// waits for its answer: end the session's waits first.
			s.endSessionID(r.Header.Get("Mcp-Session-Id"), p.Key)
		}
		bound.ServeHTTP(w, r)
	})
}

// withdrawer withdraws a question of an ended session with the credential
// that asked it: what a session keeps of its call's API client.
type withdrawer struct {
	hc             *http.Client
	token, project string
}

func (w withdrawer) Cancel(ctx context.Context, id, reason string) (*domain.Question, error) {
	c := client.New("http://localhost", w.token, w.project, client.WithHTTPClient(w.hc), client.WithUserAgent("askbridge-mcp-http"))
	return c.Cancel(ctx, id, reason)
}

// endSessionID ends the session with that MCP session id if the credential
// key is the one that uses it.
func (s *Server) endSessionID(id, key string) {
	if id == "" {
		return
	}
	ref := sessionRef{id: id}
	s.mu.Lock()
	st := s.sessions[ref]
	s.mu.Unlock()
	if st != nil && st.key == key {
		s.endSession(ref)
	}
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// crossSite reports a browser request from another site: a page must not
// drive the tool with the user's network position.
func crossSite(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return true // "null" and other opaque origins
	}
	return !strings.EqualFold(u.Host, r.Host)
}

func writeError(w http.ResponseWriter, code, msg string) {
	httperr.Write(w, &domain.Error{Code: code, Message: msg})
}

// inProcess calls an http.Handler directly: the MCP tool uses the bridge's
// own API without a network round trip.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.RemoteAddr = "127.0.0.1:0"
	r.RequestURI = r.URL.RequestURI()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
