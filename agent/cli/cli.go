// Package cli holds the client-side commands of the bridge binary: ask,
// questions, mcp and hook. They talk to a running bridge over its HTTP API,
// configured by BRIDGE_URL, BRIDGE_TOKEN and BRIDGE_PROJECT.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/agent/client"
	"github.com/askbridge/askbridge/agent/hook"
	"github.com/askbridge/askbridge/agent/internal/reach"
	"github.com/askbridge/askbridge/agent/internal/termsafe"
	"github.com/askbridge/askbridge/agent/mcpserver"
	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/tracing"
)

// Exit codes of the client commands.
const (
	ExitOK        = 0 // answered (ask), done (other commands)
	ExitError     = 1 // the bridge refused or could not be reached
	ExitUsage     = 2 // bad flags or arguments
	ExitExpired   = 3 // ask: the question expired unanswered
	ExitCancelled = 4 // ask: the question was cancelled (dismissed, superseded, or ask interrupted)
)

// Defaults of the environment.
const (
	DefaultURL     = "http://127.0.0.1:8080"
	DefaultProject = "default"
)

// Env is the client configuration read from the environment.
type Env struct {
	URL     string // BRIDGE_URL
	Token   string // BRIDGE_TOKEN
	Project string // BRIDGE_PROJECT
	Route   string // BRIDGE_ROUTE
	AgentID string // BRIDGE_AGENT_ID
	RunID   string // BRIDGE_RUN_ID
	Timeout string // BRIDGE_TIMEOUT (askbridge mcp: how long its questions stay open)
	// Traceparent and Tracestate are the agent run's W3C trace context
	// (TRACEPARENT, TRACESTATE; empty when TRACEPARENT is not a valid
	// one), sent on every request so the question joins the agent's trace.
	Traceparent, Tracestate string
	// notice shows the user what the bridge ignored or guessed (nil: nothing).
	notice func(string)
}

// ReadEnv reads the BRIDGE_* variables, with defaults.
func ReadEnv(getenv func(string) string) Env {
	e := Env{
		URL: getenv("BRIDGE_URL"), Token: getenv("BRIDGE_TOKEN"), Project: getenv("BRIDGE_PROJECT"),
		Route: getenv("BRIDGE_ROUTE"), AgentID: getenv("BRIDGE_AGENT_ID"), RunID: getenv("BRIDGE_RUN_ID"),
		Timeout: getenv("BRIDGE_TIMEOUT"),
	}
	e.Traceparent, e.Tracestate = tracing.Carrier(tracing.FromEnv(context.Background(), getenv))
	if e.URL == "" {
		e.URL = DefaultURL
	}
	if e.Project == "" {
		e.Project = DefaultProject
	}
	return e
}

// Client returns an API client for the environment.
func (e Env) Client(opts ...client.Option) *client.Client {
	opts = append([]client.Option{client.WithTraceContext(e.Traceparent, e.Tracestate)}, opts...)
	if e.notice != nil {
		opts = append(opts, client.WithNotices(e.notice))
	}
	return client.New(e.URL, e.Token, e.Project, opts...)
}

// app carries what every command needs; tests replace isTTY and the clock.
// stdout and stderr show text from agents and people made visible
// (termsafe): a question cannot move the cursor, rewrite a line, set the
// clipboard or plant a link in the terminal. rawOut and rawErr are the
// streams themselves, for JSON and for the CLI's own control sequences.
type app struct {
	env    Env
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	rawOut io.Writer
	rawErr io.Writer
	isTTY  func(io.Writer) bool
	now    func() time.Time
	tick   time.Duration // refresh of the waiting line
	// version is the build's, for the MCP server's serverInfo.
	version string
	// cmd is the command running ("ask", "questions"…), for its messages.
	cmd string
	// noticed holds the bridge's notices already printed: each once.
	noticeMu sync.Mutex
	noticed  map[string]bool
}

// Run runs a client-side command. handled is false when args[0] is not one
// of ask, questions, mcp, hook; the caller then handles it.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) (exitCode int, handled bool) {
	return RunVersion(ctx, "", args, getenv, stdin, stdout, stderr)
}

// RunVersion is Run for a build that knows its version: `askbridge mcp`
// reports it as serverInfo.version.
func RunVersion(ctx context.Context, version string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) (exitCode int, handled bool) {
	a := newApp(ReadEnv(getenv), stdin, stdout, stderr)
	a.version = version
	defer a.flush()
	return a.run(ctx, args)
}

// newApp returns an app whose stdout and stderr make text visible
// (termsafe) over the raw streams.
func newApp(env Env, stdin io.Reader, stdout, stderr io.Writer) *app {
	a := &app{env: env, stdin: stdin, stdout: termsafe.New(stdout), stderr: termsafe.New(stderr), rawOut: stdout, rawErr: stderr,
		isTTY: isTerminal, now: time.Now, tick: time.Second}
	a.env.notice = a.notice
	return a
}

// notice prints a notice of the bridge (what it ignored or guessed about a
// request it served) on stderr, once per command.
func (a *app) notice(n string) {
	a.noticeMu.Lock()
	defer a.noticeMu.Unlock()
	if a.noticed[n] {
		return
	}
	if a.noticed == nil {
		a.noticed = map[string]bool{}
	}
	a.noticed[n] = true
	fmt.Fprintf(a.stderr, "askbridge %s: note: %s\n", a.cmd, n)
}

// flush writes what the safe writers held back.
func (a *app) flush() {
	for _, w := range []io.Writer{a.stdout, a.stderr} {
		if s, ok := w.(*termsafe.Writer); ok {
			_ = s.Flush()
		}
	}
}

func (a *app) run(ctx context.Context, args []string) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	a.cmd = args[0]
	switch args[0] {
	case "ask", "questions":
		if msg := urlProblem(a.env.URL); msg != "" && !asksForHelp(args[1:]) {
			fmt.Fprintf(a.stderr, "askbridge %s: %s\n", args[0], msg)
			return ExitUsage, true
		}
	}
	switch args[0] {
	case "ask":
		return a.ask(ctx, args[1:]), true
	case "questions":
		return a.questions(ctx, args[1:]), true
	case "mcp":
		return a.mcp(ctx, args[1:]), true
	case "hook":
		return a.hook(ctx, args[1:]), true
	}
	return 0, false
}

func (a *app) mcp(ctx context.Context, args []string) int {
	fs := newFlags("mcp", a.stderr, "usage: askbridge mcp\n\nA stdio MCP server exposing the ask_user tool. Configured by BRIDGE_URL, BRIDGE_TOKEN,\nBRIDGE_PROJECT, BRIDGE_ROUTE, BRIDGE_AGENT_ID, BRIDGE_RUN_ID and BRIDGE_TIMEOUT.")
	every := fs.Duration("progress-every", mcpserver.DefaultProgressEvery, "interval of progress notifications while ask_user waits")
	timeout := fs.String("timeout", a.env.Timeout, "how long each question stays open, 10s to 720h (30 days), e.g. 2h (env BRIDGE_TIMEOUT; default the route's, else 5m)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(a.stderr, "askbridge mcp: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	deadline, err := mcpserver.ParseTimeout(*timeout)
	if err != nil {
		src := "BRIDGE_TIMEOUT"
		if isSet(fs, "timeout") {
			src = "--timeout"
		}
		fmt.Fprintf(a.stderr, "askbridge mcp: %s: %v\n", src, err)
		return ExitUsage
	}
	logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := a.env.Client(client.WithUserAgent("askbridge-mcp"))
	cfg := mcpserver.Config{
		Client: c, Route: a.env.Route,
		AgentID: a.env.AgentID, RunID: a.env.RunID, Logger: logger, ProgressEvery: *every, Version: a.version,
		Timeout: deadline,
	}
	if a.env.Token == "" {
		// The embedded default (no tokens): the host's own user may answer
		// through an elicitation. An agent token may not answer questions.
		cfg.Answer = func(ctx context.Context, id string, req domain.RespondRequest, _ domain.Person) error {
			_, err := c.Respond(ctx, id, req)
			return err
		}
	}
	srv := mcpserver.New(cfg)
	go srv.CheckBridge(ctx)
	if err := srv.Serve(ctx, a.stdin, a.rawOut); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(a.stderr, "askbridge mcp: %v\n", err)
		return ExitError
	}
	return ExitOK
}

func (a *app) hook(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "claude-code" {
		fmt.Fprintln(a.stderr, "usage: askbridge hook claude-code [flags] < hook-input.json")
		return hook.ExitUsage
	}
	return hook.Run(ctx, args[1:], hook.Env{URL: a.env.URL, Token: a.env.Token, Project: a.env.Project,
		Route: a.env.Route, AgentID: a.env.AgentID, Traceparent: a.env.Traceparent, Tracestate: a.env.Tracestate}, a.stdin, a.rawOut, a.stderr)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	if s, ok := w.(*termsafe.Writer); ok {
		w = s.Underlying()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ", ") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func newFlags(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(stderr, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// asksForHelp reports whether args ask for a command's help, which needs no
// bridge.
func asksForHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help", "help":
			return true
		}
	}
	return len(args) == 0
}

// parse parses flags placed anywhere among the arguments ("answer ID 2 -m
// note"). ok is false when the command must end with code.
func parse(fs *flag.FlagSet, args []string) (code int, ok bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return ExitOK, false
			}
			return ExitUsage, false
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	// Re-parse the positional arguments alone so fs.Args returns them.
	_ = fs.Parse(append([]string{"--"}, positional...))
	return 0, true
}

// apiFailure prints an error of the bridge and returns ExitError, with the
// next step when the cause is one a newcomer meets: no bridge at BRIDGE_URL,
// a BRIDGE_URL without a scheme, a missing or unknown BRIDGE_TOKEN, an agent
// id the token may not use.
func (a *app) apiFailure(cmd string, err error) int {
	var e *domain.Error
	if errors.As(err, &e) {
		if e.Code == domain.EUnauthorized {
			// The server names the HTTP header; the CLI's user sets a variable.
			fmt.Fprintf(a.stderr, "askbridge %s: %s: %s\n", cmd, e.Code, a.hint(e))
			return ExitError
		}
		fmt.Fprintf(a.stderr, "askbridge %s: %s: %s\n", cmd, e.Code, e.Message)
		for _, d := range e.Details {
			fmt.Fprintf(a.stderr, "  %s: %s\n", d.Field, d.Problem)
		}
		if hint := a.hint(e); hint != "" {
			fmt.Fprintf(a.stderr, "%s\n", hint)
		}
		return ExitError
	}
	if msg := a.transportHint(err); msg != "" {
		fmt.Fprintf(a.stderr, "askbridge %s: %s\n", cmd, msg)
		return ExitError
	}
	fmt.Fprintf(a.stderr, "askbridge %s: %v\n", cmd, err)
	return ExitError
}

// hint names the setting behind an error of the bridge, or "".
func (a *app) hint(e *domain.Error) string {
	switch e.Code {
	case domain.EUnauthorized:
		if a.env.Token == "" {
			return "this bridge requires a token: set BRIDGE_TOKEN to an agent or operator token"
		}
		return "BRIDGE_TOKEN is not a token this bridge accepts: check its value"
	case domain.EForbidden:
		for _, d := range e.Details {
			if d.Field == "agent_id" {
				return "the agent id comes from --agent or BRIDGE_AGENT_ID: leave both unset to ask as the token's agent"
			}
		}
	}
	return ""
}

// transportHint explains an error that kept the request from the bridge,
// or returns "".
func (a *app) transportHint(err error) string { return reach.Problem(a.env.URL, err) }

// urlProblem says what is wrong with BRIDGE_URL, or "".
func urlProblem(raw string) string { return reach.URLProblem(raw) }
