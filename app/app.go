// Package app wires one bridge: the store, the router, the chat adapters
// (Slack, Discord, the web inbox), the agent API, remote MCP, the resume
// webhook deliverer, the deadline sweeper and the HTTP handler in front of
// them. `askbridge serve`, the benchmarks and the cross-adapter tests all build
// their bridges with it, so the wiring exists once.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/web"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/server/egress"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
)

// DefaultAddr is where a bridge listens when Settings.Addr is empty.
const DefaultAddr = "127.0.0.1:8080"

// adapter is a chat adapter's background work and shutdown.
type adapter interface {
	Start(ctx context.Context) error
	Close(ctx context.Context) error
}

// App is one bridge. New builds it, Run serves until its context ends,
// Close shuts it down in order.
type App struct {
	s         Settings
	log       *slog.Logger
	st        *store.Store
	router    *lifecycle.Router
	api       *api.API
	deliverer *resume.Deliverer
	closeMCP  func()
	adapters  []adapter
	handler   http.Handler

	mu      sync.Mutex
	ln      net.Listener
	srv     *http.Server
	bg      context.Context
	stopBG  context.CancelFunc
	workers sync.WaitGroup
	closed  bool
}

// New builds a bridge from s: it opens the store and constructs every
// part, but starts no background work and listens nowhere (see Listen and
// Run). On error nothing is left open.
func New(ctx context.Context, s Settings) (*App, error) {
	if s.Addr == "" {
		s.Addr = DefaultAddr
	}
	if s.Sweep == 0 {
		s.Sweep = 250 * time.Millisecond
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	auth := api.NewAuth(s.Agents, s.Operators)
	loopback := isLoopback(s.Addr)
	if auth.Open() && !loopback {
		return nil, fmt.Errorf("refusing to listen on %s without tokens: anyone who reaches it could ask and answer. "+
			"Configure agents[] and operators[] with tokens in the config file, or listen on 127.0.0.1", s.Addr)
	}
	// Resume webhooks go only where the egress policy admits (docs/security.md).
	// Without tokens on loopback (the local default) whoever can ask can
	// reach this machine anyway, so loopback receivers are admitted there.
	policy, err := egress.New(egress.Config{Allow: s.WebhookAllow, AllowLoopback: auth.Open() && loopback})
	if err != nil {
		return nil, fmt.Errorf("webhooks.allow: %v", err)
	}
	if s.WebhookGiveUp == 0 {
		s.WebhookGiveUp = 24 * time.Hour
	}

	st, err := store.Open(ctx, store.Options{URL: s.RedisURL, Prefix: s.RedisPrefix, Retention: s.Retention,
		Logger: log.With("component", "store"), DeliveryKeep: s.WebhookGiveUp + time.Hour})
	if err != nil {
		return nil, err
	}
	if st.Embedded() {
		log.Warn("using the embedded in-memory store: questions are lost on restart; set REDIS_URL for production")
	} else {
		log.Info("connected to Redis", "url", store.RedactURL(s.RedisURL))
	}
	a := &App{s: s, log: log, st: st}
	a.bg, a.stopBG = context.WithCancel(context.WithoutCancel(ctx))
	if err := a.build(auth, policy, loopback); err != nil {
		a.stopBG()
		_ = st.Close()
		return nil, err
	}
	return a, nil
}

// build constructs the router and everything that reaches it.
func (a *App) build(auth *api.Auth, policy *egress.Policy, loopback bool) error {
	s, log := &a.s, a.log
	metrics := api.NewMetrics()
	a.deliverer = resume.New(resume.Config{Store: a.st, Secret: s.WebhookSecretFor, Logger: log.With("component", "resume"),
		Observe: metrics.Delivery, ObserveSender: metrics.SenderDelivery, Lease: s.WebhookLease, GiveUpAfter: s.WebhookGiveUp, Egress: policy})
	a.router = lifecycle.NewRouter(lifecycle.RouterConfig{
		Store: a.st, Routes: s.Routes, Logger: log.With("component", "router"), Clock: s.Clock, PostTimeout: s.PostTimeout,
		DefaultTimeout: s.Timeout, Retention: s.Retention,
		HasWebhookSecret: func(agentID string) bool { return len(s.WebhookSecretFor(agentID)) > 0 },
		CheckResumeURL:   policy.CheckURL,
		Observers:        []lifecycle.Observer{metrics, a.deliverer},
	})
	mux := http.NewServeMux()
	if err := a.addChats(mux); err != nil {
		return err
	}
	a.addPagerDuty(mux, policy, metrics)
	a.api = api.New(api.Config{Router: a.router, Auth: auth, Logger: log.With("component", "api"), Metrics: metrics,
		MetricsToken: s.MetricsToken})
	a.api.Register(mux)
	a.closeMCP = mountMCP(mux, auth, mux, a.router, log.With("component", "mcp"), s.Version)
	var webAuth web.Authenticator
	if len(s.Operators) > 0 {
		webAuth = auth
	}
	inbox, err := web.New(web.Config{Router: a.router, Auth: webAuth, RequireLogin: len(s.Operators) > 0 || !loopback,
		Logger: log.With("component", "web"), Secure: s.SecureCookies, PublicURL: s.PublicURL, SessionKey: []byte(s.SessionKey), Guesses: auth})
	if err != nil {
		a.closeMCP()
		return err
	}
	inbox.Register(mux)
	a.handler = api.Guard(mux, api.GuardConfig{Open: auth.Open(), PublicURL: s.PublicURL})
	return nil
}

// chat is one chat adapter as the router and the mux see it.
type chat interface {
	adapter
	lifecycle.Channel
	Register(mux *http.ServeMux)
}

// addChats builds the Slack and Discord adapters whose bot token is set,
// adds them to the router and registers their endpoints.
func (a *App) addChats(mux *http.ServeMux) error {
	s := &a.s
	add := func(name, mode string, c chat, err error) error {
		if err != nil {
			return err
		}
		a.router.AddChannel(c)
		c.Register(mux)
		a.adapters = append(a.adapters, c)
		a.log.Info(name+" adapter enabled", "mode", mode)
		return nil
	}
	if s.Slack.BotToken != "" {
		mode := "HTTP endpoints /slack/interactions, /slack/events"
		if s.Slack.AppToken != "" {
			mode = "Socket Mode"
		}
		sc := s.Slack
		if sc.PublicURL == "" {
			sc.PublicURL = s.PublicURL // approvals link to their question page
		}
		c, err := slack.New(sc, a.router, a.log.With("adapter", "slack"))
		if err := add("Slack", mode, c, err); err != nil {
			return err
		}
	}
	if s.Discord.BotToken != "" {
		mode := "HTTP endpoint /discord/interactions"
		if s.Discord.PublicKey == "" {
			mode = "gateway"
		}
		dc := s.Discord
		if dc.PublicURL == "" {
			dc.PublicURL = s.PublicURL // copies link to the question page there
		}
		c, err := discord.New(dc, a.router, a.log.With("adapter", "discord"))
		if err := add("Discord", mode, c, err); err != nil {
			return err
		}
	}
	return nil
}

// Router is the bridge's router.
func (a *App) Router() *lifecycle.Router { return a.router }

// Store is the bridge's store.
func (a *App) Store() *store.Store { return a.st }

// Handler is every HTTP surface behind the guard against web pages: the
// agent API, /mcp, the web inbox and the chat adapters' endpoints.
func (a *App) Handler() http.Handler { return a.handler }

// Listen binds Settings.Addr (once) and returns the address bound.
func (a *App) Listen() (net.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ln == nil {
		ln, err := net.Listen("tcp", a.s.Addr)
		if err != nil {
			return nil, fmt.Errorf("listening on %s: %w", a.s.Addr, err)
		}
		per := a.s.ConnsPerIP
		if per == 0 {
			per = DefaultConnsPerIP
		}
		a.ln = limitPerIP(ln, per)
	}
	return a.ln.Addr(), nil
}

// Run starts the background work (adapters, the sweeper, the deliverer)
// and serves HTTP on Listen's address until ctx ends (nil) or serving
// fails. Call Close afterwards either way.
func (a *App) Run(ctx context.Context) error {
	if _, err := a.Listen(); err != nil {
		return err
	}
	a.mu.Lock()
	if a.closed || a.srv != nil {
		a.mu.Unlock()
		return errors.New("app: Run called twice or after Close")
	}
	a.srv = &http.Server{Handler: boundUnauthenticated(bodyDeadline(a.handler, chatBodyTimeout, apiBodyTimeout), unauthenticatedPerIP), ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	for _, c := range a.adapters {
		a.workers.Go(func() {
			if err := c.Start(a.bg); err != nil && !errors.Is(err, context.Canceled) {
				a.log.Error("adapter stopped", "err", err)
			}
		})
	}
	a.workers.Go(func() { a.router.Sweep(a.bg, a.s.Sweep) })
	a.workers.Go(func() { a.deliverer.Run(a.bg) })
	srv, ln := a.srv, a.ln
	a.mu.Unlock()

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
		return nil
	}
}

// Close shuts the bridge down gracefully, bounded by ctx: remote MCP
// sessions end, long-polls return the current record, in-flight requests
// finish, the adapters stop, the sweeper and the deliverer stop (an
// in-flight webhook finishes, or is retried by another replica after its
// lease), the router finishes the copies of every transition already made,
// and the store closes. Calling it again does nothing.
func (a *App) Close(ctx context.Context) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	srv, ln := a.srv, a.ln
	a.mu.Unlock()

	a.log.Info("shutting down: finishing in-flight work")
	a.closeMCP()  // remote MCP sessions end: their waits return, their questions are withdrawn
	a.api.Drain() // long-polls return the current record now
	if srv != nil {
		if err := srv.Shutdown(ctx); err != nil {
			a.log.Warn("HTTP shutdown did not finish in time", "err", err)
		}
	} else if ln != nil {
		_ = ln.Close()
	}
	for _, c := range a.adapters {
		if err := c.Close(ctx); err != nil {
			a.log.Warn("adapter shutdown", "err", err)
		}
	}
	a.stopBG()
	a.workers.Wait()
	var errs []error
	if err := a.router.Close(ctx); err != nil {
		a.log.Warn("finishing copies did not complete in time", "err", err)
		errs = append(errs, err)
	}
	if err := a.st.Close(); err != nil {
		errs = append(errs, err)
	}
	a.log.Info("stopped")
	return errors.Join(errs...)
}

// isLoopback reports whether addr only listens on the loopback interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
