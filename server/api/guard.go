package api

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/askbridge/askbridge/domain"
)

// GuardConfig says which requests reach the bridge at all.
type GuardConfig struct {
	// Open: no tokens are configured (the embedded default on loopback).
	// Then only requests addressed to a loopback host (or PublicURL's host)
	// are served, so a web page cannot reach the bridge through DNS
	// rebinding.
	Open bool
	// PublicURL is the address people and platforms use to reach the
	// bridge (public_url), if configured: its host is admitted as a Host
	// and its origin as an Origin.
	PublicURL string
}

// Guard wraps the whole server against web pages a developer happens to
// open (the trust model):
//   - without tokens, a request whose Host is not loopback, localhost or
//     the public URL's host is refused (403);
//   - on every configuration, a state-changing request from another site
//     (Origin not the bridge's own, or Sec-Fetch-Site: cross-site) is
//     refused (403).
//
// The platform endpoints (/slack/, /discord/, /telegram/, /teams/) are exempt: every request
// there is verified by its platform signature, and a tunnel may give them
// any Host.
func Guard(next http.Handler, cfg GuardConfig) http.Handler {
	var public *url.URL
	if cfg.PublicURL != "" {
		public, _ = url.Parse(cfg.PublicURL)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/slack/") || strings.HasPrefix(r.URL.Path, "/discord/") || r.URL.Path == "/telegram/webhook" || r.URL.Path == "/teams/messages" {
			next.ServeHTTP(w, r)
			return
		}
		if cfg.Open && !loopbackHost(r.Host) && !sameHost(r.Host, public) {
			refuse(w, fmt.Sprintf("this bridge has no tokens, so it answers only requests addressed to 127.0.0.1, [::1] or localhost, not %q: "+
				"open it at http://127.0.0.1:<port>, or configure tokens and public_url", r.Host))
			return
		}
		if !safeMethod(r.Method) {
			if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
				refuse(w, "cross-site request refused: another web site may not change anything on this bridge")
				return
			}
			if o := r.Header.Get("Origin"); o != "" && !ownOrigin(o, r.Host, public) {
				refuse(w, "cross-site request refused: Origin "+o+" is not this bridge's own")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusForbidden, map[string]any{"error": domain.Errorf(domain.EForbidden, "%s", msg)})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// loopbackHost reports whether a Host header names this machine's loopback
// interface: localhost (or *.localhost), 127.0.0.0/8 or ::1, any port.
func loopbackHost(hostport string) bool {
	h := hostOnly(hostport)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func hostOnly(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

func sameHost(hostport string, public *url.URL) bool {
	return public != nil && public.Host != "" && hostOnly(hostport) == strings.ToLower(public.Hostname())
}

// ownOrigin reports whether an Origin header is the bridge's own: the host
// (and port) the request was addressed to, or the public URL's origin.
func ownOrigin(origin, host string, public *url.URL) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // includes "null": sandboxed frames, file: pages
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	return public != nil && strings.EqualFold(u.Scheme, public.Scheme) && strings.EqualFold(u.Host, public.Host)
}

// checkJSONBody refuses a request body that is not declared as JSON: a
// web page can send text/plain or a form without asking first, never
// application/json.
func checkJSONBody(r *http.Request) error {
	if safeMethod(r.Method) || r.ContentLength == 0 || (r.ContentLength < 0 && r.Body == http.NoBody) {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		return nil
	}
	if ct == "" {
		ct = "none"
	}
	return &domain.Error{Code: domain.EUnsupportedMediaType, Message: "the request body must be JSON sent with Content-Type: application/json",
		Details: []domain.Detail{{Field: "Content-Type", Problem: fmt.Sprintf("is %s; send application/json", ct)}}}
}
