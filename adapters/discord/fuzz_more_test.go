package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/askbridge/askbridge/adapters/discord/fakediscord"
	"github.com/askbridge/askbridge/domain"
)

// Placeholders in fuzz inputs, replaced before signing by the pending
// question's id and its copy's message id.
const (
	fuzzQID = "QID"
	fuzzMsg = "QMSG"
)

type interactionFuzz struct {
	fake    *fakediscord.Server
	store   lifecycle.Store
	q       *domain.Question
	msg     string // the copy of q
	scratch string // a message to check responses about other messages on
	asked   int
}

// replica is one bridge replica for one input, with its adapter's log.
func (h *interactionFuzz) replica(t *testing.T) (*lifecycle.Router, *Adapter, *lockedBuffer) {
	logs := &lockedBuffer{}
	router := lifecycle.NewRouter(lifecycle.RouterConfig{Store: h.store, PostTimeout: 5 * time.Second, PauseWait: time.Second})
	ad, err := New(Config{BotToken: h.fake.BotToken, ApplicationID: h.fake.AppID, PublicKey: h.fake.PublicKey(),
		APIURL: h.fake.APIURL(), RetryBackoff: 10 * time.Millisecond, AckAfter: time.Second},
		router, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	router.AddChannel(ad)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ad.Close(ctx)
		_ = router.Close(ctx)
	})
	return router, ad, logs
}

func (h *interactionFuzz) ask(t *testing.T, router *lifecycle.Router) (*domain.Question, string) {
	h.asked++
	res, err := router.Ask(context.Background(), "ops", &domain.AskRequest{RunID: fmt.Sprintf("fuzz-%d", h.asked),
		AgentID: "deploy-bot", Questions: []domain.Item{authItem()},
		Targets:    []domain.Target{{Platform: "discord", Channel: "1000"}},
		Responders: &domain.Responders{Users: []string{"discord:" + alice.ID}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	tg := res.Question.Targets[0]
	if tg.MessageTS == "" {
		t.Fatalf("the question was not posted: %s", tg.Error)
	}
	return res.Question, tg.MessageTS
}

func (h *interactionFuzz) state(t *testing.T) (rec []byte, events int, msg fakediscord.Message) {
	q, err := h.store.Get(context.Background(), "ops", h.q.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ = json.Marshal(q)
	evs, err := h.store.Events(context.Background(), "ops", "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	return rec, len(evs), *h.fake.Message(h.msg)
}

// FuzzInteractionsHandler: whatever a signed POST /discord/interactions
// carries, the handler never panics (not even in its background work) or
// answers 5xx, answers only with responses Discord accepts, changes
// nothing unless the input names the pending question, and then only as
// the responder, with a complete answer and the copy finished.
func FuzzInteractionsHandler(f *testing.F) {
	h := &interactionFuzz{fake: fakediscord.New(f), store: newTestStore(f)}
	click := func(user fakediscord.User, customID string, extra map[string]any) []byte {
		in := map[string]any{"id": "1200000000000000001", "application_id": h.fake.AppID, "type": 3, "token": "itoken-fuzz",
			"version": 1, "guild_id": "900", "channel_id": "1000",
			"data":    map[string]any{"custom_id": customID, "component_type": 2},
			"message": map[string]any{"id": fuzzMsg, "channel_id": "1000"},
			"member":  map[string]any{"user": map[string]any{"id": user.ID, "username": user.Name}, "roles": user.Roles}}
		for k, v := range extra {
			in[k] = v
		}
		b, _ := json.Marshal(in)
		return b
	}
	for _, seed := range [][]byte{
		click(alice, "ab:o:QID:0:0", nil),
		click(bob, "ab:o:QID:0:1", nil),
		click(alice, "ab:d:QID", nil),
		click(alice, "ab:x:QID:0", nil),
		click(alice, "ab:o:QID:0:7", nil),
		click(alice, "ab:o:QID:9:0", nil),
		click(alice, "ab:u:QID", nil),
		click(alice, "ab:o:QID:0:0", map[string]any{"member": nil, "user": map[string]any{"id": alice.ID, "username": "alice"}}),
		click(alice, "ab:s:QID:0", map[string]any{"data": map[string]any{"custom_id": "ab:s:QID:0", "component_type": 3, "values": []string{"0", "other"}}}),
		click(alice, "ab:m:QID:0", map[string]any{"type": 5, "data": map[string]any{"custom_id": "ab:m:QID:0", "components": []any{
			map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": "text", "value": "my own answer"}}}}}}),
		click(alice, "ab:m:QID:0", map[string]any{"type": 5, "data": map[string]any{"custom_id": "ab:m:QID:0", "components": []any{
			map[string]any{"type": 18, "component": map[string]any{"type": 4, "custom_id": "text", "value": strings.Repeat("é", 4100)}}}}}),
		click(alice, "ab:o:unknown-question:0:0", nil),
		click(alice, "", map[string]any{"type": 2, "data": map[string]any{"name": "ask", "type": 1}}),
		[]byte(`{"id":"1","application_id":"424242","type":1,"token":"t","version":1}`),
		[]byte(`{"type":3}`),
		[]byte(`{"type":"3"}`),
		[]byte(`null`),
		[]byte(``),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		router, ad, logs := h.replica(t)
		if h.scratch == "" {
			_, h.scratch = h.ask(t, router)
		}
		if h.q == nil {
			h.q, h.msg = h.ask(t, router)
		} else if q, err := h.store.Get(context.Background(), "ops", h.q.ID); err != nil || q.Status != domain.StatusPending {
			h.q, h.msg = h.ask(t, router)
		}
		body = bytes.ReplaceAll(body, []byte(fuzzQID), []byte(h.q.ID))
		body = bytes.ReplaceAll(body, []byte(fuzzMsg), []byte(h.msg))
		rec0, ev0, msg0 := h.state(t)
		violations := len(h.fake.Violations())

		sig, stamp := h.fake.Sign(body, time.Now())
		req := httptest.NewRequest(http.MethodPost, "/discord/interactions", bytes.NewReader(body))
		req.Header.Set("X-Signature-Ed25519", sig)
		req.Header.Set("X-Signature-Timestamp", stamp)
		w := httptest.NewRecorder()
		ad.InteractionsHandler().ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("HTTP %d for %q: %s", w.Code, body, w.Body)
		}
		var in inbound
		_ = json.Unmarshal(body, &in)
		named := bytes.Contains(body, []byte(h.q.ID))
		if w.Code == http.StatusOK {
			var resp fakediscord.Response
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatalf("the response is not JSON: %q", w.Body)
			}
			switch {
			case resp.Type == 1:
				if in.Type != typePing {
					t.Fatalf("PONG to a type %d interaction", in.Type)
				}
			case slices.Contains([]int{4, 6, 7, 9}, resp.Type):
				// Discord applies it to the clicked message: ours, or another one.
				target := h.scratch
				if in.Message != nil && in.Message.ID == h.msg {
					target = h.msg
				}
				m := h.fake.Message(target)
				_, tok, _ := h.fake.Interaction(alice, m, 3, map[string]any{})
				h.fake.Apply(tok, &resp)
			default:
				t.Fatalf("response type %d for %q", resp.Type, body)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := ad.Close(ctx); err != nil {
			t.Fatalf("the adapter's work did not end: %v", err)
		}
		if err := router.Flush(ctx); err != nil {
			t.Fatalf("the router's work did not end: %v", err)
		}
		if v := h.fake.Violations(); len(v) > violations {
			t.Fatalf("Discord would refuse what the adapter sent for %q: %s", body, strings.Join(v[violations:], "; "))
		}
		if strings.Contains(logs.String(), "panicked") {
			t.Fatalf("the handler panicked for %q:\n%s", body, logs)
		}
		rec1, ev1, msg1 := h.state(t)
		if w.Code >= 400 || !named {
			if !bytes.Equal(rec0, rec1) || ev0 != ev1 || !reflect.DeepEqual(msg0, msg1) {
				t.Fatalf("HTTP %d, question named: %v, yet the state changed for %q:\nrecord %s\n→ %s", w.Code, named, body, rec0, rec1)
			}
			return
		}
		var q domain.Question
		if err := json.Unmarshal(rec1, &q); err != nil {
			t.Fatal(err)
		}
		if q.Status == domain.StatusPending {
			if msg1.Content != msg0.Content {
				t.Fatalf("still pending, yet the copy now says %q for %q", msg1.Content, body)
			}
			return
		}
		if q.RespondedBy == nil || q.RespondedBy.Platform != "discord" || q.RespondedBy.ID != alice.ID {
			t.Fatalf("question %s by %+v, who is not a responder, for %q", q.Status, q.RespondedBy, body)
		}
		if q.Status == domain.StatusAnswered {
			for _, it := range q.Questions {
				if len(q.Selections[it.Question]) == 0 || slices.Contains(q.Selections[it.Question], "") {
					t.Fatalf("incomplete answer %v for %q", q.Selections, body)
				}
			}
		}
		if msg1.Edits == 0 || !strings.Contains(msg1.Content, "by "+q.RespondedBy.String()) {
			t.Fatalf("the copy was not finished (edits %d, content %q) for %q", msg1.Edits, msg1.Content, body)
		}
		for _, row := range msg1.Components {
			for _, c := range row.Components {
				if !c.Disabled {
					t.Fatalf("the finished copy still has a live %q for %q", c.Label, body)
				}
			}
		}
	})
}
