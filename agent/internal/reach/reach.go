// Package reach words a failure to reach the bridge the same way in every
// client command (the CLI, the Claude Code hook, the MCP server): the
// setting to check and the fix, never a Go dial error.
package reach

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"
)

// NoBridge is what the client commands say when nothing listens at url.
func NoBridge(url string) string {
	return fmt.Sprintf("no bridge at %s (BRIDGE_URL): start it with `askbridge serve`, or set BRIDGE_URL", url)
}

// URLProblem says what is wrong with BRIDGE_URL, or "".
func URLProblem(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("BRIDGE_URL must start with http:// or https://, e.g. http://localhost:8080 (it is %q)", raw)
	}
	return ""
}

// Problem explains an error that kept a request from the bridge at url
// (BRIDGE_URL), or returns "" when err is something else.
func Problem(url string, err error) string {
	if msg := URLProblem(url); msg != "" {
		return msg
	}
	if Refused(err) {
		return NoBridge(url)
	}
	return ""
}

// Refused reports whether err means nothing listens at the bridge's
// address.
func Refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
