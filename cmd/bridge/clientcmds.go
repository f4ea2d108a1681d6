package main

import (
	"context"
	"io"

	"github.com/askbridge/askbridge/agent/cli"
)

// clientCommand runs the client-side commands (ask, questions, mcp, hook);
// handled is false for any other command.
func clientCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) (int, bool) {
	return cli.RunVersion(ctx, buildVersion(), args, getenv, stdin, stdout, stderr)
}
