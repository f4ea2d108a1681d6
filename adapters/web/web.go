// Package web is askbridge's built-in web inbox: every pending question of
// the projects an operator may see, answerable with plain HTML forms,
// kept live with Server-Sent Events, plus the response page notifications
// link to and the run history. Pages are rendered on the server with
// html/template from embedded files; a little vanilla JavaScript adds the
// live updates, and everything works without it.
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/domain"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Authenticator resolves an operator token (from the configuration's
// operators[]). Implementations compare tokens in constant time.
type Authenticator interface {
	// Operator returns the operator's id and the projects it may see and
	// answer in, or ok false for an unknown token.
	Operator(token string) (id string, projects []string, ok bool)
}

// Guesses throttles failed authentications: TooMany refuses an address
// over its budget before a token is checked; Failed counts a wrong token
// and returns the refusal to give instead when over budget. Both return
// a domain.Error with code ERateLimited and RetryAfter.
type Guesses interface {
	TooMany(addr string) error
	Failed(addr, token string) error
}

// Config configures the inbox.
type Config struct {
	// Router is the core the inbox reads and answers through (a *lifecycle.Router).
	Router lifecycle.Inbox
	// Auth resolves operator tokens at sign-in (and on every request, see
	// session.go). May be nil when RequireLogin is false.
	Auth Authenticator
	// RequireLogin makes every page ask for an operator token. False only
	// for the embedded default bound to loopback with no operators: then
	// everyone reaching the page sees every project and answers as "local".
	RequireLogin bool
	Logger       *slog.Logger
	// Secure sets the Secure flag on cookies whatever the request
	// (web.secure_cookies); without it they are Secure when PublicURL is
	// https or the request came over TLS.
	Secure bool
	// PublicURL is the bridge's public address (public_url).
	PublicURL string
	// Guesses, if set, throttles failed sign-ins (shared with the API).
	Guesses Guesses
	// SessionKey, when set, keys session cookies and CSRF tokens so that any
	// replica configured with the same key accepts them. Empty: a random key
	// per process (sessions end when the process restarts and are valid on
	// this replica only).
	SessionKey []byte
	// ImageHosts are the hosts pictures in questions are loaded from
	// (web.image_hosts); the page's CSP allows only these, and a picture
	// from any other host is shown as a link with its alt text, so a
	// viewer's address does not leak to arbitrary hosts. "*.example.com"
	// allows its subdomains.
	ImageHosts []string
}

// Inbox serves the web inbox.
type Inbox struct {
	cfg    Config
	router lifecycle.Inbox
	log    *slog.Logger
	seal   *sealer
	tmpl   map[string]*template.Template
	// assets are the static files by plain and by content-hashed name.
	assets map[string]*asset
	// syncEvery bounds how long a live page may miss a change nobody
	// signalled (and how often new projects are picked up).
	syncEvery time.Duration
}

// New builds the inbox.
func New(cfg Config) (*Inbox, error) {
	if cfg.Router == nil {
		return nil, errors.New("web: Config.Router is required")
	}
	if cfg.RequireLogin && cfg.Auth == nil {
		return nil, errors.New("web: RequireLogin needs an Authenticator")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, h := range cfg.ImageHosts {
		if err := CheckImageHost(h); err != nil {
			return nil, err
		}
	}
	seal, err := newSealer(cfg.SessionKey)
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	i := &Inbox{cfg: cfg, router: cfg.Router,
		log: cfg.Logger.With("adapter", "web"), seal: seal,
		syncEvery: time.Second}
	if i.assets, err = loadAssets(static); err != nil {
		return nil, err
	}
	if i.tmpl, err = parseTemplates(i.funcs()); err != nil {
		return nil, err
	}
	return i, nil
}

// Register adds the inbox's routes to mux. It uses no /api/ path.
func (i *Inbox) Register(mux *http.ServeMux) {
	mux.Handle("GET /{$}", i.page(i.handleInbox))
	mux.Handle("GET /questions/{id}", i.page(i.handleQuestion))
	mux.Handle("POST /questions/{id}/answer", i.form(i.handleAnswer))
	mux.Handle("POST /questions/{id}/dismiss", i.form(i.handleDismiss))
	// A reloaded (or bookmarked) form result: back to the question's page
	// instead of a bare 405.
	toQuestion := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/questions/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
	}
	mux.HandleFunc("GET /questions/{id}/answer", toQuestion)
	mux.HandleFunc("GET /questions/{id}/dismiss", toQuestion)
	mux.Handle("GET /batches/{id}", i.page(i.handleBatch))
	mux.Handle("POST /batches/{id}/decide", i.form(i.handleBatchDecide))
	mux.HandleFunc("GET /batches/{id}/decide", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/batches/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
	})
	mux.Handle("GET /projects/{p}/runs/{run}", i.page(i.handleRun))
	mux.Handle("GET /history", i.page(i.handleHistory))
	mux.Handle("GET /login", i.page(i.handleLoginPage))
	mux.Handle("POST /login", i.form(i.handleLogin))
	mux.Handle("POST /logout", i.form(i.handleLogout))
	mux.Handle("GET /inbox/events", http.HandlerFunc(i.handleEvents))
	mux.HandleFunc("GET /static/", i.serveStatic)
}

// viewer is who is looking at a page.
type viewer struct {
	ID       string
	Operator bool     // signed in with a token (false: the local default)
	projects []string // nil with all = true
	all      bool
	sess     session
	CSRF     string
}

// Person is the identity answers are recorded under.
func (v *viewer) Person() domain.Person {
	if !v.Operator {
		return domain.Person{Platform: "web", ID: "local", Name: "local web user"}
	}
	return domain.Person{Platform: "web", ID: v.ID, Name: v.ID}
}

// Projects lists the projects the viewer may see.
func (i *Inbox) projects(ctx context.Context, v *viewer) ([]string, error) {
	if !v.all {
		return v.projects, nil
	}
	ps, err := i.router.Projects(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(ps)
	return ps, nil
}

func (v *viewer) may(project string) bool {
	return v.all || slices.Contains(v.projects, project)
}

// resolve turns a session into a viewer; nil when a login is needed.
func (i *Inbox) resolve(sess session) *viewer {
	v := &viewer{sess: sess, CSRF: i.seal.csrf(sess)}
	if sess.Token != "" && i.cfg.Auth != nil {
		if id, projects, ok := i.cfg.Auth.Operator(sess.Token); ok {
			v.ID, v.Operator, v.projects = id, true, projects
			if slices.Contains(projects, "*") { // every project, as the API reads it
				v.projects, v.all = nil, true
			}
			return v
		}
	}
	if i.cfg.RequireLogin {
		return nil
	}
	v.ID, v.all = "local", true
	return v
}

// request carries what a page handler needs.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	viewer *viewer // nil on /login when signed out
	sess   session
}

type handler func(rq *request) error

// page wraps GET handlers: a session cookie is ensured (anonymous when
// needed, so every form carries a CSRF token), and signed-out viewers are
// sent to /login when a login is required.
func (i *Inbox) page(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.securityHeaders(w)
		sess, ok := i.readSession(r)
		if !ok {
			// A SameSite=Strict cookie is not sent on a navigation that
			// starts on another site (a link in Slack or an email). Bounce
			// once through a same-site refresh so the cookie comes along,
			// instead of asking a signed-in operator to sign in again.
			if r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.URL.Query().Get("fragment") == "" {
				i.bounce(w, r)
				return
			}
			var err error
			if sess, err = newSession("", time.Now()); err != nil {
				i.fail(w, r, err)
				return
			}
			if err := i.setSession(w, r, sess); err != nil {
				i.fail(w, r, err)
				return
			}
		}
		rq := &request{w: w, r: r, sess: sess, viewer: i.resolve(sess)}
		if rq.viewer == nil && r.URL.Path != "/login" {
			if r.URL.Query().Get("fragment") != "" {
				http.Error(w, "sign in again", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if err := h(rq); err != nil {
			i.fail(w, r, err)
		}
	})
}

// form wraps POST handlers: the CSRF token must match the session cookie,
// else 403 before anything else happens.
func (i *Inbox) form(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.securityHeaders(w)
		r.Body = http.MaxBytesReader(w, r.Body, 256<<10)
		sess, ok := i.readSession(r)
		if !ok || r.ParseForm() != nil || !i.seal.checkCSRF(sess, r.PostForm.Get(csrfField)) {
			i.renderStatus(w, r, http.StatusForbidden, "refused", pageData{
				Title: "Form refused",
				Error: &pageError{Title: "This form was refused",
					Message: "It did not carry a valid security token (it may come from another site, or your session ended). Reload the page and try again."},
			})
			return
		}
		rq := &request{w: w, r: r, sess: sess, viewer: i.resolve(sess)}
		if rq.viewer == nil && r.URL.Path != "/login" && r.URL.Path != "/logout" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		if err := h(rq); err != nil {
			i.fail(w, r, err)
		}
	})
}

func (i *Inbox) bounce(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	u := template.HTMLEscapeString(r.URL.RequestURI())
	_, _ = w.Write([]byte(`<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + u +
		`"><title>askbridge</title><p><a href="` + u + `">Continue to askbridge</a></p>`))
}

func (i *Inbox) securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	img := "'self' data:"
	for _, host := range i.cfg.ImageHosts {
		img += " https://" + host
	}
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src "+img+"; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
}

// fail shows an unexpected error as a page: the store is unreachable or
// similar. The details go to the log, not to the page.
func (i *Inbox) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	i.log.Error("web inbox request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	i.renderStatus(w, r, http.StatusServiceUnavailable, "refused", pageData{
		Title: "Temporarily unavailable",
		Error: &pageError{Title: "Something went wrong on the bridge",
			Message: "The inbox could not load its data. Try again in a moment; if it keeps failing, the bridge's log says why."},
	})
}
