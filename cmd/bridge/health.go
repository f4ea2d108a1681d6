package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

const healthUsage = `usage: askbridge health [--ready] [--url URL]

Asks a running bridge whether it is alive (/healthz) or ready (/readyz,
with --ready) and exits 0 if so, 1 if not. For container health checks in
images without a shell or curl. The default URL is BRIDGE_URL (as for the
other client commands), else built from BRIDGE_ADDR (127.0.0.1 when it
listens on every interface).`

// clientURLVar is the client commands' variable (agent/cli), which health
// honours too; it is not one of serve's, so its help does not list it.
const clientURLVar = "BRIDGE_URL"

func health(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ready := fs.Bool("ready", false, "check /readyz (Redis reachable, adapters ready) instead of /healthz")
	url := fs.String("url", "", "the URL to check (default BRIDGE_URL/healthz, else http://BRIDGE_ADDR/healthz)")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		w, code := stderr, 2
		if errors.Is(err, flag.ErrHelp) {
			w, code = stdout, 0
		} else {
			fmt.Fprintf(stderr, "askbridge health: %v\n\n", err)
		}
		fmt.Fprintln(w, healthUsage)
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "askbridge health: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *url == "" {
		path := "/healthz"
		if *ready {
			path = "/readyz"
		}
		if base := getenv(clientURLVar); base != "" {
			*url = strings.TrimRight(base, "/") + path
		} else {
			*url = "http://" + localAddr(envOr(getenv, "BRIDGE_ADDR", "127.0.0.1:8080")) + path
		}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "askbridge health: --url %q is not a URL\n", *url)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "askbridge health: %s: no answer (%v)\n", *url, err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "askbridge health: %s: %s\n", *url, resp.Status)
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", *url)
	return 0
}

// localAddr turns a listen address into one to dial from the same host:
// an unspecified host (":8080", "0.0.0.0:8080", "[::]:8080") becomes
// 127.0.0.1.
func localAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// envOr is getenv(key), or def when it is empty.
func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
