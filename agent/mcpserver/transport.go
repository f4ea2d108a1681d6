package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/internal/admit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessProtocol is the first protocol version without sessions
// (SEP-2575): each request carries its version, client info and
// capabilities in _meta, and any replica can serve it.
const statelessProtocol = "2026-07-28"

// StreamRetry is the reconnection delay sent in the priming event of a
// stream (the SSE retry field): how long a 2025-11-25 client whose stream
// dropped waits before resuming it with Last-Event-ID.
const StreamRetry = 2 * time.Second

// maxPeek bounds the body read to route a request without the
// MCP-Protocol-Version header (the SDK's own default body limit).
const maxPeek = mcp.DefaultMaxRequestBodyBytes

// transports serves both eras of Streamable HTTP on one path: 2026-07-28
// requests go to a stateless handler (no session, nothing kept between
// requests), older ones to the stateful handler (sessions, elicitation,
// streams that resume within the replica).
type transports struct {
	stateful, stateless http.Handler
	s                   *Server
}

func (t transports) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isStateless(r) {
		// A blocking ask_user call may be parked (park.go): the SDK writes
		// to the slot's holdWriter.
		if slot, token := t.s.parkable(w, r, ""); slot != nil {
			defer t.s.slots.Delete(token)
			defer slot.hold.pass() // what the SDK wrote, if the call was not parked
			t.stateless.ServeHTTP(slot.hold, r)
			return
		}
		t.stateless.ServeHTTP(w, r)
		return
	}
	r.Header.Del(parkHeader) // set by parkable only
	pw := &primingRetry{ResponseWriter: w}
	if session := r.Header.Get("Mcp-Session-Id"); session != "" && r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		// The host resumes the stream of a parked call whose connection
		// dropped: parked again (parksession.go).
		if t.s.resumeParked(w, r, session) {
			return
		}
	} else if r.Method == http.MethodGet {
		// No standalone stream: nothing is ever sent on it (a call's
		// progress and elicitation go on the call's own stream), and held
		// open it cost a connection, two goroutines and ~40 KB for the
		// session's whole life (a TypeScript SDK host opens one per
		// session). 405 is the answer the transport allows for that; the
		// SDKs' clients then go on without it.
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "this server offers no standalone stream: each call's messages come on the call's own stream", http.StatusMethodNotAllowed)
		return
	} else if session != "" {
		// A session's blocking ask_user call may be parked too; what the
		// SDK writes for it (the priming event first) is held meanwhile.
		if slot, token := t.s.parkable(w, r, session); slot != nil {
			defer t.s.slots.Delete(token)
			defer slot.hold.pass()
			pw.ResponseWriter = slot.hold
		}
	}
	if r.Method == http.MethodGet {
		admit.LongLived(r.Context()) // a resumed stream: its connection's place goes to the next
	}
	t.stateful.ServeHTTP(pw, r)
}

// isStateless reports a 2026-07-28 request: by its MCP-Protocol-Version
// header, else by the protocol version in its _meta or the server/discover
// method (so a client that forgot the header is told so by the stateless
// handler rather than refused as an unknown version by the stateful one).
// An initialize request is always the older era's.
func isStateless(r *http.Request) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= statelessProtocol
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	v, _ := msg.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= statelessProtocol || msg.Method == "server/discover"
}

type readCloser struct {
	io.Reader
	io.Closer
}

// primingRetry adds the retry field to the priming event the SDK opens each
// SSE stream with (SEP-1699): the SDK gives it an id, so the client can
// resume the stream, but no reconnection delay.
type primingRetry struct {
	http.ResponseWriter
	done bool
}

var primeEvent = []byte("event: prime\nid: ")

func (p *primingRetry) Write(b []byte) (int, error) {
	if p.done {
		return p.ResponseWriter.Write(b)
	}
	p.done = true
	i := bytes.Index(b, []byte("\ndata: "))
	if !bytes.HasPrefix(b, primeEvent) || i < 0 {
		return p.ResponseWriter.Write(b)
	}
	out := make([]byte, 0, len(b)+24)
	out = append(out, b[:i+1]...)
	out = append(out, "retry: "+strconv.FormatInt(StreamRetry.Milliseconds(), 10)+"\n"...)
	out = append(out, b[i+1:]...)
	if _, err := p.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController flush the stream.
func (p *primingRetry) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// quietSessions demotes to debug what the SDK logs at info each time it
// connects a session: a 2026-07-28 request is one such session, and a
// resting 2025-11-25 session is connected anew by each of its requests
// (third_party/go-sdk/PATCHES.md #4), so a busy host would otherwise fill
// the log with three lines a request.
type quietSessions struct{ slog.Handler }

func (q quietSessions) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && sessionNoise(r.Message) {
		if !q.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return q.Handler.Handle(ctx, r)
}

func sessionNoise(msg string) bool {
	switch msg {
	case "server connecting", "server session connected", "server session disconnected":
		return true
	}
	return false
}

func (q quietSessions) WithAttrs(as []slog.Attr) slog.Handler {
	return quietSessions{q.Handler.WithAttrs(as)}
}

func (q quietSessions) WithGroup(name string) slog.Handler {
	return quietSessions{q.Handler.WithGroup(name)}
}
