package fakeslack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// socket accepts a Socket Mode connection and greets it as Slack does.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	_ = conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": "AFAKE"}})
	select {
	case s.sockets <- conn:
	default:
		_ = conn.Close()
	}
}

// Socket is the server side of one Socket Mode connection.
type Socket struct {
	conn *websocket.Conn
	seq  int
}

// AcceptSocket waits for the app to connect over Socket Mode.
func (s *Server) AcceptSocket(timeout time.Duration) (*Socket, error) {
	select {
	case c := <-s.sockets:
		return &Socket{conn: c}, nil
	case <-time.After(timeout):
		return nil, errors.New("no socket mode connection")
	}
}

// Send delivers an envelope ("interactive" or "events_api") and waits for
// its acknowledgement, returning the ack's payload (null when empty).
func (k *Socket) Send(typ string, payload any, timeout time.Duration) (json.RawMessage, error) {
	k.seq++
	id := fmt.Sprintf("env-%d", k.seq)
	if err := k.conn.WriteJSON(map[string]any{"type": typ, "envelope_id": id, "payload": payload,
		"accepts_response_payload": typ == "interactive"}); err != nil {
		return nil, err
	}
	_ = k.conn.SetReadDeadline(time.Now().Add(timeout))
	for {
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := k.conn.ReadJSON(&ack); err != nil {
			return nil, err
		}
		if ack.EnvelopeID == id {
			return ack.Payload, nil
		}
	}
}

// Close ends the connection.
func (k *Socket) Close() error { return k.conn.Close() }
