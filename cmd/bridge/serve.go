package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/adapters/discord"
	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/web"
	"github.com/askbridge/askbridge/agentrun/api"
	"github.com/askbridge/askbridge/agentrun/egress"
	"github.com/askbridge/askbridge/agentrun/resume"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store"
)

// serveOptions are the flags and environment of `bridge serve`.
type serveOptions struct {
	addr, config, redisURL string
	// sweep is the deadline sweeper's interval.
	sweep time.Duration
}

// closer is an adapter's shutdown.
type closer interface {
	Close(ctx context.Context) error
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are printed below
	o := serveOptions{sweep: 250 * time.Millisecond}
	fs.StringVar(&o.addr, "addr", envOr(getenv, "BRIDGE_ADDR", "127.0.0.1:8080"), "listen `address` (env BRIDGE_ADDR)")
	fs.StringVar(&o.config, "config", getenv("BRIDGE_CONFIG"), "YAML configuration `file` (env BRIDGE_CONFIG)")
	// No default from REDIS_URL here: the help must never print a password.
	// The configuration applies REDIS_URL (and REDIS_URL_FILE) itself.
	fs.StringVar(&o.redisURL, "redis-url", "", "Redis `URL` (env REDIS_URL); empty: the embedded in-memory store")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeServeUsage(stdout, fs)
			return 0
		}
		fmt.Fprintf(stderr, "bridge serve: %v\n\n", err)
		writeServeUsage(stderr, fs)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bridge serve: unexpected argument %q (see bridge serve --help)\n", fs.Arg(0))
		return 2
	}
	log := newLogger(stderr, getenv("BRIDGE_LOG_LEVEL"))
	if err := runServer(ctx, o, getenv, stdout, log); err != nil {
		fmt.Fprintf(stderr, "bridge serve: %v\n", err)
		return 1
	}
	return 0
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil || level == "" {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// runServer wires the bridge and serves until ctx ends, then shuts down
// gracefully: in-flight requests finish, long-polls return the current
// record, copies being finished and webhooks being sent complete.
func runServer(ctx context.Context, o serveOptions, getenv func(string) string, stdout io.Writer, log *slog.Logger) error {
	cfg, err := loadConfig(o.config, getenv)
	if err != nil {
		return err
	}
	if o.redisURL != "" {
		cfg.RedisURL = o.redisURL
	}
	auth := api.NewAuth(cfg.Agents, cfg.Operators)
	loopback := isLoopback(o.addr)
	if auth.Open() && !loopback {
		return fmt.Errorf("refusing to listen on %s without tokens: anyone who reaches it could ask and answer. "+
			"Configure agents[] and operators[] with tokens in the config file, or listen on 127.0.0.1", o.addr)
	}

	store.LogRedisTo(log.With("component", "redis"))
	// Resume webhooks go only where the egress policy admits (DESIGN §7a).
	// Without tokens on loopback (the local default) whoever can ask can
	// reach this machine anyway, so loopback receivers are admitted there.
	policy, err := egress.New(egress.Config{Allow: cfg.WebhookAllow, AllowLoopback: auth.Open() && loopback})
	if err != nil {
		return fmt.Errorf("webhooks.allow: %v", err)
	}

	st, err := store.Open(ctx, store.Options{URL: cfg.RedisURL, Prefix: cfg.RedisPrefix, Retention: cfg.Retention,
		Logger: log.With("component", "store"), DeliveryKeep: cfg.WebhookGiveUp + time.Hour})
	if err != nil {
		return err
	}
	defer st.Close()
	if st.Embedded() {
		log.Warn("using the embedded in-memory store: questions are lost on restart; set REDIS_URL for production")
	} else {
		log.Info("connected to Redis", "url", store.RedactURL(cfg.RedisURL))
	}

	metrics := api.NewMetrics()
	deliverer := resume.New(resume.Config{Store: st, Secret: cfg.webhookSecret, Logger: log.With("component", "resume"),
		Observe: metrics.Delivery, Lease: cfg.WebhookLease, GiveUpAfter: cfg.WebhookGiveUp, Egress: policy})
	router := core.NewRouter(core.RouterConfig{
		Store: st, Routes: cfg.Routes, Logger: log.With("component", "router"),
		DefaultTimeout: cfg.Timeout, Retention: cfg.Retention,
		HasWebhookSecret: func(agentID string) bool { return len(cfg.webhookSecret(agentID)) > 0 },
		CheckResumeURL:   policy.CheckURL,
		Observe: func(q *core.Question) {
			metrics.Observe(q)
			if q.WebhookMode() {
				deliverer.Kick() // its resume webhook goes out now, not at the next poll
			}
		},
	})
	mux := http.NewServeMux()
	var closers []closer
	var starts []func(context.Context) error

	if cfg.Slack.BotToken != "" {
		a, err := slack.New(slack.Config{BotToken: cfg.Slack.BotToken, SigningSecret: cfg.Slack.SigningSecret,
			AppToken: cfg.Slack.AppToken, APIURL: cfg.Slack.APIURL}, router, log.With("adapter", "slack"))
		if err != nil {
			return err
		}
		router.AddChannel(a)
		a.Register(mux)
		closers = append(closers, a)
		starts = append(starts, a.Start)
		mode := "HTTP endpoints /slack/interactions, /slack/events"
		if cfg.Slack.AppToken != "" {
			mode = "Socket Mode"
		}
		log.Info("Slack adapter enabled", "mode", mode)
	}
	if cfg.Discord.BotToken != "" {
		a, err := discord.New(discord.Config{BotToken: cfg.Discord.BotToken, ApplicationID: cfg.Discord.ApplicationID,
			PublicKey: cfg.Discord.PublicKey, APIURL: cfg.Discord.APIURL}, router, log.With("adapter", "discord"))
		if err != nil {
			return err
		}
		router.AddChannel(a)
		a.Register(mux)
		closers = append(closers, a)
		starts = append(starts, a.Start)
		mode := "HTTP endpoint /discord/interactions"
		if cfg.Discord.PublicKey == "" {
			mode = "gateway"
		}
		log.Info("Discord adapter enabled", "mode", mode)
	}

	a := api.New(api.Config{Router: router, Auth: auth, Logger: log.With("component", "api"), Metrics: metrics,
		MetricsToken: cfg.MetricsToken})
	a.Register(mux)
	closeMCP := mountMCP(mux, auth, mux, router, log.With("component", "mcp"))
	var webAuth web.Authenticator
	if len(cfg.Operators) > 0 {
		webAuth = auth
	}
	inbox, err := web.New(web.Config{Router: router, Auth: webAuth, RequireLogin: len(cfg.Operators) > 0 || !loopback,
		Logger: log.With("component", "web"), Secure: cfg.SecureCookies, SessionKey: []byte(cfg.SessionKey)})
	if err != nil {
		return err
	}
	inbox.Register(mux)

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.addr, err)
	}
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBG()
	// Background work (adapters, the sweeper, the deliverer) stops with bg.
	var workers sync.WaitGroup
	for _, start := range starts {
		workers.Go(func() {
			if err := start(bg); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("adapter stopped", "err", err)
			}
		})
	}
	workers.Go(func() { router.Sweep(bg, o.sweep) })
	workers.Go(func() { deliverer.Run(bg) })

	handler := api.Guard(mux, api.GuardConfig{Open: auth.Open(), PublicURL: cfg.PublicURL})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	store := "embedded in-memory store"
	if !st.Embedded() {
		store = "Redis"
	}
	fmt.Fprintf(stdout, "askbridge listening on http://%s (%s; web inbox at /)\n", ln.Addr(), store)
	log.Info("listening", "addr", ln.Addr().String())

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight work")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closeMCP() // remote MCP sessions end: their waits return, their questions are withdrawn
	a.Drain()  // long-polls return the current record now
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("HTTP shutdown did not finish in time", "err", err)
	}
	for _, c := range closers {
		if err := c.Close(sctx); err != nil {
			log.Warn("adapter shutdown", "err", err)
		}
	}
	// Stop the sweeper and the deliverer (an in-flight webhook finishes, or
	// is retried by another replica after its lease), then let the router
	// finish the copies of every transition already made.
	stopBG()
	workers.Wait()
	if err := router.Close(sctx); err != nil {
		log.Warn("finishing copies did not complete in time", "err", err)
	}
	log.Info("stopped")
	return nil
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
