// Package faketeams is an httptest Microsoft Teams for tests: the Bot
// Connector REST API (v3) of a conversation's serviceUrl, the Microsoft
// identity platform's token endpoint (client credentials), and the Bot
// Framework's OpenID metadata and signing keys. It answers like the real
// services — their status codes, the Connector's error body
// {"error": {"code", "message"}}, 429 with Retry-After and 5xx on demand —
// and plays the Teams client: it signs activities (RS256 JWTs) and sends
// them to the bot's messaging endpoint.
package faketeams

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issuer is the issuer of the Bot Framework's tokens to bots.
const Issuer = "https://api.botframework.com"

// Server is the fake Teams.
type Server struct {
	AppID, AppSecret, Tenant string
	// RetryAfter is the wait, in seconds, of 429 answers (default 1).
	RetryAfter int

	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	keys      []*signer // the key set published; keys[0] signs
	next      int
	tokens    map[string]time.Time // app tokens issued → expiry
	convs     map[string]*Conversation
	acts      map[string]*Activity
	order     []string
	faults    map[string][]int // op → statuses to answer next
	calls     map[string]int
	exchanges []Exchange
}

type signer struct {
	kid  string
	priv *rsa.PrivateKey
}

// Conversation is a channel or chat the bot was added to.
type Conversation struct {
	ID, Name string
	Channel  bool // a team channel: posts start threads
}

// Activity is a message the bot posted, as the fake keeps it.
type Activity struct {
	ID           string
	Conversation string // the base conversation id
	Thread       string // root activity id, for a message in a channel thread
	ReplyTo      string
	Text         string
	Versions     []json.RawMessage // the card of each version, first to last
	Deleted      bool
}

// Card is the activity's card as it shows now (nil for a text message).
func (a *Activity) Card() json.RawMessage {
	if len(a.Versions) == 0 {
		return nil
	}
	return a.Versions[len(a.Versions)-1]
}

// Exchange is one request the Connector or the bot handled, with the
// answer, for checks against the published API description.
type Exchange struct {
	Method, Route string // Route as the description names it: /v3/conversations/{conversationId}/activities
	Status        int
	Request       json.RawMessage
	Response      json.RawMessage
}

// Ops a fault can be injected into.
const (
	OpCreate = "create" // POST /v3/conversations
	OpSend   = "send"   // POST …/activities and replies
	OpUpdate = "update" // PUT …/activities/{id}
	OpToken  = "token"  // the token endpoint
	OpOpenID = "openid" // the OpenID metadata
)

// New starts a fake Teams with one key, app credentials and a tenant.
func New(t testing.TB) *Server {
	s := &Server{AppID: "00000000-0000-4000-8000-00000000b07a", AppSecret: "fake-teams-secret-" + randHex(12),
		Tenant: "11111111-2222-4333-8444-555555555555", RetryAfter: 1, t: t,
		tokens: map[string]time.Time{}, convs: map[string]*Conversation{}, acts: map[string]*Activity{},
		faults: map[string][]int{}, calls: map[string]int{}}
	s.Rotate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openid/.well-known/openidconfiguration", s.metadata)
	mux.HandleFunc("GET /openid/keys", s.jwks)
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", s.token)
	mux.HandleFunc("POST /v3/conversations", s.create)
	mux.HandleFunc("POST /v3/conversations/{conversationId}/activities", s.send)
	mux.HandleFunc("POST /v3/conversations/{conversationId}/activities/{activityId}", s.send)
	mux.HandleFunc("PUT /v3/conversations/{conversationId}/activities/{activityId}", s.update)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// ServiceURL is the Connector's address, as serviceUrl carries it.
func (s *Server) ServiceURL() string { return s.srv.URL + "/" }

// Host is the fake's host:port (for the serviceUrl allow list).
func (s *Server) Host() string { return strings.TrimPrefix(s.srv.URL, "http://") }

// MetadataURL is the OpenID metadata's address.
func (s *Server) MetadataURL() string { return s.srv.URL + "/openid/.well-known/openidconfiguration" }

// TokenURL is the tenant's token endpoint.
func (s *Server) TokenURL() string { return s.srv.URL + "/" + s.Tenant + "/oauth2/v2.0/token" }

// Rotate publishes a new signing key, used from now on; the old ones stay
// published.
func (s *Server) Rotate() {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append([]*signer{{kid: "key-" + randHex(6), priv: k}}, s.keys...)
}

// AddChannel makes a team channel the bot may post in.
func (s *Server) AddChannel(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.convs[id] = &Conversation{ID: id, Name: name, Channel: true}
}

// AddChat makes a chat the bot may post in.
func (s *Server) AddChat(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.convs[id] = &Conversation{ID: id}
}

// Fail makes the next call of op answer status (429 with Retry-After).
func (s *Server) Fail(op string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], status)
}

// Calls is how many calls of op reached the fake.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// Activity returns a posted activity (a copy), nil if unknown.
func (s *Server) Activity(id string) *Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.acts[id]
	if a == nil {
		return nil
	}
	c := *a
	c.Versions = append([]json.RawMessage(nil), a.Versions...)
	return &c
}

// Activities returns the activities in a conversation (its threads too)
// that were not deleted, in posting order.
func (s *Server) Activities(conversation string) []*Activity {
	s.mu.Lock()
	ids := append([]string(nil), s.order...)
	s.mu.Unlock()
	var out []*Activity
	for _, id := range ids {
		if a := s.Activity(id); a != nil && !a.Deleted && a.Conversation == conversation {
			out = append(out, a)
		}
	}
	return out
}

// Delete deletes a posted activity, as a person with rights would.
func (s *Server) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.acts[id]; a != nil {
		a.Deleted = true
	}
}

// Exchanges is every request the Connector answered so far.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// --- the OpenID issuer ---

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	if st, ok := s.fault(OpOpenID); ok {
		http.Error(w, "fake outage", st)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": Issuer, "authorization_endpoint": "https://invalid.botframework.com",
		"jwks_uri":                              s.srv.URL + "/openid/keys",
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"token_endpoint_auth_methods_supported": []string{"private_key_jwt"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls["jwks"]++
	var keys []map[string]any
	for _, k := range s.keys {
		pub := k.priv.PublicKey
		keys = append(keys, map[string]any{"kty": "RSA", "use": "sig", "kid": k.kid,
			"n":            base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
			"e":            base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
			"endorsements": []string{"msteams"}})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
}

// --- the identity platform's token endpoint ---

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls[OpToken]++
	s.mu.Unlock()
	if st, ok := s.fault(OpToken); ok {
		writeJSON(w, st, map[string]any{"error": "temporarily_unavailable", "error_description": "AADSTS50000: fake outage"})
		return
	}
	_ = r.ParseForm()
	if r.PathValue("tenant") != s.Tenant && r.PathValue("tenant") != "botframework.com" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request", "error_description": "AADSTS90002: Tenant not found."})
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "https://api.botframework.com/.default" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request", "error_description": "AADSTS900144: grant_type and scope are required."})
		return
	}
	if r.PostForm.Get("client_id") != s.AppID || r.PostForm.Get("client_secret") != s.AppSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
		return
	}
	tok := "fake-app-token-" + randHex(16)
	s.mu.Lock()
	s.tokens[tok] = time.Now().Add(time.Hour)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
}

// ExpireTokens makes every app token issued so far expired.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.tokens {
		s.tokens[k] = time.Time{}
	}
}

// --- the Bot Connector ---

// connectorError writes the Connector's error body.
func (s *Server) connectorError(w http.ResponseWriter, status int, code, message string) json.RawMessage {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(max(s.RetryAfter, 0)))
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return b
}

// begin checks the app token and any injected fault; ok false when the
// answer was written.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, op, route string) (body json.RawMessage, ok bool) {
	body, _ = io.ReadAll(io.LimitReader(r.Body, 8<<20))
	s.mu.Lock()
	s.calls[op]++
	exp, known := s.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	s.mu.Unlock()
	record := func(st int, resp json.RawMessage) {
		s.mu.Lock()
		s.exchanges = append(s.exchanges, Exchange{Method: r.Method, Route: route, Status: st, Request: body, Response: resp})
		s.mu.Unlock()
	}
	if !known || time.Now().After(exp) {
		record(http.StatusUnauthorized, s.connectorError(w, http.StatusUnauthorized, "Unauthorized", "Authorization has been denied for this request."))
		return nil, false
	}
	if st, fail := s.fault(op); fail {
		code := "ServiceError"
		if st == http.StatusTooManyRequests {
			code = "TooManyRequests"
		}
		record(st, s.connectorError(w, st, code, "Fake failure "+strconv.Itoa(st)))
		return nil, false
	}
	if !json.Valid(body) {
		record(http.StatusBadRequest, s.connectorError(w, http.StatusBadRequest, "BadSyntax", "The request body is not JSON."))
		return nil, false
	}
	return body, true
}

func (s *Server) fault(op string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.faults[op]; len(q) > 0 {
		s.faults[op] = q[1:]
		return q[0], true
	}
	return 0, false
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, route string, req json.RawMessage, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	s.mu.Lock()
	s.exchanges = append(s.exchanges, Exchange{Method: r.Method, Route: route, Status: status, Request: req, Response: b})
	s.mu.Unlock()
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, route string, req json.RawMessage, status int, code, msg string) {
	b := s.connectorError(w, status, code, msg)
	s.mu.Lock()
	s.exchanges = append(s.exchanges, Exchange{Method: r.Method, Route: route, Status: status, Request: req, Response: b})
	s.mu.Unlock()
}

type inActivity struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	ReplyToID   string `json:"replyToId"`
	Attachments []struct {
		ContentType string          `json:"contentType"`
		Content     json.RawMessage `json:"content"`
	} `json:"attachments"`
}

// card checks an activity and returns its card (nil for text).
func card(a inActivity) (json.RawMessage, string) {
	if a.Type != "message" {
		return nil, "activity type must be message"
	}
	if len(a.Attachments) == 0 {
		if a.Text == "" {
			return nil, "a message needs text or attachments"
		}
		return nil, ""
	}
	if len(a.Attachments) != 1 || a.Attachments[0].ContentType != "application/vnd.microsoft.card.adaptive" {
		return nil, "want one Adaptive Card attachment"
	}
	if len(a.Attachments[0].Content) > maxMessage {
		return nil, "Message size too large"
	}
	return a.Attachments[0].Content, ""
}

// maxMessage is Teams' limit on a message (about 28 KB, cards included).
const maxMessage = 28 * 1024

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	const route = "/v3/conversations"
	body, ok := s.begin(w, r, OpCreate, route)
	if !ok {
		return
	}
	var p struct {
		IsGroup     bool       `json:"isGroup"`
		TenantID    string     `json:"tenantId"`
		Activity    inActivity `json:"activity"`
		ChannelData struct {
			Channel struct{ ID string } `json:"channel"`
			Tenant  struct{ ID string } `json:"tenant"`
		} `json:"channelData"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		s.fail(w, r, route, body, http.StatusBadRequest, "BadArgument", "Malformed ConversationParameters.")
		return
	}
	s.mu.Lock()
	conv := s.convs[p.ChannelData.Channel.ID]
	s.mu.Unlock()
	if conv == nil || !conv.Channel {
		s.fail(w, r, route, body, http.StatusNotFound, "ConversationNotFound", "Conversation not found.")
		return
	}
	if p.ChannelData.Tenant.ID != s.Tenant {
		s.fail(w, r, route, body, http.StatusForbidden, "BotNotInConversationRoster", "The bot is not part of the conversation roster.")
		return
	}
	c, problem := card(p.Activity)
	if problem != "" {
		s.fail(w, r, route, body, http.StatusBadRequest, "BadArgument", problem)
		return
	}
	id := s.store(conv.ID, "", "", p.Activity.Text, c)
	s.answer(w, r, route, body, http.StatusCreated, map[string]string{"id": conv.ID + ";messageid=" + id, "activityId": id})
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	route := "/v3/conversations/{conversationId}/activities"
	if r.PathValue("activityId") != "" {
		route += "/{activityId}"
	}
	body, ok := s.begin(w, r, OpSend, route)
	if !ok {
		return
	}
	var a inActivity
	if err := json.Unmarshal(body, &a); err != nil {
		s.fail(w, r, route, body, http.StatusBadRequest, "BadArgument", "Malformed Activity.")
		return
	}
	base, thread, _ := strings.Cut(r.PathValue("conversationId"), ";messageid=")
	s.mu.Lock()
	conv := s.convs[base]
	root := s.acts[thread]
	s.mu.Unlock()
	if conv == nil {
		s.fail(w, r, route, body, http.StatusNotFound, "ConversationNotFound", "Conversation not found.")
		return
	}
	if thread != "" && (root == nil || root.Conversation != base) {
		s.fail(w, r, route, body, http.StatusNotFound, "ActivityNotFoundInConversation", "The thread's root message was not found.")
		return
	}
	c, problem := card(a)
	if problem != "" {
		s.fail(w, r, route, body, http.StatusBadRequest, "BadArgument", problem)
		return
	}
	replyTo := r.PathValue("activityId")
	if replyTo == "" {
		replyTo = a.ReplyToID
	}
	if thread == "" && conv.Channel && replyTo != "" {
		thread = replyTo // a reply to a channel post is in its thread
	}
	id := s.store(base, thread, replyTo, a.Text, c)
	s.answer(w, r, route, body, http.StatusCreated, map[string]string{"id": id})
}

func (s *Server) store(conv, thread, replyTo, text string, c json.RawMessage) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	id := strconv.FormatInt(1700000000000+int64(s.next), 10)
	a := &Activity{ID: id, Conversation: conv, Thread: thread, ReplyTo: replyTo, Text: text}
	if c != nil {
		a.Versions = []json.RawMessage{c}
	}
	s.acts[id] = a
	s.order = append(s.order, id)
	return id
}

func (s *Server) update(w http.ResponseWriter, r *http.Request) {
	const route = "/v3/conversations/{conversationId}/activities/{activityId}"
	body, ok := s.begin(w, r, OpUpdate, route)
	if !ok {
		return
	}
	var a inActivity
	if err := json.Unmarshal(body, &a); err != nil {
		s.fail(w, r, route, body, http.StatusBadRequest, "BadArgument", "Malformed Activity.")
		return
	}
	base, _, _ := strings.Cut(r.PathValue("conversationId"), ";messageid=")
	id := r.PathValue("activityId")
	s.mu.Lock()
	act := s.acts[id]
	s.mu.Unlock()
	if act == nil || act.Deleted || act.Conversation != base {
		s.fail(w, r, route, body, http.StatusNotFound, "ActivityNotFoundInConversation", "The activity was not found in the conversation.")
		return
	}
	c, problem := card(a)
	if problem != "" {
		s.fail(w, r, route, body, http.StatusBadRequest, "BadArgument", problem)
		return
	}
	s.mu.Lock()
	if c != nil {
		act.Versions = append(act.Versions, c)
	} else {
		act.Text = a.Text
	}
	s.mu.Unlock()
	s.answer(w, r, route, body, http.StatusOK, map[string]string{"id": id})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
