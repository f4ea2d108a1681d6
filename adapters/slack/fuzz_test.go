package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/slack/fakeslack"
	"github.com/askbridge/askbridge/domain"
)

// Placeholders in fuzz inputs, replaced before signing by the pending
// question's id and its copy's ts, so seeds and their mutations can name a
// real question.
const (
	fuzzQID = "QID"
	fuzzTS  = "QTS"
)

// handlerFuzz runs fuzzed requests through the adapter's signed HTTP
// handlers, one bridge replica per input over one store and one fake
// Slack, so the adapter's background work can be waited for.
type handlerFuzz struct {
	fake  *fakeslack.Server
	store lifecycle.Store
	q     *domain.Question // the pending question inputs may name
	ts    string           // its copy's ts in C1
	asked int
}

func newHandlerFuzz(f *testing.F) *handlerFuzz {
	fake := fakeslack.New("C1", "C2")
	f.Cleanup(fake.Close)
	return &handlerFuzz{fake: fake, store: newTestStore(f)}
}

// snapshot is what a request may change: the question's record, the
// project's events and the messages people see in channels.
type snapshot struct {
	record   []byte
	events   int
	messages []fakeslack.Message
	calls    int
}

func (h *handlerFuzz) snapshot(t *testing.T) snapshot {
	q, err := h.store.Get(context.Background(), "ops", h.q.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(q)
	evs, err := h.store.Events(context.Background(), "ops", "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{record: rec, events: len(evs), messages: h.fake.Messages(""), calls: len(h.fake.Calls(""))}
}

// run sends body, signed, to path on a fresh replica, waits for everything
// the request started, and checks what changed.
func (h *handlerFuzz) run(t *testing.T, path string, body []byte, contentType string) {
	e := newReplica(t, h.fake, func(_ *Config, rc *lifecycle.RouterConfig) { rc.Store = h.store })
	if h.q == nil || h.snapshotStatus(t) != domain.StatusPending {
		h.asked++
		req := authQuestion()
		req.RunID = fmt.Sprintf("fuzz-%d", h.asked) // a fresh question, not a re-ask
		req.Targets = []domain.Target{{Platform: "slack", Channel: "C1"}}
		req.Responders = &domain.Responders{Users: []string{"slack:" + alice.id}}
		h.q = e.ask(req)
		h.ts = e.copyOn(h.q, "C1").MessageTS
	}
	body = bytes.ReplaceAll(body, []byte(fuzzQID), []byte(h.q.ID))
	body = bytes.ReplaceAll(body, []byte(fuzzTS), []byte(h.ts))
	if contentType == "form" {
		body = []byte(url.Values{"payload": {string(body)}}.Encode())
		contentType = "application/x-www-form-urlencoded"
	}
	before := h.snapshot(t)

	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	ts, sig := Sign(testSecret, time.Now(), body)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", sig)
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("HTTP %d for %q: %s", rec.Code, body, rec.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.a.Close(ctx); err != nil {
		t.Fatalf("the adapter's work did not end: %v", err)
	}
	if err := e.router.Flush(ctx); err != nil {
		t.Fatalf("the router's work did not end: %v", err)
	}
	after := h.snapshot(t)

	for _, c := range h.fake.Calls("")[before.calls:] {
		switch c.Error {
		case "invalid_blocks", "invalid_blocks_format", "msg_too_long", "no_text", "invalid_arguments", "invalid_auth", "unknown_method":
			t.Fatalf("the adapter sent Slack a %s it refused (%s) for %q", c.Method, c.Error, body)
		}
	}
	named := bytes.Contains(body, []byte(h.q.ID)) || bytes.Contains(body, []byte(h.ts))
	if rec.Code >= 400 || !named {
		// Refused, or about something else: nothing may change.
		if !bytes.Equal(before.record, after.record) || before.events != after.events || !reflect.DeepEqual(before.messages, after.messages) {
			t.Fatalf("HTTP %d, question named: %v, yet the state changed for %q:\nrecord %s\n→ %s\nevents %d → %d",
				rec.Code, named, body, before.record, after.record, before.events, after.events)
		}
		return
	}
	// It may have answered or dismissed the question, then only as alice
	// (the one responder), with a complete answer, and every copy says so.
	var q domain.Question
	if err := json.Unmarshal(after.record, &q); err != nil {
		t.Fatal(err)
	}
	if q.Status == domain.StatusPending {
		if !reflect.DeepEqual(before.messages, after.messages) {
			t.Fatalf("the question is still pending but its messages changed for %q", body)
		}
		return
	}
	if q.RespondedBy == nil || q.RespondedBy.Platform != "slack" || q.RespondedBy.ID != alice.id {
		t.Fatalf("question %s by %+v, who is not a responder, for %q", q.Status, q.RespondedBy, body)
	}
	if q.Status == domain.StatusAnswered {
		for _, it := range q.Questions {
			if len(q.Selections[it.Question]) == 0 || slices.Contains(q.Selections[it.Question], "") {
				t.Fatalf("incomplete answer %v for %q", q.Selections, body)
			}
		}
	}
	m, ok := h.fake.Message("C1", h.ts)
	if !ok || m.Edits != 1 || !strings.Contains(m.Text, "Answered by") && !strings.Contains(m.Text, "Dismissed by") {
		t.Fatalf("the copy was not finished once (edits %d, text %q) for %q", m.Edits, m.Text, body)
	}
}

func (h *handlerFuzz) snapshotStatus(t *testing.T) domain.Status {
	q, err := h.store.Get(context.Background(), "ops", h.q.ID)
	if err != nil {
		t.Fatal(err)
	}
	return q.Status
}

// FuzzInteractionsHandler: whatever a signed POST /slack/interactions
// carries (a payload form field, or any body), the handler never panics or
// answers 5xx, changes nothing unless it names a pending question and comes
// from a responder, and sends Slack nothing it would refuse.
func FuzzInteractionsHandler(f *testing.F) {
	h := newHandlerFuzz(f)
	action := func(actionID, blockPart, value, user string) []byte {
		b, _ := json.Marshal(map[string]any{"type": "block_actions", "trigger_id": "trig.1",
			"user":      map[string]any{"id": user, "username": "someone"},
			"container": map[string]any{"type": "message", "channel_id": "C1", "message_ts": fuzzTS},
			"channel":   map[string]any{"id": "C1"},
			"actions": []any{map[string]any{"action_id": actionID, "block_id": blockID(fuzzQID, blockPart),
				"type": "button", "value": value, "action_ts": "1.1"}}})
		return b
	}
	for _, seed := range [][]byte{
		action("opt:0:0", "0", "0", "U1"), // a button click by the responder
		action("opt:0:1", "0", "1", "U2"), // by someone else
		action("dismiss", "actions", "dismiss", "U1"),
		action("other:0", "0", "other", "U1"),
		action("submit", "submit", "submit", "U1"),
		action("opt:0:9", "0", "9", "U1"), // an option that does not exist
		action("opt:x:y", "zz", "", "U1"),
		[]byte(`{"type":"view_submission","user":{"id":"U1","username":"alice"},"view":{"id":"V1","callback_id":"askbridge_answer","private_metadata":"{\"q\":\"QID\",\"i\":0,\"c\":\"C1\"}","state":{"values":{"ab_text":{"text":{"type":"plain_text_input","value":"my own answer"}}}}}}`),
		[]byte(`{"type":"view_submission","user":{"id":"U1"},"view":{"callback_id":"askbridge_answer","private_metadata":"{\"q\":\"QID\",\"i\":7}","state":{"values":{}}}}`),
		[]byte(`{"type":"block_actions","actions":[]}`),
		[]byte(`{"type":"shortcut","callback_id":"x","trigger_id":"t"}`),
		[]byte(`{"type":"block_actions","state":{"values":{"ab|QID|0":{"pick:0":{"type":"radio_buttons","selected_option":{"value":"1"}}}}},"user":{"id":"U1"},"container":{"channel_id":"C1","message_ts":"QTS"},"actions":[{"action_id":"submit","block_id":"ab|QID|submit","type":"button"}]}`),
		[]byte(`not json`),
		[]byte(``),
	} {
		f.Add(seed, true)
	}
	f.Add([]byte("payload=%7B%22type%22%3A%22block_actions%22%7D"), false)
	f.Add([]byte("payload=%zz&payload=2"), false)
	f.Add([]byte(""), false)
	f.Fuzz(func(t *testing.T, body []byte, form bool) {
		ct := "form"
		if !form {
			ct = "application/x-www-form-urlencoded"
		}
		h.run(t, "/slack/interactions", body, ct)
	})
}

// FuzzEventsHandler: the same for a signed POST /slack/events (Events API
// envelopes: url_verification, thread replies that may answer).
func FuzzEventsHandler(f *testing.F) {
	h := newHandlerFuzz(f)
	reply := func(user, text, eventID string) []byte {
		b, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": eventID, "team_id": "T1",
			"event": map[string]any{"type": "message", "user": user, "text": text, "ts": "1700000001.000200",
				"thread_ts": fuzzTS, "channel": "C1", "channel_type": "channel"}})
		return b
	}
	for _, seed := range [][]byte{
		reply("U1", "2", "Ev1"),
		reply("U2", "1", "Ev2"),
		reply("U1", "other: something else entirely", "Ev3"),
		reply("U1", "9", "Ev4"),
		reply("U1", "<@UBOT> OAuth 2.0", "Ev5"),
		reply("U1", "1,2", "Ev6"),
		reply("U1", "", ""),
		[]byte(`{"type":"url_verification","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","token":"x"}`),
		[]byte(`{"type":"event_callback","event_id":"Ev7","event":{"type":"message","subtype":"bot_message","bot_id":"B1","text":"1","ts":"1.2","thread_ts":"QTS","channel":"C1"}}`),
		[]byte(`{"type":"event_callback","event_id":"Ev8","event":{"type":"app_mention","user":"U1","text":"hi","ts":"1.2","channel":"C1"}}`),
		[]byte(`{"type":"event_callback","event_id":"Ev9","event":"not an object"}`),
		[]byte(`[]`),
		[]byte(`{`),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		h.run(t, "/slack/events", body, "application/json")
	})
}
