package faketeams

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The fake as the Teams client and the Bot Framework channel: activities
// signed the way the Bot Framework signs them, sent to the bot.

// TokenOptions change a token from a valid one; zero values keep it valid.
type TokenOptions struct {
	Audience   string          // default the app id
	Issuer     string          // default Issuer
	ServiceURL string          // the serviceurl claim; default the fake's
	Expires    time.Time       // default in an hour
	NotBefore  time.Time       // default five minutes ago
	Key        *rsa.PrivateKey // default the published signing key
	Kid        string          // default the signing key's id
	Alg        string          // default RS256
}

// Token signs a Bot Framework token (RS256, written here with the
// standard library so the fake does not share code with what it tests).
func (s *Server) Token(o TokenOptions) string {
	s.mu.Lock()
	k := s.keys[0]
	s.mu.Unlock()
	now := time.Now()
	if o.Audience == "" {
		o.Audience = s.AppID
	}
	if o.Issuer == "" {
		o.Issuer = Issuer
	}
	if o.ServiceURL == "" {
		o.ServiceURL = s.ServiceURL()
	}
	if o.Expires.IsZero() {
		o.Expires = now.Add(time.Hour)
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = now.Add(-5 * time.Minute)
	}
	if o.Key == nil {
		o.Key = k.priv
	}
	if o.Kid == "" {
		o.Kid = k.kid
	}
	if o.Alg == "" {
		o.Alg = "RS256"
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	head := enc(map[string]string{"alg": o.Alg, "typ": "JWT", "kid": o.Kid, "x5t": o.Kid})
	claims := enc(map[string]any{"iss": o.Issuer, "aud": o.Audience, "serviceurl": o.ServiceURL,
		"exp": o.Expires.Unix(), "nbf": o.NotBefore.Unix(), "iat": o.NotBefore.Unix()})
	signed := head + "." + claims
	if o.Alg == "none" {
		return signed + "."
	}
	h := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, o.Key, crypto.SHA256, h[:])
	if err != nil {
		panic(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// User is a Teams user: their Entra object id and display name.
type User struct{ AADObjectID, Name string }

// Reply is the bot's answer to an activity.
type Reply struct {
	HTTPStatus int
	// For an invoke: the invoke response's statusCode, type and value
	// (the card the person sees next, for application/vnd.microsoft.card.adaptive).
	StatusCode int
	Type       string
	Value      json.RawMessage
}

// Post sends an activity to the bot's messaging endpoint with token
// ("" = a valid one) and returns its answer.
func (s *Server) Post(endpoint string, act map[string]any, token string) Reply {
	if token == "" {
		token = s.Token(TokenOptions{})
	}
	if _, ok := act["id"]; !ok {
		act["id"] = "f:" + randHex(8)
	}
	if _, ok := act["serviceUrl"]; !ok {
		act["serviceUrl"] = s.ServiceURL()
	}
	if _, ok := act["channelId"]; !ok {
		act["channelId"] = "msteams"
	}
	b, _ := json.Marshal(act)
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Errorf("faketeams: sending an activity: %v", err)
		return Reply{}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := Reply{HTTPStatus: resp.StatusCode}
	var ir struct {
		StatusCode int             `json:"statusCode"`
		Type       string          `json:"type"`
		Value      json.RawMessage `json:"value"`
	}
	if json.Unmarshal(body, &ir) == nil {
		r.StatusCode, r.Type, r.Value = ir.StatusCode, ir.Type, ir.Value
	}
	s.mu.Lock()
	s.exchanges = append(s.exchanges, Exchange{Method: "BOT", Route: fmt.Sprint(act["type"]), Status: resp.StatusCode, Request: b})
	s.mu.Unlock()
	return r
}

// InvokeActivity is the adaptiveCard/action invoke a press of an
// Action.Execute on activity id sends, as user.
func (s *Server) InvokeActivity(user User, id, verb string, data json.RawMessage) map[string]any {
	a := s.Activity(id)
	if a == nil {
		s.t.Fatalf("faketeams: no activity %s", id)
	}
	conv := a.Conversation
	s.mu.Lock()
	c := s.convs[conv]
	s.mu.Unlock()
	kind := "groupChat"
	channelData := map[string]any{"tenant": map[string]string{"id": s.Tenant}}
	if c != nil && c.Channel {
		kind = "channel"
		thread := a.Thread
		if thread == "" {
			thread = a.ID
		}
		conv += ";messageid=" + thread
		channelData["channel"] = map[string]string{"id": a.Conversation}
	}
	if data == nil {
		data = json.RawMessage(`{}`)
	}
	return map[string]any{"type": "invoke", "name": "adaptiveCard/action",
		"from":         map[string]string{"id": "29:" + user.AADObjectID, "name": user.Name, "aadObjectId": user.AADObjectID},
		"recipient":    map[string]string{"id": "28:" + s.AppID, "name": "askbridge"},
		"conversation": map[string]any{"id": conv, "conversationType": kind, "tenantId": s.Tenant, "isGroup": true},
		"replyToId":    id, "channelData": channelData,
		"value": map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": verb, "data": data}, "trigger": "manual"}}
}

// Invoke presses an Action.Execute on activity id as user, with a valid
// token, and returns the bot's answer.
func (s *Server) Invoke(endpoint string, user User, id, verb string, data json.RawMessage) Reply {
	return s.Post(endpoint, s.InvokeActivity(user, id, verb, data), "")
}

// Install tells the bot it was added to a team: Teams' installationUpdate
// from the team's General channel, then a conversationUpdate naming
// channel (channelCreated) when it is not the General one.
func (s *Server) Install(endpoint, teamID, teamName, channelID, channelName string) {
	s.AddChannel(teamID, "General")
	base := map[string]any{"type": "installationUpdate", "action": "add",
		"from":         map[string]string{"id": "29:installer", "aadObjectId": "installer"},
		"recipient":    map[string]string{"id": "28:" + s.AppID},
		"conversation": map[string]any{"id": teamID, "conversationType": "channel", "tenantId": s.Tenant, "isGroup": true},
		"channelData": map[string]any{"team": map[string]string{"id": teamID, "name": teamName},
			"channel": map[string]string{"id": teamID}, "tenant": map[string]string{"id": s.Tenant}}}
	if r := s.Post(endpoint, base, ""); r.HTTPStatus/100 != 2 {
		s.t.Fatalf("faketeams: installationUpdate answered %d", r.HTTPStatus)
	}
	if channelID == "" || channelID == teamID {
		return
	}
	s.AddChannel(channelID, channelName)
	upd := map[string]any{"type": "conversationUpdate",
		"from":         map[string]string{"id": "29:installer", "aadObjectId": "installer"},
		"recipient":    map[string]string{"id": "28:" + s.AppID},
		"conversation": map[string]any{"id": teamID, "conversationType": "channel", "tenantId": s.Tenant, "isGroup": true},
		"channelData": map[string]any{"eventType": "channelCreated", "team": map[string]string{"id": teamID, "name": teamName},
			"channel": map[string]string{"id": channelID, "name": channelName}, "tenant": map[string]string{"id": s.Tenant}}}
	if r := s.Post(endpoint, upd, ""); r.HTTPStatus/100 != 2 {
		s.t.Fatalf("faketeams: conversationUpdate answered %d", r.HTTPStatus)
	}
}
