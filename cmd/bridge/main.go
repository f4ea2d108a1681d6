// Command askbridge (built from cmd/bridge) runs askbridge: the server (serve) and its command-line
// clients (ask, questions, mcp, hook).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return 0
	case "health":
		return health(ctx, args[1:], getenv, stdout, stderr)
	case "telegram":
		return telegramCommand(ctx, args[1:], getenv, stdout, stderr)
	case "teams":
		return teamsCommand(ctx, args[1:], getenv, stdout, stderr)
	case "backup":
		return backupCommand(ctx, args[1:], getenv, stdout, stderr)
	case "check-data":
		return checkDataCommand(args[1:], stdout, stderr)
	case "version", "--version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "askbridge version: unexpected argument %q\n", args[1])
			return 2
		}
		printVersion(stdout)
		return 0
	}
	if code, ok := clientCommand(ctx, args, getenv, stdin, stdout, stderr); ok {
		return code
	}
	fmt.Fprintf(stderr, "askbridge: unknown command %q\n%s\n", args[0], usage)
	return 2
}

const usage = `usage: askbridge <command> [flags]

commands:
  serve                      run the bridge: HTTP API, web inbox, Slack and Discord adapters,
                             remote MCP at /mcp, /healthz, /readyz, /metrics
  ask                        ask a question and wait for the answer
  questions list             pending questions of the project, oldest first
  questions show ID          one question with its numbered options
  questions answer ID ...    answer a question
  questions cancel ID        dismiss or withdraw a question
  questions audit [ID]       the audit trail of a question or of the project
  mcp                        stdio MCP server exposing ask_user
  hook claude-code           Claude Code hook (PreToolUse, PermissionRequest)
  telegram set-webhook       point the Telegram bot at <public_url>/telegram/webhook
  teams manifest             write the Teams app package (manifest and icons) for the bot
  health [--ready]           exit 0 if the local bridge answers /healthz (/readyz): container health checks
  backup FILE                a consistent copy of the running bridge's embedded store, written to FILE
  check-data FILE            check a data file of the embedded store (a backup) without changing it
  version                    print the version, commit and Go version (also --version)
  help                       this text

"askbridge <command> --help" describes a command's flags. The client commands (ask,
questions, mcp, hook) talk to a running bridge: BRIDGE_URL, BRIDGE_TOKEN, BRIDGE_PROJECT.`
