package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/internal/admit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A blocking ask_user call over Streamable HTTP that waits for a person is
// parked like a long-poll of the API: once its question is asked and still
// pending, its connection is taken over from net/http and the SDK, and held
// without a goroutine until the question is final; then the call's
// JSON-RPC response is written, as the SDK would have written it, and the
// connection is closed. Meanwhile the response's head is written at once
// and, every ProgressEvery, a progress notification if the host gave a
// progress token, else an SSE comment that keeps the connection alive. A
// call that opens an elicitation form, an HTTP/2 request, or a server
// without a Parker waits the ordinary way.
//
// Both eras are parked: a 2026-07-28 POST, and the POST of a call in a
// 2025-11-25 (or older) session. For the latter the SDK considers the call
// answered once parked (its placeholder response is neither written nor
// kept for a resumed stream, parkedStore), so what the SDK did for a
// waiting call is done here: the session's notifications/cancelled for the
// call, and the end of the session, end the parked wait without an answer
// (the question stays pending, or is withdrawn with its session as before).

// Parker holds a parked call's connection (the API's parker, wired by the
// app).
type Parker interface {
	// ParkCall takes over the connection of w to wait on the pending
	// question project/id for at most timeout, answering it as c builds;
	// false when it cannot (w is then untouched).
	ParkCall(w http.ResponseWriter, r *http.Request, project, id string, timeout time.Duration, c ParkedCall) bool
}

// ParkedCall is what a parked call is sent.
type ParkedCall struct {
	// Final is the rest of the HTTP response once the question is final,
	// the wait's time is up or the server drains (q as read then, maybe
	// still pending, or err reading it).
	Final func(q *domain.Question, err error) []byte
	// Head, if set, is written at once, then Tick(n) every Every.
	Head  []byte
	Every time.Duration
	Tick  func(n int) []byte
	// OnPark is given once parked what ends the wait without an answer;
	// Done is called once when the wait ends, whichever way (unanswered:
	// the client hung up, or stop was called). Neither may block.
	OnPark func(stop func())
	Done   func(unanswered bool)
}

// parkHeader carries a parkable POST's slot to the tool handler, which
// sees the request's headers only.
const parkHeader = "Askbridge-Park-Slot"

// expiryGrace is how long a parked call waits past its question's expiry
// for the expired record before it is answered with the question as it is.
const expiryGrace = 30 * time.Second

// parkSlot is a POST of one ask_user call that may be parked: the SDK
// writes to hold, which keeps what it writes until the call is parked
// (then the SDK's writes are dropped) or not (then they go through).
type parkSlot struct {
	w       http.ResponseWriter
	r       *http.Request
	hold    *holdWriter
	id      json.RawMessage // the call's JSON-RPC id
	session string          // the Mcp-Session-Id of a 2025-11-25 call
	release func()          // gives its place among the calls being asked back (admit.go)
}

// parkable returns the slot of a POST that may be parked: HTTP/1, one
// tools/call of ask_user (in a session: with the session's id). The body is
// read and put back. A session's notifications/cancelled ends the parked
// call it names.
func (s *Server) parkable(w http.ResponseWriter, r *http.Request, session string) (*parkSlot, string) {
	r.Header.Del(parkHeader)
	if s.parker == nil || r.Method != http.MethodPost || r.Body == nil {
		return nil, ""
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil {
		return nil, ""
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil, ""
	}
	if session != "" && msg.Method == "notifications/cancelled" {
		s.stopParked(session, msg.Params.RequestID)
		return nil, ""
	}
	if r.ProtoMajor != 1 || msg.Method != "tools/call" || msg.Params.Name != ToolName || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil, ""
	}
	slot := &parkSlot{w: w, r: r, hold: &holdWriter{ResponseWriter: w}, id: msg.ID, session: session, release: admit.Of(r.Context())}
	token := rand.Text()
	s.slots.Store(token, slot)
	r.Header.Set(parkHeader, token)
	return slot, token
}

// slotOf is the slot of a call's POST, if it may be parked.
func (s *Server) slotOf(req *mcp.CallToolRequest) *parkSlot {
	if req.Extra == nil || req.Extra.Header == nil {
		return nil
	}
	token := req.Extra.Header.Get(parkHeader)
	if token == "" {
		return nil
	}
	v, ok := s.slots.Load(token)
	if !ok {
		return nil
	}
	return v.(*parkSlot)
}

// park parks a call whose question q is pending; false when it cannot
// (the call then waits the ordinary way). The question of a session's
// call is tracked in st as asked (a, withdrawn when the session ends) and
// forgotten once final.
func (s *Server) park(slot *parkSlot, req *mcp.CallToolRequest, q *domain.Question, st *session, a askedIn) bool {
	if ct := slot.w.Header().Get("Content-Type"); ct != "" && ct != "text/event-stream" {
		return false // the SDK answers this call with one JSON body
	}
	var pc *parkedCall
	if slot.session != "" {
		if !st.track(q.ID, a) {
			return false
		}
		pc = &parkedCall{id: slot.id, session: slot.session, st: st, srv: s,
			project: q.ProjectID, qid: q.ID, expires: q.ExpiresAt.UnixNano()}
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			pc.user, pc.authed = req.Extra.TokenInfo.UserID, true
		}
	}
	held := slot.hold.drop()
	// What the SDK wrote so far (a session stream's priming event) goes
	// first; the response event gets the id the SDK would have given it.
	head := slices.Concat(responseHead(slot.w.Header()), held)
	stream, event := primeID(held)
	var call ParkedCall
	if pc == nil {
		// The closure keeps what it needs only: the question as asked is
		// not kept for the whole wait.
		id, qid, impl := slot.id, q.ID, s.impl // the 2026-07-28 result names the server
		eventID := ""
		if stream != "" {
			eventID = stream + "_" + strconv.Itoa(event)
		}
		call.Final = func(fq *domain.Question, err error) []byte {
			return sseEventID(nil, eventID, rpcResult(id, finalCallResult(qid, fq, err), impl))
		}
	}
	// The head goes out at once, and then something every ProgressEvery:
	// a host that sees nothing until the answer gives up (a Node host's
	// fetch waits 5 minutes for response headers) or is cut by a proxy
	// between (nginx closes a connection idle for 60 s).
	call.Head, call.Every, call.Tick = head, s.cfg.ProgressEvery, keepAlive
	if token := req.Params.GetProgressToken(); token != nil {
		places, expires := q.Places(), q.ExpiresAt
		n := 0 // counted here: a resumed stream's progress goes on increasing
		call.Tick = func(int) []byte {
			n++
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
				"params": &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: waitingLine(places, expires)}})
			return sseEvent(nil, b)
		}
	}
	if pc != nil {
		// A session's stream opens at once, as the SDK opens it: its
		// headers and priming event now, the result when final.
		pc.stream, pc.event, pc.every, pc.tick = stream, event, call.Every, call.Tick
		call = pc.parkedCall()
		call.Head = head
	}
	timeout := max(time.Until(q.ExpiresAt)+expiryGrace, expiryGrace)
	if s.parker.ParkCall(slot.w, slot.r, q.ProjectID, q.ID, timeout, call) {
		slot.hold.settle()
		slot.release()
		s.log.Debug("call parked until its question is final", "question", q.ID)
		return true
	}
	slot.hold.pass()
	return false
}

// finalCallResult is the result of a parked call whose wait for question
// qid ended: fq as read then, or err reading it.
func finalCallResult(qid string, fq *domain.Question, err error) *mcp.CallToolResult {
	if err == nil && fq.Status.Final() {
		return finalResult(fq)
	}
	why := "the wait ended before the question did"
	if e := (*domain.Error)(nil); err != nil && errors.As(err, &e) {
		why = e.Message
	}
	return waitFailedResult(qid, why)
}

// keepAliveComment is what a parked call without a progress token is sent
// every ProgressEvery: an SSE comment, which SSE readers skip (the SDKs'
// clients and browsers' EventSource alike).
var keepAliveComment = []byte(": waiting for an answer\n\n")

func keepAlive(int) []byte { return keepAliveComment }

// responseHead is the head of a parked call's response: the SDK's headers
// for the call's stream, the connection closed after the response.
func responseHead(h http.Header) []byte {
	h = h.Clone()
	for _, k := range []string{"Connection", "Content-Length", "Transfer-Encoding", parkHeader} {
		h.Del(k)
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "text/event-stream")
	}
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 200 OK\r\n")
	h.Write(&b)
	b.WriteString("Connection: close\r\n\r\n")
	return b.Bytes()
}

// sseEvent is one SSE message event, as the SDK writes them.
func sseEvent(out, data []byte) []byte { return sseEventID(out, "", data) }

// sseEventID is one SSE message event with its id, if any.
func sseEventID(out []byte, id string, data []byte) []byte {
	out = append(out, "event: message\n"...)
	if id != "" {
		out = append(out, "id: "+id+"\n"...)
	}
	out = append(out, "data: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}

// rpcResult is the JSON-RPC response of a call, as the SDK writes it; with
// impl, a 2026-07-28 call's: the result says it is complete and names the
// server (SEP-2575).
func rpcResult(id json.RawMessage, res *mcp.CallToolResult, impl *mcp.Implementation) []byte {
	if impl != nil {
		res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: impl}
	}
	r, err := json.Marshal(res)
	if impl != nil && err == nil && len(r) > 2 && r[0] == '{' {
		r = append([]byte(`{"resultType":"complete",`), r[1:]...)
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id, r})
	if err != nil {
		b = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"the result could not be encoded"}}`, id)
	}
	return b
}

// holdWriter keeps what the SDK writes for a parkable call until the call
// is parked (then drops it, and all after) or not (then writes it through,
// and all after).
type holdWriter struct {
	http.ResponseWriter
	mu      sync.Mutex
	state   int // holding, passing, dropping, parked
	code    int
	buf     []byte
	flushed bool
}

const (
	holding = iota
	passing
	dropping
	parked // the connection is the parker's: nothing is written through any more
)

func (h *holdWriter) WriteHeader(code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.state {
	case holding:
		if h.code == 0 {
			h.code = code
		}
	case passing:
		h.ResponseWriter.WriteHeader(code)
	}
}

func (h *holdWriter) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.state {
	case holding:
		if h.code == 0 {
			h.code = http.StatusOK
		}
		h.buf = append(h.buf, b...)
		return len(b), nil
	case passing:
		return h.ResponseWriter.Write(b)
	}
	return len(b), nil
}

func (h *holdWriter) FlushError() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.state {
	case holding:
		h.flushed = true
	case passing:
		return http.NewResponseController(h.ResponseWriter).Flush()
	}
	return nil
}

func (h *holdWriter) Flush() { _ = h.FlushError() }

// drop drops all the SDK writes from now on, returning what it held.
func (h *holdWriter) drop() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == holding {
		h.state = dropping
	}
	return bytes.Clone(h.buf)
}

// settle drops all the SDK writes from now on, for good.
func (h *holdWriter) settle() {
	h.mu.Lock()
	h.state, h.buf = parked, nil
	h.mu.Unlock()
}

// pass writes through what is held and all the SDK writes after.
func (h *holdWriter) pass() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == passing || h.state == parked {
		return
	}
	h.state = passing
	if h.code != 0 {
		h.ResponseWriter.WriteHeader(h.code)
	}
	if len(h.buf) > 0 {
		h.ResponseWriter.Write(h.buf)
	}
	if h.flushed || len(h.buf) > 0 {
		_ = http.NewResponseController(h.ResponseWriter).Flush()
	}
	h.buf = nil
}
