package web

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Session cookies.
//
// The cookie is sealed (AES-256-GCM), not looked up: it carries the
// operator's token, a random session nonce and an expiry. Sealing instead of
// an in-process session map means any replica holding the same key accepts
// the cookie, and nothing has to be stored. Carrying the token (rather than
// the operator id) means every request is re-authenticated through
// Authenticator.Operator: an operator removed from the configuration, or
// whose token was rotated, loses every session at once, and project changes
// apply immediately. The token cannot be read out of a stolen cookie without
// the key. CSRF tokens are an HMAC of the session nonce, so a form is only
// valid with the cookie it was rendered for.
const (
	sessionCookie = "askbridge_session"
	sessionTTL    = 12 * time.Hour
	csrfField     = "csrf"
)

// session is the sealed content of the session cookie.
type session struct {
	Token   string `json:"t,omitempty"` // operator token; empty = not signed in
	Nonce   string `json:"n"`
	Expires int64  `json:"e"` // unix seconds
}

// sealer seals session cookies and derives CSRF tokens.
type sealer struct {
	aead    cipher.AEAD
	csrfKey []byte
}

func newSealer(secret []byte) (*sealer, error) {
	if len(secret) == 0 {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
	}
	block, err := aes.NewCipher(derive(secret, "askbridge web session v1"))
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead, csrfKey: derive(secret, "askbridge web csrf v1")}, nil
}

func derive(secret []byte, label string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	return m.Sum(nil)
}

func (s *sealer) seal(sess session) (string, error) {
	plain, err := json.Marshal(sess)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := s.aead.Seal(nonce, nonce, plain, []byte(sessionCookie))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

var errBadSession = errors.New("invalid or expired session")

func (s *sealer) open(v string, now time.Time) (session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return session{}, errBadSession
	}
	ns := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:ns], raw[ns:], []byte(sessionCookie))
	if err != nil {
		return session{}, errBadSession
	}
	var sess session
	if err := json.Unmarshal(plain, &sess); err != nil || sess.Nonce == "" {
		return session{}, errBadSession
	}
	if now.Unix() >= sess.Expires {
		return session{}, errBadSession
	}
	return sess, nil
}

// csrf is the form token of a session.
func (s *sealer) csrf(sess session) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte(sess.Nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF compares a submitted token with the session's in constant time.
func (s *sealer) checkCSRF(sess session, got string) bool {
	want := s.csrf(sess)
	return subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

func newSession(token string, now time.Time) (session, error) {
	n := make([]byte, 18)
	if _, err := rand.Read(n); err != nil {
		return session{}, err
	}
	return session{Token: token, Nonce: base64.RawURLEncoding.EncodeToString(n), Expires: now.Add(sessionTTL).Unix()}, nil
}

func (i *Inbox) setSession(w http.ResponseWriter, r *http.Request, sess session) error {
	v, err := i.seal.seal(sess)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: v, Path: "/",
		MaxAge:   int(time.Until(time.Unix(sess.Expires, 0)).Seconds()),
		HttpOnly: true, Secure: i.secure(r), SameSite: http.SameSiteStrictMode,
	})
	return nil
}

// secure reports whether cookies carry the Secure flag: when the bridge is
// served over HTTPS (its public_url is https, or the request came over
// TLS), or web.secure_cookies says so.
func (i *Inbox) secure(r *http.Request) bool {
	return i.cfg.Secure || r.TLS != nil || strings.HasPrefix(strings.ToLower(i.cfg.PublicURL), "https://")
}

// endedKey marks a signed-out session in the store (Once), so a copied
// cookie stops working on every replica; it is kept until the session
// would have expired anyway.
func endedKey(nonce string) string { return "web-session-ended:" + nonce }

// endSession records that sess was signed out.
func (i *Inbox) endSession(ctx context.Context, sess session) error {
	left := time.Until(time.Unix(sess.Expires, 0))
	if sess.Token == "" || left <= 0 {
		return nil
	}
	_, err := i.router.Once(ctx, endedKey(sess.Nonce), left+time.Minute)
	return err
}

// readSession returns the request's session, if its cookie is valid and,
// for a signed-in session, it was not signed out. When the store cannot say,
// the session counts as signed out (fail closed).
func (i *Inbox) readSession(r *http.Request) (session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	sess, err := i.seal.open(c.Value, time.Now())
	if err != nil {
		return session{}, false
	}
	if sess.Token != "" {
		ended, err := i.router.Marked(r.Context(), endedKey(sess.Nonce))
		if err != nil || ended {
			return session{}, false
		}
	}
	return sess, true
}

// The outcome flash ("Answered …") is shown once: the redirect after a form
// sets a short-lived cookie naming the question, and the page that shows
// the flash clears it, so reloading the page (whose URL keeps ?done=)
// does not show it again.
const flashCookie = "askbridge_flash"

func (i *Inbox) setFlash(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(id), Path: "/", MaxAge: 60,
		HttpOnly: true, Secure: i.secure(r), SameSite: http.SameSiteStrictMode})
}

// takeFlash reports whether the flash for id is due, and clears it.
func (i *Inbox) takeFlash(rq *request, id string) bool {
	c, err := rq.r.Cookie(flashCookie)
	if err != nil {
		return false
	}
	v, _ := url.QueryUnescape(c.Value)
	http.SetCookie(rq.w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: i.secure(rq.r), SameSite: http.SameSiteStrictMode})
	return v == id
}

// SignedIn reports the operator signed in to the inbox in r's browser, if
// its session is valid (not expired, not signed out, the operator still
// configured) and the operator may see project. Only a session signed in
// with an operator token counts: the open inbox of a loopback bridge
// without operators ("local") is nobody signed in. Other surfaces use it
// to require a signed-in browser (the email surface's require_login).
func (i *Inbox) SignedIn(r *http.Request, project string) (operator string, ok bool) {
	sess, ok := i.readSession(r)
	if !ok || sess.Token == "" || i.cfg.Auth == nil {
		return "", false
	}
	id, projects, ok := i.cfg.Auth.Operator(sess.Token)
	// "*" is every project (operators[].projects, as the API reads it).
	if !ok || !(slices.Contains(projects, project) || slices.Contains(projects, "*")) {
		return "", false
	}
	return id, true
}
