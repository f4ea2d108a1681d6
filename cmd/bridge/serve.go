package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/askbridge/askbridge/app"
	"github.com/askbridge/askbridge/internal/memlimit"
	"github.com/askbridge/askbridge/internal/tracing"
	"github.com/askbridge/askbridge/store"
)

// serveOptions are the flags and environment of `askbridge serve`.
type serveOptions struct {
	addr, config, redisURL string
	// dataDir is the embedded store's directory; "" keeps it in memory.
	dataDir string
	// sweep is the deadline sweeper's interval.
	sweep time.Duration
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are printed below
	o := serveOptions{sweep: 250 * time.Millisecond}
	env := readServeEnv(getenv) // its problems are reported with the configuration's
	fs.StringVar(&o.addr, "addr", env.addr, "listen `address` (env BRIDGE_ADDR)")
	fs.StringVar(&o.config, "config", env.config, "YAML configuration `file` (env BRIDGE_CONFIG)")
	// No default from REDIS_URL here: the help must never print a password.
	// The configuration applies REDIS_URL (and REDIS_URL_FILE) itself.
	fs.StringVar(&o.redisURL, "redis-url", "", "Redis `URL` (env REDIS_URL); empty: the embedded store")
	fs.StringVar(&o.dataDir, "data-dir", env.dataDir, "`directory` of the embedded store when there is no Redis URL (env BRIDGE_DATA_DIR); '' keeps questions in memory only")
	ephemeral := fs.Bool("ephemeral", false, "keep the embedded store in memory only: everything is lost on exit (tests, demos)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeServeUsage(stdout, fs)
			return 0
		}
		fmt.Fprintf(stderr, "askbridge serve: %v\n\n", err)
		writeServeUsage(stderr, fs)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "askbridge serve: unexpected argument %q (see askbridge serve --help)\n", fs.Arg(0))
		return 2
	}
	if *ephemeral {
		o.dataDir = ""
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: env.logLevel}))
	if n, from := memlimit.Apply(getenv); n > 0 {
		log.Info("Go memory limit set to 90% of the container's (GOMEMLIMIT unset)", "limit", memlimit.String(n), "cgroup", from)
	}
	if err := runServer(ctx, o, env, stdout, log); err != nil {
		fmt.Fprintf(stderr, "askbridge serve: %v\n", err)
		return 1
	}
	return 0
}

// runServer builds the bridge from the configuration and serves until ctx
// ends, then shuts down gracefully within 30 s (app.App.Close).
func runServer(ctx context.Context, o serveOptions, env *serveEnvValues, stdout io.Writer, log *slog.Logger) error {
	cfg, err := resolveConfig(o.config, env)
	if err != nil {
		return err
	}
	if o.redisURL != "" {
		cfg.RedisURL = o.redisURL
	}
	cfg.Addr, cfg.Sweep, cfg.Logger, cfg.Version = o.addr, o.sweep, log, buildVersion()
	if cfg.RedisURL == "" {
		cfg.DataDir = o.dataDir
	}
	store.LogRedisTo(log.With("component", "redis"))
	getenv := env.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	tp, stopTracing, err := tracing.Setup(ctx, tracing.Config{Endpoint: cfg.TracingEndpoint, Version: cfg.Version}, getenv)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Warn("sending the last traces failed", "err", err)
		}
	}()
	cfg.TracerProvider = tp
	a, err := app.New(ctx, *cfg)
	if err != nil {
		return err
	}
	addr, err := a.Listen()
	if errors.Is(err, syscall.EADDRINUSE) {
		err = fmt.Errorf("%s is already in use (another askbridge, or another program): choose another address with --addr or BRIDGE_ADDR, e.g. --addr 127.0.0.1:8081 (%w)", cfg.Addr, err)
	}
	if err == nil {
		fmt.Fprintf(stdout, "askbridge listening on http://%s (%s; web inbox at /; PID %d)\n", addr, a.StoreKind(), os.Getpid())
		log.Info("listening", "addr", addr.String())
		err = a.Run(ctx)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = a.Close(sctx) // Close logs what did not finish in time
	return err
}
