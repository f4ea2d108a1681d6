// Package fakepd is a fake PagerDuty for tests: the Events API v2
// (POST /v2/enqueue), the REST API's GET /oncalls and GET /users/{id}, and
// webhooks v3 sent to a subscription. It behaves like PagerDuty where the
// bridge can notice (routing keys, 400 on an invalid event, 429 past the
// integration's rate, alerts deduplicated by dedup_key, token auth,
// offset pagination, signed webhooks), and checks every request it gets and
// every answer it gives against PagerDuty's own OpenAPI documents
// (testdata, from PagerDuty/api-schema): Problems lists each mismatch.
package fakepd

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

var (
	//go:embed testdata/events-v2.openapi.json
	eventsSpec []byte
	//go:embed testdata/rest-oncalls.openapi.json
	restSpec []byte
)

// RatePerMinute is how many events one integration key takes in a minute
// before PagerDuty answers 429.
const RatePerMinute = 120

// Event is an event PagerDuty accepted, as sent.
type Event struct {
	RoutingKey  string          `json:"routing_key"`
	EventAction string          `json:"event_action"`
	DedupKey    string          `json:"dedup_key"`
	Payload     json.RawMessage `json:"payload"`
	Links       []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"links"`
	Raw []byte `json:"-"`
}

// Summary is the event's payload.summary.
func (e Event) Summary() string {
	var p struct {
		Summary string `json:"summary"`
	}
	_ = json.Unmarshal(e.Payload, &p)
	return p.Summary
}

// Alert is PagerDuty's alert for one routing key and dedup_key.
type Alert struct {
	RoutingKey, DedupKey string
	Status               string // triggered, acknowledged, resolved
	Summary              string
	Triggers             int // trigger events merged into it
}

// User is a PagerDuty user.
type User struct{ ID, Name, Email string }

// OnCall is one on-call entry the fake serves.
type OnCall struct {
	User                     User
	ScheduleID, ScheduleName string // empty: the level targets the user directly
	PolicyID, PolicyName     string
	Level                    int
	Start, End               time.Time
}

// Server is a fake PagerDuty.
type Server struct {
	*httptest.Server
	events, rest validator.Validator

	mu        sync.Mutex
	keys      map[string]bool
	token     string
	accepted  []Event
	alerts    map[string]*Alert
	oncalls   []OnCall
	users     map[string]User
	fail      []int // statuses to answer next, in order
	sent      map[string][]time.Time
	problems  []string
	oncallReq int
	log       []string
	now       func() time.Time
}

// New starts a fake PagerDuty on loopback whose Events API accepts
// routingKeys and whose REST API takes token.
func New(token string, routingKeys ...string) *Server {
	s := &Server{keys: map[string]bool{}, token: token, alerts: map[string]*Alert{}, users: map[string]User{},
		sent: map[string][]time.Time{}, now: time.Now}
	for _, k := range routingKeys {
		s.keys[k] = true
	}
	s.events = mustValidator(eventsSpec)
	s.rest = mustValidator(restSpec)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/enqueue", s.enqueue)
	mux.HandleFunc("GET /oncalls", s.listOnCalls)
	mux.HandleFunc("GET /users/{id}", s.getUser)
	s.Server = httptest.NewServer(s.check(mux))
	return s
}

func mustValidator(spec []byte) validator.Validator {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		panic(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		panic(errs[0])
	}
	return v
}

// check validates each request and the fake's answer against the spec of
// the API it belongs to.
func (s *Server) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		v := s.rest
		if strings.HasPrefix(r.URL.Path, "/v2/") {
			v = s.events
		}
		s.mu.Lock()
		injected := len(s.fail) > 0
		s.mu.Unlock()
		vr := r.Clone(r.Context())
		vr.Body = io.NopCloser(bytes.NewReader(body))
		_, reqErrs := v.ValidateHttpRequestSync(vr)
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		// A request the fake refused as PagerDuty does (400, 401) is the
		// client's error to handle, which its test checks; one it accepted
		// must match the document.
		if rec.Code < 300 {
			for _, e := range reqErrs {
				s.problem("request %s %s: %s", r.Method, r.URL.Path, describe(e))
			}
		}
		resp := rec.Result()
		rb := rec.Body.Bytes()
		resp.Body = io.NopCloser(bytes.NewReader(rb))
		vr2 := r.Clone(r.Context())
		vr2.Body = io.NopCloser(bytes.NewReader(body))
		if ok, errs := v.ValidateHttpResponse(vr2, resp); !ok && !injected {
			for _, e := range errs {
				s.problem("response %d to %s %s: %s", rec.Code, r.Method, r.URL.Path, describe(e))
			}
		}
		line := r.Method + " " + r.URL.RequestURI() + " → " + strconv.Itoa(rec.Code)
		if len(body) > 0 {
			line += "\n    " + s.redact(string(body))
		}
		s.mu.Lock()
		s.log = append(s.log, line)
		s.mu.Unlock()
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		w.Write(rb)
	})
}

// redact hides the routing keys in a request body written to the log.
func (s *Server) redact(body string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.keys {
		body = strings.ReplaceAll(body, k, "<routing key>")
	}
	return body
}

// Requests lists every request the fake received, in order: method, path
// and query, the status answered, and the body (routing keys hidden).
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// describe is a validation error with the schema's reasons.
func describe(e *verrors.ValidationError) string {
	out := e.Message + ": " + e.Reason
	for _, se := range e.SchemaValidationErrors {
		out += fmt.Sprintf(" [%s: %s]", se.FieldPath, se.Reason)
	}
	return out
}

func (s *Server) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// Problems lists every request or answer that did not match PagerDuty's
// OpenAPI documents.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.problems)
}

// Fail makes the next requests (any API) answer these statuses in turn:
// an outage (500, 503) or a rate limit (429).
func (s *Server) Fail(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = append(s.fail, statuses...)
}

// Failing is how many injected failures are still to be served.
func (s *Server) Failing() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fail)
}

func (s *Server) nextFailure() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fail) == 0 {
		return 0
	}
	st := s.fail[0]
	s.fail = s.fail[1:]
	return st
}

// Events returns the events PagerDuty accepted, in order.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.accepted)
}

// Alert returns the alert of a routing key and dedup_key.
func (s *Server) Alert(routingKey, dedupKey string) (Alert, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.alerts[routingKey+"\x00"+dedupKey]
	if !ok {
		return Alert{}, false
	}
	return *a, true
}

// SetOnCalls replaces who is on call.
func (s *Server) SetOnCalls(oc ...OnCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oncalls = slices.Clone(oc)
	for _, o := range oc {
		s.users[o.User.ID] = o.User
	}
}

// OnCallRequests counts the GET /oncalls requests served.
func (s *Server) OnCallRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oncallReq
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func eventError(w http.ResponseWriter, status int, msg string, errs ...string) {
	if errs == nil {
		errs = []string{}
	}
	writeJSON(w, status, map[string]any{"status": "invalid event", "message": msg, "errors": errs})
}

// enqueue is POST /v2/enqueue.
func (s *Server) enqueue(w http.ResponseWriter, r *http.Request) {
	if st := s.nextFailure(); st != 0 {
		if st == http.StatusTooManyRequests {
			writeJSON(w, st, map[string]any{"status": "throttle event", "message": "Requests for this service are arriving too quickly.  Please retry later."})
			return
		}
		writeJSON(w, st, map[string]any{"status": "error", "message": "Internal Server Error", "errors": []string{}})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 512*1024+1))
	if err != nil || len(body) > 512*1024 {
		eventError(w, http.StatusBadRequest, "Event object is invalid", "Event is too large")
		return
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		eventError(w, http.StatusBadRequest, "Event object is invalid", "JSON parse error")
		return
	}
	ev.Raw = body
	var problems []string
	s.mu.Lock()
	known := s.keys[ev.RoutingKey]
	s.mu.Unlock()
	if !known {
		problems = append(problems, "Invalid routing key")
	}
	if !slices.Contains([]string{"trigger", "acknowledge", "resolve"}, ev.EventAction) {
		problems = append(problems, "'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')")
	}
	if ev.EventAction != "trigger" && ev.DedupKey == "" {
		problems = append(problems, "'dedup_key' is missing or blank")
	}
	if len(ev.DedupKey) > 255 {
		problems = append(problems, "'dedup_key' is too long (maximum is 255 characters)")
	}
	if ev.EventAction == "trigger" {
		var p struct {
			Summary  *string `json:"summary"`
			Source   *string `json:"source"`
			Severity *string `json:"severity"`
		}
		_ = json.Unmarshal(ev.Payload, &p)
		switch {
		case p.Summary == nil || *p.Summary == "":
			problems = append(problems, "'payload.summary' is missing or blank")
		case len([]rune(*p.Summary)) > 1024:
			problems = append(problems, "'payload.summary' is too long (maximum is 1024 characters)")
		}
		if p.Source == nil || *p.Source == "" {
			problems = append(problems, "'payload.source' is missing or blank")
		}
		if p.Severity == nil || !slices.Contains([]string{"critical", "error", "warning", "info"}, *p.Severity) {
			problems = append(problems, "'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')")
		}
	}
	if len(problems) > 0 {
		eventError(w, http.StatusBadRequest, "Event object is invalid", problems...)
		return
	}
	s.mu.Lock()
	now := s.now()
	recent := slices.DeleteFunc(s.sent[ev.RoutingKey], func(t time.Time) bool { return now.Sub(t) >= time.Minute })
	if len(recent) >= RatePerMinute {
		s.sent[ev.RoutingKey] = recent
		s.mu.Unlock()
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"status": "throttle event", "message": "Requests for this service are arriving too quickly.  Please retry later."})
		return
	}
	s.sent[ev.RoutingKey] = append(recent, now)
	if ev.DedupKey == "" {
		ev.DedupKey = fmt.Sprintf("%x", sha256.Sum256(body))[:32]
	}
	s.accepted = append(s.accepted, ev)
	key := ev.RoutingKey + "\x00" + ev.DedupKey
	a := s.alerts[key]
	switch ev.EventAction {
	case "trigger":
		if a == nil || a.Status == "resolved" { // after a resolve the same key opens a new alert
			a = &Alert{RoutingKey: ev.RoutingKey, DedupKey: ev.DedupKey, Status: "triggered", Summary: ev.Summary()}
			s.alerts[key] = a
		}
		a.Triggers++
	case "acknowledge":
		if a != nil && a.Status == "triggered" {
			a.Status = "acknowledged"
		}
	case "resolve":
		if a != nil {
			a.Status = "resolved"
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusAccepted, map[string]any{"status": "success", "message": "Event processed", "dedup_key": ev.DedupKey})
}

func restError(w http.ResponseWriter, status, code int, msg string, errs ...string) {
	if errs == nil {
		errs = []string{}
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "code": code, "errors": errs}})
}

// authorized checks the REST API's Token auth and Accept header.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Token token="+s.token || s.token == "" {
		restError(w, http.StatusUnauthorized, 2006, "Unauthorized")
		return false
	}
	return true
}

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "type": "user", "summary": u.Name, "name": u.Name, "email": u.Email,
		"self": "https://api.pagerduty.com/users/" + u.ID, "html_url": "https://example.pagerduty.com/users/" + u.ID}
}

// listOnCalls is GET /oncalls with schedule_ids[], escalation_policy_ids[],
// include[]=users and offset pagination.
func (s *Server) listOnCalls(w http.ResponseWriter, r *http.Request) {
	if st := s.nextFailure(); st != 0 {
		restError(w, st, 2001, http.StatusText(st))
		return
	}
	if !s.authorized(w, r) {
		return
	}
	q := r.URL.Query()
	limit, offset := 25, 0
	if v, err := strconv.Atoi(q.Get("limit")); err == nil && v > 0 {
		limit = min(v, 100)
	}
	if v, err := strconv.Atoi(q.Get("offset")); err == nil && v >= 0 {
		offset = v
	}
	schedules, policies := q["schedule_ids[]"], q["escalation_policy_ids[]"]
	users := slices.Contains(q["include[]"], "users")
	s.mu.Lock()
	s.oncallReq++
	now := s.now()
	var all []map[string]any
	for _, o := range s.oncalls {
		if len(schedules) > 0 && !slices.Contains(schedules, o.ScheduleID) {
			continue
		}
		if len(policies) > 0 && !slices.Contains(policies, o.PolicyID) {
			continue
		}
		if !o.Start.IsZero() && now.Before(o.Start) || !o.End.IsZero() && !now.Before(o.End) {
			continue
		}
		u := map[string]any{"id": o.User.ID, "type": "user_reference", "summary": o.User.Name,
			"self": "https://api.pagerduty.com/users/" + o.User.ID, "html_url": "https://example.pagerduty.com/users/" + o.User.ID}
		if users {
			// PagerDuty's document keeps the reference's type for an
			// expanded user; the user's fields come with it.
			u = userJSON(o.User)
			u["type"] = "user_reference"
		}
		e := map[string]any{"user": u, "escalation_level": o.Level,
			"escalation_policy": map[string]any{"id": o.PolicyID, "type": "escalation_policy_reference", "summary": o.PolicyName,
				"self": "https://api.pagerduty.com/escalation_policies/" + o.PolicyID, "html_url": "https://example.pagerduty.com/escalation_policies/" + o.PolicyID},
		}
		if o.ScheduleID != "" {
			e["schedule"] = map[string]any{"id": o.ScheduleID, "type": "schedule_reference", "summary": o.ScheduleName,
				"self": "https://api.pagerduty.com/schedules/" + o.ScheduleID, "html_url": "https://example.pagerduty.com/schedules/" + o.ScheduleID}
		}
		if !o.Start.IsZero() {
			e["start"] = o.Start.UTC().Format(time.RFC3339)
		}
		if !o.End.IsZero() {
			e["end"] = o.End.UTC().Format(time.RFC3339)
		}
		all = append(all, e)
	}
	s.mu.Unlock()
	page := []map[string]any{}
	if offset < len(all) {
		page = all[offset:min(offset+limit, len(all))]
	}
	writeJSON(w, http.StatusOK, map[string]any{"oncalls": page, "limit": limit, "offset": offset,
		"more": offset+limit < len(all), "total": nil})
}

// getUser is GET /users/{id}.
func (s *Server) getUser(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	u, ok := s.users[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		restError(w, http.StatusNotFound, 2100, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"user": userJSON(u)})
}

// Webhook sends a signed webhooks v3 event about the incident of an alert
// to url, as a subscription with secrets does (several secrets: one
// signature each, as during a rotation). eventType is e.g.
// "incident.acknowledged"; by is the person who did it.
func Webhook(url string, secrets []string, eventType, incidentKey, by string) (*http.Response, error) {
	return PostSigned(url, secrets, WebhookBody(eventType, incidentKey, by, time.Now()))
}

// WebhookBody is the body of a webhooks v3 event about the incident of an
// alert that by did at at (PagerDuty sends the same body again when it
// retries).
func WebhookBody(eventType, incidentKey, by string, at time.Time) []byte {
	body, _ := json.Marshal(map[string]any{"event": map[string]any{
		"id": fmt.Sprintf("01%X", at.UnixNano()), "event_type": eventType, "resource_type": "incident",
		"occurred_at": at.UTC().Format(time.RFC3339),
		"agent":       map[string]any{"id": "PUSER01", "type": "user_reference", "summary": by},
		"client":      nil,
		"data": map[string]any{"id": "PINC001", "type": "incident", "status": strings.TrimPrefix(eventType, "incident."),
			"incident_key": incidentKey, "title": "askbridge question", "number": 1},
	}})
	return body
}

// PostSigned posts body to url with an X-PagerDuty-Signature for each of
// secrets.
func PostSigned(url string, secrets []string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var sigs []string
	for _, sec := range secrets {
		m := hmac.New(sha256.New, []byte(sec))
		m.Write(body)
		sigs = append(sigs, "v1="+hex.EncodeToString(m.Sum(nil)))
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "PagerDuty-Webhook/V3.0")
	if len(sigs) > 0 {
		req.Header.Set("X-PagerDuty-Signature", strings.Join(sigs, ","))
	}
	return http.DefaultClient.Do(req)
}
