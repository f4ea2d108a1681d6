package fakediscord

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"
)

// applyResponse applies an interaction response as Discord would.
func (f *Server) applyResponse(w http.ResponseWriter, tok *Token, resp *Response) bool {
	switch resp.Type {
	case 4:
		if resp.Data == nil || resp.Data.Flags&64 == 0 {
			f.violation(w, "reply to one person must be ephemeral")
			return false
		}
		if !f.checkMessage(w, "reply", resp.Data) {
			return false
		}
		f.ephemerals[tok.User] = append(f.ephemerals[tok.User], Deref(resp.Data.Content))
	case 6:
	case 7:
		if resp.Data == nil || !f.checkMessage(w, "update", resp.Data) {
			if resp.Data == nil {
				f.violation(w, "type 7 without data")
			}
			return false
		}
		m := f.messages[tok.MessageID]
		applyPayload(m, resp.Data)
		m.Edits++
	case 9:
		if resp.Data == nil {
			f.violation(w, "modal without data")
			return false
		}
		if probs := checkModal(resp.Data); len(probs) > 0 {
			f.violation(w, "modal: %s", strings.Join(probs, "; "))
			return false
		}
	default:
		f.violation(w, "interaction response type %d not allowed here", resp.Type)
		return false
	}
	return true
}

// User is a person clicking in the Discord client.
type User struct {
	ID, Name string
	Roles    []string
}

// interaction is what Discord sends for a click or a modal submit.
func (f *Server) Interaction(u User, m *Message, typ int, data map[string]any) (map[string]any, *Token, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	token := "itoken-" + f.id()
	tok := &Token{MessageID: m.ID, User: u.ID, Issued: f.Now()}
	f.tokens[token] = tok
	ch := f.channels[m.ChannelID]
	in := map[string]any{
		"id": f.id(), "application_id": f.AppID, "type": typ, "token": token, "version": 1,
		"guild_id": ch.Guild, "channel_id": m.ChannelID, "data": data,
		"message": map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "components": m.Components},
		"member":  map[string]any{"user": map[string]any{"id": u.ID, "username": u.Name}, "roles": u.Roles, "nick": nil},
	}
	return in, tok, token
}

// sign returns the signature headers for body at time ts.
func (f *Server) Sign(body []byte, ts time.Time) (sig, stamp string) {
	stamp = strconv.FormatInt(ts.Unix(), 10)
	return hex.EncodeToString(ed25519.Sign(f.priv, append([]byte(stamp), body...))), stamp
}

// send POSTs a signed interaction to the adapter and applies its response.
// It fails the test if the response breaks a rule or comes after 3 s.
func (f *Server) Send(in map[string]any, tok *Token) *Response {
	f.t.Helper()
	body, _ := json.Marshal(in)
	sig, stamp := f.Sign(body, f.Now())
	req, _ := http.NewRequest("POST", f.Target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature-Ed25519", sig)
	req.Header.Set("X-Signature-Timestamp", stamp)
	start := time.Now()
	res, err := f.client.Do(req)
	if err != nil {
		f.t.Fatalf("interaction: %v", err)
	}
	defer res.Body.Close()
	if took := time.Since(start); took > 3*time.Second {
		f.t.Errorf("interaction answered after %s; Discord gives up after 3 s", took)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		f.t.Fatalf("interaction: HTTP %d: %s", res.StatusCode, b)
	}
	var resp Response
	if err := json.NewDecoder(res.Body).Decode(&resp); err != nil {
		f.t.Fatalf("interaction response is not JSON: %v", err)
	}
	f.Apply(tok, &resp)
	return &resp
}

// Apply applies the response to an interaction (its token) as Discord
// does, for interactions sent by other means than Send. A response that
// breaks a rule is reported when the test ends.
func (f *Server) Apply(tok *Token, resp *Response) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := httptest.NewRecorder()
	if f.applyResponse(rec, tok, resp) {
		tok.Acked = true
	}
}

// find returns the enabled component with this label (button) or the
// select at row index, failing the test when there is none.
func (f *Server) Button(m *Message, label string) Component {
	f.t.Helper()
	for _, row := range m.Components {
		for _, c := range row.Components {
			if c.Type == 2 && c.Label == label {
				if c.Disabled {
					f.t.Fatalf("button %q is disabled", label)
				}
				return c
			}
		}
	}
	f.t.Fatalf("no button %q on message %s", label, m.ID)
	return Component{}
}

// click presses a button as u.
func (f *Server) Click(u User, msgID, label string) *Response {
	f.t.Helper()
	m := f.Message(msgID)
	c := f.Button(m, label)
	in, tok, _ := f.Interaction(u, m, 3, map[string]any{"custom_id": c.CustomID, "component_type": 2})
	return f.Send(in, tok)
}

// choose picks options by label in the select of row (0-based) as u.
func (f *Server) Choose(u User, msgID string, row int, labels ...string) *Response {
	f.t.Helper()
	m := f.Message(msgID)
	if row >= len(m.Components) || len(m.Components[row].Components) != 1 || m.Components[row].Components[0].Type != 3 {
		f.t.Fatalf("row %d of message %s is not a select", row, msgID)
	}
	s := m.Components[row].Components[0]
	if s.Disabled {
		f.t.Fatalf("select in row %d is disabled", row)
	}
	var values []string
	for _, l := range labels {
		found := false
		for _, o := range s.Options {
			if o.Label == l {
				values, found = append(values, o.Value), true
			}
		}
		if !found {
			f.t.Fatalf("select in row %d has no option %q", row, l)
		}
	}
	if len(values) > max(s.MaxValues, 1) {
		f.t.Fatalf("select allows %d values, chose %d", s.MaxValues, len(values))
	}
	in, tok, _ := f.Interaction(u, m, 3, map[string]any{"custom_id": s.CustomID, "component_type": 3, "values": values})
	return f.Send(in, tok)
}

// submitModal fills the modal's text input with text and submits it as u.
func (f *Server) SubmitModal(u User, msgID string, modal *Response, text string) *Response {
	f.t.Helper()
	if modal.Type != 9 {
		f.t.Fatalf("expected a modal (type 9), got type %d", modal.Type)
	}
	ti := (*modal.Data.Components)[0].Components[0]
	m := f.Message(msgID)
	in, tok, _ := f.Interaction(u, m, 5, map[string]any{"custom_id": modal.Data.CustomID, "components": []any{
		map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": ti.CustomID, "value": text}}},
	}})
	return f.Send(in, tok)
}

// ClickDisabledAnyway sends a click on a control the client no longer
// shows (a stale client, a copy whose edit failed).
func (f *Server) ClickDisabledAnyway(u User, msgID, customID string) *Response {
	m := f.Message(msgID)
	in, tok, _ := f.Interaction(u, m, 3, map[string]any{"custom_id": customID, "component_type": 2})
	return f.Send(in, tok)
}
