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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/internal/admit"
	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/adapters/web"
	"github.com/askbridge/askbridge/internal/outbound"
	"github.com/askbridge/askbridge/server/api"
	"github.com/askbridge/askbridge/server/egress"
	"github.com/askbridge/askbridge/server/ops"
	"github.com/askbridge/askbridge/server/resume"
	"github.com/askbridge/askbridge/store"
	"github.com/askbridge/askbridge/store/native"
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
	st        lifecycle.Store
	closeSt   func() error
	stKind    string
	router    *lifecycle.Router
	api       *api.API
	deliverer *resume.Deliverer
	closeMCP  func()
	admitMCP  func(http.Handler) http.Handler // puts /mcp's POSTs in line (mcp.go)
	adapters  []adapter
	inbox     *web.Inbox
	slack     *slack.Adapter // when Slack is configured: the on-call directory looks people up by email there
	ops       *ops.Metrics
	handler   http.Handler

	mu      sync.Mutex
	ln      net.Listener
	gate    *admit.Listener
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

	a := &App{s: s, log: log}
	if err := a.openStore(ctx); err != nil {
		return nil, err
	}
	a.bg, a.stopBG = context.WithCancel(context.WithoutCancel(ctx))
	if err := a.build(auth, policy, loopback); err != nil {
		a.stopBG()
		_ = a.closeSt()
		return nil, err
	}
	return a, nil
}

// openStore opens Redis when Settings.RedisURL is set, else the native
// embedded store: durable in Settings.DataDir, in memory without one.
func (a *App) openStore(ctx context.Context) error {
	s, log := &a.s, a.log
	slog := log.With("component", "store")
	if s.RedisURL != "" {
		st, err := store.Open(ctx, store.Options{URL: s.RedisURL, Prefix: s.RedisPrefix, Retention: s.Retention,
			Logger: slog, DeliveryKeep: s.WebhookGiveUp + time.Hour})
		if err != nil {
			return err
		}
		log.Info("connected to Redis", "url", store.RedactURL(s.RedisURL))
		a.st, a.closeSt, a.stKind = st, st.Close, "Redis"
		return nil
	}
	st, err := native.Open(native.Options{Dir: s.DataDir, Retention: s.Retention, Logger: slog,
		DeliveryKeep: s.WebhookGiveUp + time.Hour})
	if err != nil {
		return err
	}
	if s.DataDir == "" {
		log.Warn("using the embedded store in memory: questions are lost on restart; give it a data directory " +
			"(--data-dir or BRIDGE_DATA_DIR) to keep them, or set REDIS_URL for several replicas")
		a.stKind = "embedded store in memory"
	} else {
		log.Info("using the embedded store", "data_dir", s.DataDir)
		a.stKind = "embedded store in " + s.DataDir
	}
	a.st, a.closeSt = st, st.Close
	return nil
}

// build constructs the router and everything that reaches it.
func (a *App) build(auth *api.Auth, policy *egress.Policy, loopback bool) error {
	s, log := &a.s, a.log
	metrics := api.NewMetrics()
	a.ops = ops.New(metrics.Registry(), log.With("component", "metrics"))
	a.ops.WatchStore(metrics.Registry(), a.st)
	a.ops.WatchAccepts(metrics.Registry(), func() (int64, time.Duration) {
		a.mu.Lock()
		g := a.gate
		a.mu.Unlock()
		return g.Waits()
	})
	if rs, ok := a.st.(*store.Store); ok {
		rs.Client().AddHook(a.ops) // Redis command latency and errors
	}
	webhooks := policy.Client(webhookAttemptTimeout)
	webhooks.Transport = a.ops.Transport(webhooks.Transport, "webhook", outbound.HTTPMethod)
	a.deliverer = resume.New(resume.Config{Store: a.st, Secret: s.WebhookSecretFor, Logger: log.With("component", "resume"),
		Observe: metrics.Delivery, ObserveSender: metrics.SenderDelivery, Lease: s.WebhookLease, GiveUpAfter: s.WebhookGiveUp, Egress: policy, Client: webhooks,
		TracerProvider: s.TracerProvider})
	a.router = lifecycle.NewRouter(lifecycle.RouterConfig{
		Store: a.st, Routes: s.Routes, Logger: log.With("component", "router"), Clock: s.Clock, PostTimeout: s.PostTimeout,
		DefaultTimeout: s.Timeout, Retention: s.Retention, BatchWindow: s.BatchWindow,
		HasWebhookSecret: func(agentID string) bool { return len(s.WebhookSecretFor(agentID)) > 0 },
		CheckResumeURL:   policy.CheckURL,
		Observers:        []lifecycle.Observer{metrics, a.ops, a.deliverer},
		TracerProvider:   s.TracerProvider,
	})
	mux := http.NewServeMux()
	if err := a.addChats(mux); err != nil {
		return err
	}
	a.addPagerDuty(mux, policy, metrics)
	a.api = api.New(api.Config{Router: a.router, Auth: auth, Logger: log.With("component", "api"), Metrics: metrics,
		MetricsToken: s.MetricsToken, TracerProvider: s.TracerProvider})
	a.api.Register(mux)
	a.closeMCP, a.admitMCP = mountMCP(mux, auth, a.api, mux, a.router, log.With("component", "mcp"), s.Version, s.MCPProgressEvery, s.MCPSessionTimeout)
	var webAuth web.Authenticator
	if len(s.Operators) > 0 {
		webAuth = auth
	}
	inbox, err := web.New(web.Config{Router: a.router, Auth: webAuth, RequireLogin: len(s.Operators) > 0 || !loopback,
		Logger: log.With("component", "web"), Secure: s.SecureCookies, PublicURL: s.PublicURL, SessionKey: []byte(s.SessionKey), Guesses: auth,
		ImageHosts: s.ImageHosts})
	if err != nil {
		a.closeMCP()
		return err
	}
	inbox.Register(mux)
	a.inbox = inbox // the email surface's require_login asks it (addChats)
	if s.TracerProvider != nil {
		a.ops.TraceInbound(s.TracerProvider)
	}
	a.handler = a.ops.Routes(api.Guard(mux, api.GuardConfig{Open: auth.Open(), PublicURL: s.PublicURL}), mux, a.inbound)
	return nil
}

// webhookAttemptTimeout bounds one resume webhook attempt (resume's
// default AttemptTimeout).
const webhookAttemptTimeout = 15 * time.Second

// inboundOnly are the inbound routes' platforms that are not a Channel.
var inboundOnly = []string{"pagerduty"}

// inbound tells the routes that receive a platform's requests (the first
// segment of the path names the platform: /slack/interactions,
// /discord/interactions, /pagerduty/webhook), for the acknowledgement time
// and bad-signature metrics.
func (a *App) inbound(pattern string) (string, bool) {
	_, path, _ := strings.Cut(pattern, " ")
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if _, ok := a.router.Channel(seg); ok && seg != "web" {
		return seg, true
	}
	return seg, slices.Contains(inboundOnly, seg)
}

// observed returns c (nil: a new client with timeout) with its transport
// (nil: one that keeps connections alive, as the adapters' default)
// reporting each call as platform's to the operational metrics.
func (a *App) observed(c *http.Client, timeout time.Duration, platform string, method outbound.MethodFunc) *http.Client {
	out := &http.Client{Timeout: timeout}
	if c != nil {
		cp := *c
		out = &cp
	}
	out.Transport = a.ops.Transport(keepAlive(out.Transport), platform, method)
	return out
}

// keepAlive is t, or for nil a transport like the adapters' default
// (adapters/internal/httpx): http.DefaultTransport keeping 64 idle
// connections per host.
func keepAlive(t http.RoundTripper) http.RoundTripper {
	if t != nil {
		return t
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.IdleConnTimeout = 128, 64, 90*time.Second
	return tr
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
		sc.HTTPClient = a.observed(sc.HTTPClient, 15*time.Second, "slack", outbound.SlackMethod)
		c, err := slack.New(sc, a.router, a.log.With("adapter", "slack"))
		if err := add("Slack", mode, c, err); err != nil {
			return err
		}
		a.slack = c
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
		dc.Transport = a.ops.Transport(keepAlive(dc.Transport), "discord", outbound.PathMethod)
		c, err := discord.New(dc, a.router, a.log.With("adapter", "discord"))
		if err := add("Discord", mode, c, err); err != nil {
			return err
		}
	}
	if s.Email.SMTPURL != "" {
		ec := s.Email
		if ec.PublicURL == "" {
			ec.PublicURL = s.PublicURL // the links in a mail point there
		}
		ec.Outbox, ec.Kick = a.st, a.deliverer.Kick // every mail leaves through the durable queue
		ec.ImageHosts = s.ImageHosts                // the inbox's picture hosts: the only ones a mail loads
		// Routes with email: {require_login: true} take an answer only
		// from a browser signed in to the web inbox (built after the chats).
		ec.SignedIn = func(r *http.Request, project string) (string, bool) {
			if a.inbox == nil {
				return "", false
			}
			return a.inbox.SignedIn(r, project)
		}
		c, err := email.New(ec, a.router, a.log.With("adapter", "email"))
		if err != nil {
			return err
		}
		a.router.AddChannel(c)
		a.deliverer.AddSender(c)
		c.Register(mux)
		a.log.Info("email adapter enabled", "answer_links", email.LinkPath)
	}
	if s.Telegram.Token != "" {
		mode := "webhook POST /telegram/webhook"
		if s.Telegram.WebhookSecret == "" {
			mode = "long polling (getUpdates)"
		}
		tc := s.Telegram
		if tc.PublicURL == "" {
			tc.PublicURL = s.PublicURL
		}
		tc.Transport = a.ops.Transport(keepAlive(tc.Transport), "telegram", outbound.LastSegmentMethod)
		c, err := telegram.New(tc, a.router, a.log.With("adapter", "telegram"))
		if err := add("Telegram", mode, c, err); err != nil {
			return err
		}
	}
	if s.Teams.AppID != "" {
		tc := s.Teams
		if tc.PublicURL == "" {
			tc.PublicURL = s.PublicURL // cards link to the question page there
		}
		tc.Transport = a.ops.Transport(keepAlive(tc.Transport), "teams", outbound.PathMethod)
		c, err := teams.New(tc, a.router, a.log.With("adapter", "teams"))
		if err := add("Microsoft Teams", "HTTP endpoint /teams/messages", c, err); err != nil {
			return err
		}
	}
	return nil
}

// Router is the bridge's router.
func (a *App) Router() *lifecycle.Router { return a.router }

// Store is the bridge's store.
func (a *App) Store() lifecycle.Store { return a.st }

// StoreKind says where the bridge keeps its state: "Redis", "embedded
// store in <data dir>" or "embedded store in memory".
func (a *App) StoreKind() string { return a.stKind }

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
		// A burst of new connections is taken a few hundred at a
		// time (internal/admit).
		a.gate = admit.Limit(limitPerIP(ln, per), a.s.AcceptAtOnce, admit.AcceptHold)
		a.ln = a.gate
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
	// /mcp's POSTs wait their turn in front of everything (a burst is
	// worked on a few at a time), before the body's clock starts.
	h := boundUnauthenticated(bodyDeadline(a.handler, chatBodyTimeout, apiBodyTimeout), unauthenticatedPerIP)
	a.srv = &http.Server{Handler: onPath("/mcp", a.admitMCP, h), ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout,
		ConnState: a.gate.ConnState, ConnContext: a.gate.ConnContext, ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
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
	if err := a.closeSt(); err != nil {
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
