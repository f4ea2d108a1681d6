package fakediscord

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func apiErr(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}

func writeJSONT(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// fault answers a queued failure for op, if any.
func (f *Server) fault(w http.ResponseWriter, op string) bool {
	q := f.faults[op]
	if len(q) == 0 {
		return false
	}
	status := q[0]
	f.faults[op] = q[1:]
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(f.RetryAfter, 'f', 3, 64))
		w.Header().Set("X-RateLimit-Scope", "user")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"message":"You are being rate limited.","retry_after":%.3f,"global":false}`, f.RetryAfter)
		return true
	}
	apiErr(w, status, 0, http.StatusText(status))
	return true
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimPrefix(r.URL.Path, "/api/v10")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	if parts[0] == "channels" && r.Header.Get("Authorization") != "Bot "+f.BotToken {
		apiErr(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	switch {
	case r.Method == "GET" && len(parts) == 2 && parts[0] == "channels":
		f.getChannel(w, parts)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		f.postMessage(w, parts, body)
	case r.Method == "PATCH" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		f.editMessage(w, parts, body)
	case r.Method == "POST" && len(parts) == 5 && parts[0] == "channels" && parts[4] == "threads":
		f.startThread(w, parts, body)
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		f.callback(w, parts, body)
	case r.Method == "PATCH" && len(parts) == 5 && parts[0] == "webhooks" && parts[4] == "@original":
		f.editOriginal(w, parts, body)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "webhooks":
		f.followUp(w, parts, body)
	default:
		f.violations = append(f.violations, "unexpected request "+r.Method+" "+path)
		apiErr(w, 404, 0, "404: Not Found")
	}
}

// getChannel returns a channel (GET /channels/{id}). Called with f.mu held.
func (f *Server) getChannel(w http.ResponseWriter, parts []string) {
	f.calls["channel"]++
	ch, ok := f.channels[parts[1]]
	if !ok {
		apiErr(w, 404, 10003, "Unknown Channel")
		return
	}
	writeJSONT(w, map[string]any{"id": ch.ID, "guild_id": ch.Guild, "type": 0})
}

// postMessage posts a message (POST /channels/{id}/messages): reply references, nonces and lost answers as Discord has them. Called with f.mu held.
func (f *Server) postMessage(w http.ResponseWriter, parts []string, body []byte) {
	f.calls["post"]++
	if f.fault(w, "post:"+parts[1]) || f.fault(w, "post") {
		return
	}
	ch, ok := f.channels[parts[1]]
	if !ok {
		apiErr(w, 404, 10003, "Unknown Channel")
		return
	}
	var p Payload
	if err := json.Unmarshal(body, &p); err != nil {
		f.violation(w, "post: body is not JSON: %v", err)
		return
	}
	if !f.checkMessage(w, "post", &p) {
		return
	}
	m := &Message{ID: f.id(), ChannelID: ch.ID}
	if ref := p.MessageReference; ref != nil {
		target, ok := f.messages[ref.MessageID]
		switch {
		case ok && ref.ChannelID != "" && ref.ChannelID != target.ChannelID:
			apiErr(w, 400, 50035, "Invalid Form Body: message_reference: Unknown message")
			return
		case ok && target.ChannelID != ch.ID:
			apiErr(w, 400, 50035, "Invalid Form Body: message_reference: cannot reply to a message in another channel")
			return
		case ok:
			m.ReplyTo = target.ID
		case ref.FailIfNotExists == nil || *ref.FailIfNotExists:
			apiErr(w, 400, 50035, "Invalid Form Body: message_reference: Unknown message")
			return
		}
	}
	nonceKey := ""
	if len(p.Nonce) > 0 && string(p.Nonce) != "null" {
		var n string
		if json.Unmarshal(p.Nonce, &n) == nil && len(n) > 25 {
			f.violation(w, "post: nonce %q is longer than 25 characters", n)
			return
		}
		nonceKey = ch.ID + "\x1f" + string(p.Nonce)
	}
	if prev, ok := f.nonces[nonceKey]; ok && p.EnforceNonce && f.messages[prev.ID] == prev {
		f.calls["post-deduplicated"]++
		m = prev
	} else {
		applyPayload(m, &p)
		m.Pings = pings(m.Content, &p)
		f.messages[m.ID] = m
		if nonceKey != "" {
			f.nonces[nonceKey] = m
		}
	}
	if f.lose["post"] > 0 { // done, but the answer never reaches the caller
		f.lose["post"]--
		apiErr(w, http.StatusBadGateway, 0, "Bad Gateway")
		return
	}
	writeJSONT(w, map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content})
}

// editMessage edits a message with the bot token (PATCH /channels/{id}/messages/{id}). Called with f.mu held.
func (f *Server) editMessage(w http.ResponseWriter, parts []string, body []byte) {
	f.calls["edit"]++
	if f.fault(w, "edit") {
		return
	}
	m, ok := f.messages[parts[3]]
	if !ok || m.ChannelID != parts[1] {
		apiErr(w, 404, 10008, "Unknown Message")
		return
	}
	var p Payload
	if err := json.Unmarshal(body, &p); err != nil || !f.checkMessage(w, "edit", &p) {
		if err != nil {
			f.violation(w, "edit: body is not JSON")
		}
		return
	}
	applyPayload(m, &p)
	m.Edits++
	writeJSONT(w, map[string]any{"id": m.ID, "channel_id": m.ChannelID})
}

// startThread starts a thread on a message (POST /channels/{id}/messages/{id}/threads). Called with f.mu held.
func (f *Server) startThread(w http.ResponseWriter, parts []string, body []byte) {
	f.calls["thread"]++
	if f.fault(w, "thread") {
		return
	}
	m, ok := f.messages[parts[3]]
	if !ok || m.ChannelID != parts[1] {
		apiErr(w, 404, 10008, "Unknown Message")
		return
	}
	if m.Thread != "" {
		apiErr(w, 400, 160004, "A thread has already been created for this message")
		return
	}
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &p)
	if n := utf8.RuneCountInString(p.Name); n < 1 || n > 100 {
		f.violation(w, "thread name must be 1-100 characters, got %d", n)
		return
	}
	th := Channel{ID: f.id(), Guild: f.channels[parts[1]].Guild, Parent: parts[1]}
	f.channels[th.ID] = th
	m.Thread = th.ID
	writeJSONT(w, map[string]any{"id": th.ID, "guild_id": th.Guild, "parent_id": th.Parent, "type": 11, "name": p.Name})
}

// callback takes an interaction's initial response (POST /interactions/{id}/{token}/callback). Called with f.mu held.
func (f *Server) callback(w http.ResponseWriter, parts []string, body []byte) {
	f.calls["callback"]++
	tok, ok := f.tokens[parts[2]]
	if !ok || f.Now().Sub(tok.Issued) > 3*time.Second {
		apiErr(w, 404, 10062, "Unknown interaction")
		return
	}
	if tok.Acked {
		apiErr(w, 400, 40060, "Interaction has already been acknowledged.")
		return
	}
	var resp Response
	_ = json.Unmarshal(body, &resp)
	if !f.applyResponse(w, tok, &resp) {
		return
	}
	tok.Acked = true
	w.WriteHeader(http.StatusNoContent)
}

// editOriginal edits the message an interaction came from through its token (PATCH /webhooks/{app}/{token}/messages/@original). Called with f.mu held.
func (f *Server) editOriginal(w http.ResponseWriter, parts []string, body []byte) {
	f.calls["token-edit"]++
	if f.fault(w, "token-edit") {
		return
	}
	tok, ok := f.tokens[parts[2]]
	if !ok || parts[1] != f.AppID || f.Now().Sub(tok.Issued) > 15*time.Minute {
		apiErr(w, 401, 50027, "Invalid Webhook Token")
		return
	}
	if !tok.Acked {
		apiErr(w, 404, 10015, "Unknown Webhook")
		return
	}
	var p Payload
	_ = json.Unmarshal(body, &p)
	if !f.checkMessage(w, "token-edit", &p) {
		return
	}
	m := f.messages[tok.MessageID]
	applyPayload(m, &p)
	m.Edits++
	writeJSONT(w, map[string]any{"id": m.ID, "channel_id": m.ChannelID})
}

// followUp sends an ephemeral follow-up through an interaction token (POST /webhooks/{app}/{token}). Called with f.mu held.
func (f *Server) followUp(w http.ResponseWriter, parts []string, body []byte) {
	f.calls["followup"]++
	tok, ok := f.tokens[parts[2]]
	if !ok || parts[1] != f.AppID || f.Now().Sub(tok.Issued) > 15*time.Minute {
		apiErr(w, 401, 50027, "Invalid Webhook Token")
		return
	}
	var p Payload
	_ = json.Unmarshal(body, &p)
	if !f.checkMessage(w, "followup", &p) {
		return
	}
	if p.Flags&64 == 0 {
		f.violation(w, "follow-up to one person must be ephemeral")
		return
	}
	f.ephemerals[tok.User] = append(f.ephemerals[tok.User], Deref(p.Content))
	writeJSONT(w, map[string]any{"id": f.id()})
}
