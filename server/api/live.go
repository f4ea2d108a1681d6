package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/httperr"
	"github.com/gorilla/websocket"
)

// liveMsg is one message of the WebSocket form of the live protocol
// (docs/openapi.yaml, LiveMessage).
type liveMsg struct {
	Type       string           `json:"type"`
	ID         string           `json:"id,omitempty"`
	QuestionID string           `json:"question_id,omitempty"`
	Questions  []domain.Item    `json:"questions,omitempty"`
	Question   *domain.Question `json:"question,omitempty"`
	Status     domain.Status    `json:"status,omitempty"`
	RunID      string           `json:"run_id,omitempty"`
	Error      json.RawMessage  `json:"error,omitempty"`
}

// liveAnswer is what a client sends: an answer in the respond body's form.
type liveAnswer struct {
	Type        string          `json:"type"`
	QuestionID  string          `json:"question_id"`
	Answers     json.RawMessage `json:"answers,omitempty"`
	Response    json.RawMessage `json:"response,omitempty"`
	RespondedBy json.RawMessage `json:"responded_by,omitempty"`
}

// upgrader checks Origin: a browser page of another site may not open the
// socket (gorilla's default: the Origin's host must be the request's).
var upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096,
	Error: func(w http.ResponseWriter, r *http.Request, status int, _ error) {
		e := domain.Errorf(domain.EInvalid, "not a valid WebSocket handshake")
		if status == http.StatusForbidden {
			e = domain.Errorf(domain.EForbidden, "a page of another site (Origin %s) may not open this WebSocket", r.Header.Get("Origin"))
		}
		httperr.Write(w, e)
	}}

const (
	livePing     = 30 * time.Second
	liveWriteTTL = 10 * time.Second
)

// live serves the WebSocket form of the live protocol: questions as they
// are asked (the pending ones first), final states as they happen, and
// answers taken exactly as respond takes them.
func (a *API) live(w http.ResponseWriter, r *http.Request, p Principal) error {
	if p.Agent != nil {
		return domain.Errorf(domain.EForbidden, "the live protocol is for operators; use an operator token")
	}
	if !websocket.IsWebSocketUpgrade(r) {
		return domain.Errorf(domain.EInvalid, "this endpoint speaks WebSocket: send Upgrade: websocket (or use GET /api/projects/{p}/events for Server-Sent Events)")
	}
	project := r.PathValue("p")
	wake, stop := a.store.Watch(project, "")
	defer stop()
	after, err := a.tailID(r, project)
	if err != nil {
		return err
	}
	pending, err := a.pending(r.Context(), project)
	if err != nil {
		return err
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return nil // the upgrader has answered
	}
	defer conn.Close()
	conn.SetReadLimit(MaxBody)

	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	stopDrain := context.AfterFunc(a.drainCtx, cancel)
	defer stopDrain()
	var mu sync.Mutex
	send := func(m liveMsg) error {
		mu.Lock()
		defer mu.Unlock()
		conn.SetWriteDeadline(time.Now().Add(liveWriteTTL))
		return conn.WriteJSON(m)
	}
	go func() { // reader: answers in, until the client goes
		defer cancel()
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if err := send(a.liveAnswer(r, b)); err != nil {
				return
			}
		}
	}()

	for _, q := range pending {
		if p.owns(q) {
			if send(questionMsg(q)) != nil {
				return nil
			}
		}
	}
	ping := time.NewTicker(livePing)
	defer ping.Stop()
	for {
		evs, err := a.store.Events(ctx, project, after, 100)
		if err != nil {
			return nil // the connection is upgraded; the client reconnects
		}
		for _, ev := range evs {
			after = ev.ID
			m, ok := a.liveEvent(ctx, p, project, ev)
			if ok && send(m) != nil {
				return nil
			}
		}
		if len(evs) == 100 {
			continue
		}
		select {
		case <-ctx.Done():
			mu.Lock()
			conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
			mu.Unlock()
			return nil
		case <-wake:
		case <-ping.C:
			mu.Lock()
			err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(liveWriteTTL))
			mu.Unlock()
			if err != nil {
				return nil
			}
		}
	}
}

func questionMsg(q *domain.Question) liveMsg {
	pq := public(q)
	return liveMsg{Type: "question", ID: q.ID, Questions: pq.Questions, Question: pq}
}

// liveEvent turns a stream event into the message p may see, if any.
func (a *API) liveEvent(ctx context.Context, p Principal, project string, ev domain.Event) (liveMsg, bool) {
	var typ string
	switch ev.Type {
	case domain.EventCreated:
		typ = "question"
	case domain.EventAnswered:
		typ = "answered"
	case domain.EventCancelled:
		typ = "cancelled"
	case domain.EventExpired:
		typ = "expired"
	default:
		return liveMsg{}, false
	}
	q, err := a.store.Get(ctx, project, ev.QuestionID)
	if err != nil || !p.owns(q) {
		return liveMsg{}, false
	}
	if typ == "question" {
		if q.Status != domain.StatusPending {
			return liveMsg{}, false // final already; its own event follows
		}
		return questionMsg(q), true
	}
	return liveMsg{Type: typ, ID: q.ID, Question: public(q)}, true
}

// liveAnswer answers through the respond endpoint itself, with the
// upgrade request's credentials: the same rules, the same principal.
func (a *API) liveAnswer(up *http.Request, b []byte) liveMsg {
	var in liveAnswer
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&in); err != nil || in.Type != "answer" || in.QuestionID == "" {
		e, _ := json.Marshal(domain.Error{Code: domain.EInvalid, Message: "send {\"type\": \"answer\", \"question_id\": \"…\", \"answers\": {…}}",
			Details: []domain.Detail{{Field: "type", Problem: "must be answer, with question_id and answers or response"}}})
		return liveMsg{Type: "error", QuestionID: in.QuestionID, Error: e}
	}
	body := map[string]json.RawMessage{}
	for k, v := range map[string]json.RawMessage{"answers": in.Answers, "response": in.Response, "responded_by": in.RespondedBy} {
		if len(v) > 0 {
			body[k] = v
		}
	}
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(context.WithoutCancel(up.Context()), http.MethodPost,
		"/api/projects/"+up.PathValue("p")+"/agent-questions/"+in.QuestionID+"/respond", bytes.NewReader(raw))
	req.Host, req.RemoteAddr = up.Host, up.RemoteAddr
	for _, h := range []string{"Authorization", "Origin", "User-Agent", "X-Forwarded-For"} {
		if v := up.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	rec := &recorder{header: http.Header{}}
	a.mux.ServeHTTP(rec, req)
	if rec.status == http.StatusAccepted {
		var res struct {
			Status domain.Status `json:"status"`
			RunID  string        `json:"run_id"`
		}
		json.Unmarshal(rec.body.Bytes(), &res)
		return liveMsg{Type: "result", QuestionID: in.QuestionID, Status: res.Status, RunID: res.RunID}
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	json.Unmarshal(rec.body.Bytes(), &e)
	return liveMsg{Type: "error", QuestionID: in.QuestionID, Error: e.Error}
}

// recorder is the response of an answer taken through respond.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
